"""Validating 1,000 config files: the Rust core (plus model building) vs a pydantic-only validator.

The baseline is what a pure-Python implementation of the same rules looks like: ``tomllib`` to parse,
pydantic v2 models (strict types, patterns, bounds, ``extra="forbid"``) to check. It reports field paths but
no line numbers; ours reports line and column too. Both must agree on which files are valid.

Run with ``make bench`` (builds the release core first).
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, model_validator

from benchutil import scaled
from osmosis_ai import _core
from osmosis_ai.config import validate_files

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if _core.build_profile() != "release":
    pytest.exit("benches need a release build of the core: run `make bench` (or `make build-release`)", 1)

FILES = scaled(1000, 200)
INVALID_EVERY = 10

# --- the pydantic-only baseline ---------------------------------------------------------------------------

ENV_NAME = r"^[A-Z_][A-Z0-9_]*$"
SECRET_NAME = r"^[A-Z][A-Z0-9_]*$"
PosInt = Annotated[StrictInt, Field(ge=1)]
PosNum = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Text = Annotated[StrictStr, Field(min_length=1, pattern=r"\S")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Experiment(_Strict):
    rollout: Annotated[StrictStr, Field(pattern=r"^[^/\\]+$")]
    entrypoint: Annotated[StrictStr, Field(pattern=r"\.py$")]
    model_path: Text
    dataset: Text
    branch: Annotated[StrictStr, Field(pattern=r"^\S+$")] | None = None
    commit_sha: Annotated[StrictStr, Field(pattern=r"^[0-9a-fA-F]{7,40}$")] | None = None

    @model_validator(mode="after")
    def _checks(self) -> Experiment:
        if self.branch is not None and self.commit_sha is not None:
            raise ValueError("provide either branch or commit_sha, not both")
        if self.rollout.strip() in ("", ".", ".."):
            raise ValueError("not a valid rollout name")
        if self.entrypoint.startswith(("/", "\\")):
            raise ValueError("entrypoint must be relative")
        depth = 0
        for part in re.split(r"[/\\]", self.entrypoint):
            depth += -1 if part == ".." else 0 if part in ("", ".") else 1
            if depth < 0:
                raise ValueError("entrypoint climbs out of the rollout")
        return self


class Evaluation(_Strict):
    limit: PosInt | None = None
    n: PosInt | None = None
    batch_size: PosInt | None = None
    pass_threshold: Annotated[float, Field(allow_inf_nan=False)] | None = None
    agent_workflow_timeout_s: PosNum | None = None
    grader_timeout_s: PosNum | None = None


class Training(_Strict):
    lr: PosNum | None = None
    total_epochs: PosInt | None = None
    n_samples_per_prompt: PosInt | None = None
    rollout_batch_size: PosInt | None = None
    max_prompt_length: PosInt | None = None
    max_response_length: PosInt | None = None
    agent_workflow_timeout_s: PosNum | None = None
    grader_timeout_s: PosNum | None = None


class Sampling(_Strict):
    rollout_temperature: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    rollout_top_p: Annotated[float, Field(gt=0, le=1)] | None = None


class Checkpoints(_Strict):
    eval_interval: PosInt | None = None
    checkpoint_save_freq: PosInt | None = None


class Secrets(_Strict):
    required: list[Annotated[StrictStr, Field(pattern=SECRET_NAME)]]

    @model_validator(mode="after")
    def _unique(self) -> Secrets:
        if len(set(self.required)) != len(self.required):
            raise ValueError("duplicate secret names")
        return self


class _File(_Strict):
    experiment: Experiment
    advanced: dict[str, Any] = {}
    env: dict[Annotated[str, Field(pattern=ENV_NAME)], StrictStr] = {}

    @model_validator(mode="after")
    def _env(self) -> _File:
        if any(name.startswith("_OSMOSIS_") for name in self.env):
            raise ValueError("reserved env name")
        secrets = getattr(self, "secrets", None)
        if secrets is not None and set(secrets.required) & set(self.env):
            raise ValueError("name in both [env] and [secrets]")
        return self


class EvalFile(_File):
    evaluation: Evaluation = Evaluation()
    secrets: Secrets


class TrainingFile(_File):
    training: Training = Training()
    sampling: Sampling = Sampling()
    checkpoints: Checkpoints = Checkpoints()
    secrets: Secrets | None = None


def baseline_validate(paths: list[Path]) -> list[bool]:
    results = []
    for path in paths:
        model = EvalFile if path.parent.name == "eval" else TrainingFile
        try:
            with path.open("rb") as fh:
                model.model_validate(tomllib.load(fh))
        except (ValidationError, tomllib.TOMLDecodeError):
            results.append(False)
        else:
            results.append(True)
    return results


# --- inputs ---------------------------------------------------------------------------------------------

EVAL = """# eval config {i}
[experiment]
rollout = "agent-{i}"
entrypoint = "main.py"
model_path = "openai/gpt-5-mini"
dataset = "dataset-{i}"
commit_sha = "{sha}"

[evaluation]
limit = {limit}
n = {n}
batch_size = 4
pass_threshold = 0.5
agent_workflow_timeout_s = 450
grader_timeout_s = 150.5

[advanced]
engine = "v2"
retries = {{ max = 3, backoff = [1, 2, 4] }}

[env]
LOG_LEVEL = "debug"
RUN_ID = "run-{i}"

[secrets]
required = ["OPENAI_API_KEY", "HF_TOKEN"]
"""

TRAINING = """# training config {i}
[experiment]
rollout = "agent-{i}"
entrypoint = "src/main.py"
model_path = "Qwen/Qwen3.6-35B-A3B"
dataset = "dataset-{i}"
branch = "feature/{i}"

[training]
lr = 1e-6
total_epochs = {n}
n_samples_per_prompt = 8
rollout_batch_size = 32
max_prompt_length = 8192
max_response_length = 4096

[sampling]
rollout_temperature = 0.7
rollout_top_p = 0.95

[checkpoints]
eval_interval = 10
checkpoint_save_freq = 20

[env]
WANDB_PROJECT = "demo-{i}"

[secrets]
required = ["WANDB_API_KEY"]
"""

BREAKS = [
    ("n = ", "n = 0\nx_n = "),
    ("rollout_top_p = 0.95", "rollout_top_p = 1.5"),
    ("[env]", "[env]\nbad-name = '1'"),
]


@pytest.fixture(scope="module")
def config_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("bench-ws")
    (root / "configs" / "eval").mkdir(parents=True)
    (root / "configs" / "training").mkdir(parents=True)
    rng = random.Random(8)
    paths = []
    for i in range(FILES):
        kind = "eval" if i % 2 == 0 else "training"
        template = EVAL if kind == "eval" else TRAINING
        text = template.format(
            i=i, sha=f"{rng.getrandbits(160):040x}", limit=rng.randint(1, 500), n=rng.randint(1, 8)
        )
        if i % INVALID_EVERY == 0:
            old, new = BREAKS[(i // INVALID_EVERY) % len(BREAKS)]
            text = text.replace(old, new, 1) if old in text else text + "\n[bogus]\n"
        path = root / "configs" / kind / f"c{i:04d}.toml"
        path.write_text(text)
        paths.append(path)
    return paths


def test_both_validators_agree(config_files: list[Path]) -> None:
    ours = [report.ok for report in validate_files(config_files)]
    assert ours == baseline_validate(config_files)
    assert 0 < ours.count(False) < len(ours)


@pytest.mark.benchmark(group="config-validate-1000-files")
def test_baseline_pydantic_only(benchmark: Any, config_files: list[Path]) -> None:
    results = benchmark(baseline_validate, config_files)
    assert len(results) == FILES


@pytest.mark.benchmark(group="config-validate-1000-files")
def test_ours_rust_core_and_models(benchmark: Any, config_files: list[Path]) -> None:
    reports = benchmark(validate_files, config_files)
    assert len(reports) == FILES


@pytest.mark.benchmark(group="config-validate-1000-files")
def test_ours_core_reports_only(benchmark: Any, config_files: list[Path]) -> None:
    # The same checks and positions, returned as plain data without building pydantic models (what a
    # caller that only needs the verdict and the issues pays).
    paths = [str(p) for p in config_files]
    kinds = ["eval" if p.parent.name == "eval" else "training" for p in config_files]
    reports = benchmark(_core.validate_config_files, paths, kinds)
    assert len(reports) == FILES
