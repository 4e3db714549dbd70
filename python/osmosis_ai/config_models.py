"""The typed eval, training and benchmark configs: pydantic models of what the Rust core has fully checked.

:mod:`osmosis_ai.config` builds them from the core's report; the submit payloads are built here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "BenchmarkConfig",
    "CheckpointsSection",
    "ConfigKind",
    "EvalConfig",
    "EvaluationSection",
    "ExperimentSection",
    "SamplingSection",
    "TrainingConfig",
    "TrainingSection",
]

ConfigKind = Literal["eval", "training", "benchmark"]
Number = int | float


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def payload(self) -> dict[str, Any]:
        """The section as sent to the platform: keys that were not set are left out."""
        return self.model_dump(exclude_none=True)


class ExperimentSection(_Section):
    """``[experiment]``: what to run (both kinds)."""

    rollout: str
    entrypoint: str
    model_path: str
    dataset: str
    branch: str | None = None
    commit_sha: str | None = None


class EvaluationSection(_Section):
    """``[evaluation]`` (eval configs). Unset keys use the platform's defaults."""

    limit: int | None = None
    n: int | None = None
    batch_size: int | None = None
    pass_threshold: Number | None = None
    agent_workflow_timeout_s: Number | None = None
    grader_timeout_s: Number | None = None


class TrainingSection(_Section):
    """``[training]`` (training configs)."""

    lr: Number | None = None
    total_epochs: int | None = None
    n_samples_per_prompt: int | None = None
    rollout_batch_size: int | None = None
    max_prompt_length: int | None = None
    max_response_length: int | None = None
    agent_workflow_timeout_s: Number | None = None
    grader_timeout_s: Number | None = None


class SamplingSection(_Section):
    """``[sampling]`` (training configs)."""

    rollout_temperature: Number | None = None
    rollout_top_p: Number | None = None


class CheckpointsSection(_Section):
    """``[checkpoints]`` (training configs)."""

    eval_interval: int | None = None
    checkpoint_save_freq: int | None = None


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path
    experiment: ExperimentSection
    advanced: dict[str, Any] = {}
    env: dict[str, str] = {}
    secrets: list[str] = []
    # Where each checked value sits (`"experiment.rollout" -> (line, column)`), for workspace errors.
    positions: dict[str, tuple[int, int]] = {}

    @property
    def experiment_config(self) -> dict[str, Any]:
        """``[experiment]`` without unset keys (established attribute name)."""
        return self.experiment.payload()

    @property
    def advanced_config(self) -> dict[str, Any]:
        """``[advanced]``, passed through verbatim (established attribute name)."""
        return dict(self.advanced)

    def where(self, key: str) -> str:
        """``path:line:column`` of a checked value (just the path when unknown).

        Example:
            >>> config.where("experiment.rollout")  # doctest: +SKIP
            'configs/eval/demo.toml:2:11'
        """
        line_col = self.positions.get(key)
        return f"{self.path}:{line_col[0]}:{line_col[1]}" if line_col else str(self.path)

    def _common_payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if self.advanced:
            body["advanced_config"] = dict(self.advanced)
        if self.env:
            body["env_config"] = dict(self.env)
        return body


class EvalConfig(_Config):
    """A validated ``configs/eval/*.toml``.

    Example:
        >>> config = load_eval_config("configs/eval/demo.toml")  # doctest: +SKIP
        >>> config.experiment.rollout  # doctest: +SKIP
        'demo'
    """

    kind: Literal["eval"] = "eval"
    evaluation: EvaluationSection = EvaluationSection()

    @property
    def evaluation_config(self) -> dict[str, Any]:
        """``[evaluation]`` without unset keys (established attribute name)."""
        return self.evaluation.payload()

    def request_body(self) -> dict[str, Any]:
        """The body of ``POST /api/cli/eval-runs`` without ``secrets`` (sections sent only when set)."""
        body: dict[str, Any] = {"experiment_config": self.experiment_config}
        if self.evaluation_config:
            body["evaluation_config"] = self.evaluation_config
        return {**body, **self._common_payload()}


class TrainingConfig(_Config):
    """A validated ``configs/training/*.toml``.

    Example:
        >>> config = load_training_config("configs/training/demo.toml")  # doctest: +SKIP
        >>> config.training.lr  # doctest: +SKIP
        1e-06
    """

    kind: Literal["training"] = "training"
    training: TrainingSection = TrainingSection()
    sampling: SamplingSection = SamplingSection()
    checkpoints: CheckpointsSection = CheckpointsSection()

    @property
    def training_config(self) -> dict[str, Any]:
        """``[training]`` without unset keys (established attribute name)."""
        return self.training.payload()

    @property
    def sampling_config(self) -> dict[str, Any]:
        """``[sampling]`` without unset keys (established attribute name)."""
        return self.sampling.payload()

    @property
    def checkpoints_config(self) -> dict[str, Any]:
        """``[checkpoints]`` without unset keys (established attribute name)."""
        return self.checkpoints.payload()

    def request_body(self) -> dict[str, Any]:
        """The body of ``POST /api/cli/training-runs`` without the ``secrets`` part."""
        body: dict[str, Any] = {"experiment_config": self.experiment_config}
        for name in ("training_config", "sampling_config", "checkpoints_config"):
            section = getattr(self, name)
            if section:
                body[name] = section
        return {**body, **self._common_payload()}


class BenchmarkConfig(BaseModel):
    """A validated ``configs/benchmark/*.toml`` (``osmosis benchmark submit``).

    Example:
        >>> config = load_benchmark_config("configs/benchmark/tb.toml")  # doctest: +SKIP
        >>> config.benchmark  # doctest: +SKIP
        'terminal-bench'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["benchmark"] = "benchmark"
    path: Path
    experiment: dict[str, Any]
    tasks: dict[str, Any] = {}
    agents: list[dict[str, Any]]
    execution: dict[str, Any] = {}
    verifier: list[str] = []
    secrets: list[str] = []
    env: dict[str, str] = {}
    positions: dict[str, tuple[int, int]] = {}

    @property
    def benchmark(self) -> str:
        """The benchmark's key (``[experiment] benchmark``)."""
        return str(self.experiment["benchmark"])

    @property
    def required_secrets(self) -> list[str]:
        """Every secret the run reads: each agent's model and harness key, the judge's key, the verifier's
        and ``[secrets]``'s names, each once, in that order."""
        names = [a["model"]["api_key_secret"] for a in self.agents if "api_key_secret" in a["model"]]
        names += [a["harness_api_key_secret"] for a in self.agents if a.get("harness_api_key_secret")]
        if self.execution.get("judge_api_key_secret"):
            names.append(self.execution["judge_api_key_secret"])
        return list(dict.fromkeys([*names, *self.verifier, *self.secrets]))

    def request_body(self) -> dict[str, Any]:
        """The body of ``POST /api/cli/benchmark-runs`` without ``secrets`` (sections sent only when set)."""
        body: dict[str, Any] = {"experiment_config": dict(self.experiment), "agents": list(self.agents)}
        if self.tasks:
            body["tasks_config"] = dict(self.tasks)
        execution = dict(self.execution)
        if self.verifier:
            execution["verifier_secrets"] = list(self.verifier)
        if execution:
            body["execution_config"] = execution
        if self.env:
            body["env_config"] = dict(self.env)
        return body
