"""Property tests: random valid configs pass and round-trip; any single rule-breaking mutation fails."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osmosis_ai.config import validate_config_text

Config = dict[str, dict[str, Any]]

SAFE_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20
).filter(lambda s: s.strip() != "")
# TOML integers are 64-bit signed (the spec requires an error beyond that).
I64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
POS_INT = st.integers(min_value=1, max_value=10**9)
# The config maxima (rust/src/config/schema.rs), the same as the CLI's options.
RUNS = st.integers(min_value=1, max_value=10_000)
TOKENS = st.integers(min_value=1, max_value=10_000_000)
WEEK = 7 * 24 * 3600
SECONDS = st.one_of(st.integers(min_value=1, max_value=WEEK), st.floats(min_value=1e-9, max_value=WEEK))
ENV_NAME = st.from_regex(r"\A[A-Z_][A-Z0-9_]{0,10}\Z").filter(lambda n: not n.startswith("_OSMOSIS_"))
SECRET_NAME = st.from_regex(r"\A[A-Z][A-Z0-9_]{0,10}\Z")


def render_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(render_value(v) for v in value) + "]"
    raise TypeError(value)


def render(config: Config) -> str:
    """TOML text of a config dict (sections of scalar/list values)."""
    parts = []
    for section, table in config.items():
        lines = [f"[{section}]"] + [f"{key} = {render_value(v)}" for key, v in table.items()]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


@st.composite
def experiments(draw: st.DrawFn) -> dict[str, Any]:
    experiment = {
        "rollout": draw(st.from_regex(r"\A[a-z][a-z0-9-]{0,15}\Z")),
        "entrypoint": draw(st.sampled_from(["main.py", "agent/run.py", "src/pkg/../x_1.py"])),
        "model_path": draw(SAFE_TEXT),
        "dataset": draw(SAFE_TEXT),
    }
    pin = draw(st.sampled_from(["none", "branch", "commit"]))
    if pin == "branch":
        experiment["branch"] = draw(st.from_regex(r"\A[A-Za-z0-9/_.-]{1,20}\Z"))
    elif pin == "commit":
        experiment["commit_sha"] = draw(st.from_regex(r"\A[0-9a-fA-F]{7,40}\Z"))
    return experiment


def optional_fields(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]]) -> dict[str, Any]:
    chosen = draw(st.lists(st.sampled_from(sorted(fields)), unique=True))
    return {name: draw(fields[name]) for name in chosen}


@st.composite
def env_and_secrets(draw: st.DrawFn, secrets_required: bool) -> Config:
    env = draw(st.dictionaries(ENV_NAME, SAFE_TEXT, max_size=4))
    names = draw(st.lists(SECRET_NAME.filter(lambda n: n not in env), unique=True, max_size=4))
    out: Config = {}
    if env:
        out["env"] = env
    if secrets_required or draw(st.booleans()):
        out["secrets"] = {"required": names}
    return out


@st.composite
def eval_configs(draw: st.DrawFn) -> Config:
    config: Config = {"experiment": draw(experiments())}
    evaluation = optional_fields(
        draw,
        {
            "limit": POS_INT,
            "n": RUNS,
            "batch_size": st.integers(min_value=1, max_value=1024),
            "pass_threshold": st.floats(allow_nan=False, allow_infinity=False),
            "agent_workflow_timeout_s": SECONDS,
            "grader_timeout_s": SECONDS,
        },
    )
    if evaluation or draw(st.booleans()):
        config["evaluation"] = evaluation
    return {**config, **draw(env_and_secrets(secrets_required=True))}


@st.composite
def training_configs(draw: st.DrawFn) -> Config:
    config: Config = {"experiment": draw(experiments())}
    sections = {
        "training": {
            "lr": st.floats(min_value=1e-9, max_value=10),
            "total_epochs": RUNS,
            "n_samples_per_prompt": RUNS,
            "rollout_batch_size": POS_INT,
            "max_prompt_length": TOKENS,
            "max_response_length": TOKENS,
            "agent_workflow_timeout_s": SECONDS,
            "grader_timeout_s": SECONDS,
        },
        "sampling": {
            "rollout_temperature": st.floats(min_value=0, max_value=2),
            "rollout_top_p": st.floats(min_value=1e-9, max_value=1.0),
        },
        "checkpoints": {"eval_interval": POS_INT, "checkpoint_save_freq": POS_INT},
    }
    for name, fields in sections.items():
        values = optional_fields(draw, fields)
        if values or name == "training" or draw(st.booleans()):  # [training] itself is required
            config[name] = values
    if draw(st.booleans()):
        config["advanced"] = draw(st.dictionaries(st.from_regex(r"\A[a-z_]{1,8}\Z"), I64, max_size=3))
    return {**config, **draw(env_and_secrets(secrets_required=False))}


def kind_configs() -> st.SearchStrategy[tuple[str, Config]]:
    return st.one_of(
        eval_configs().map(lambda c: ("eval", c)), training_configs().map(lambda c: ("training", c))
    )


PROPERTY_SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(kind_configs())
def test_random_valid_configs_pass_and_round_trip(case: tuple[str, Config]) -> None:
    kind, config = case
    report = validate_config_text(render(config), kind)  # type: ignore[arg-type]
    assert report.ok, [str(i) for i in report.issues]
    model = report.config
    assert model is not None
    assert model.experiment.payload() == config["experiment"]
    assert model.env == config.get("env", {})
    assert model.advanced == config.get("advanced", {})
    assert model.secrets == config.get("secrets", {}).get("required", [])
    for section in ("evaluation", "training", "sampling", "checkpoints"):
        if section in config:
            assert getattr(model, section).payload() == config[section]


def _first_section_with(config: Config, wanted: set[str]) -> str | None:
    return next((s for s in config if s in wanted), None)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str, str]:
    """A valid config with exactly one rule broken: (kind, text, key prefix an issue must carry)."""
    kind, config = draw(kind_configs())
    config = json.loads(json.dumps(config))
    experiment = config["experiment"]
    choices = ["drop_required", "string_to_int", "unknown_key", "unknown_section", "bad_env", "bad_sha"]
    choices += ["bad_secret", "bad_count", "huge_count", "both_pins"]
    if kind == "training":
        choices += ["bad_top_p"]
    choice = draw(st.sampled_from(choices))
    key = ""
    if choice == "drop_required":
        field = draw(st.sampled_from(["rollout", "entrypoint", "model_path", "dataset"]))
        del experiment[field]
        key = f"experiment.{field}"
    elif choice == "string_to_int":
        field = draw(st.sampled_from(["rollout", "entrypoint", "model_path", "dataset"]))
        experiment[field] = draw(st.integers())
        key = f"experiment.{field}"
    elif choice == "unknown_key":
        section = draw(st.sampled_from([s for s in config if s not in ("advanced", "env")]))
        config[section]["zz_" + draw(st.text(string.ascii_lowercase, min_size=3, max_size=6))] = 1
        key = f"{section}.zz_"
    elif choice == "unknown_section":
        config["zz_" + draw(st.text(string.ascii_lowercase, min_size=3, max_size=6))] = {}
        key = "zz_"
    elif choice == "bad_env":
        name = draw(st.sampled_from(["lower", "1ABC", "A-B", "_OSMOSIS_X"]))
        config.setdefault("env", {})[name] = "v"
        key = f"env.{name}"
    elif choice == "bad_sha":
        experiment.pop("branch", None)
        experiment["commit_sha"] = draw(st.sampled_from(["xyz1234", "abc", "a" * 41, ""]))
        key = "experiment.commit_sha"
    elif choice == "bad_secret":
        required = config.setdefault("secrets", {"required": []})["required"]
        bad = draw(st.sampled_from(["lower", "_LEAD", "9X", "A B"]))
        required.append(bad)
        key = "secrets.required["
    elif choice == "bad_count":
        section = "evaluation" if kind == "eval" else "training"
        field = "n" if kind == "eval" else "total_epochs"
        config.setdefault(section, {})[field] = draw(st.integers(max_value=0))
        key = f"{section}.{field}"
    elif choice == "huge_count":
        section = "evaluation" if kind == "eval" else "training"
        field = "n" if kind == "eval" else "total_epochs"
        config.setdefault(section, {})[field] = draw(st.integers(min_value=10_001, max_value=2**63 - 1))
        key = f"{section}.{field}"
    elif choice == "both_pins":
        experiment["branch"] = "main"
        experiment["commit_sha"] = "abcdef1"
        key = "experiment"
    elif choice == "bad_top_p":
        config.setdefault("sampling", {})["rollout_top_p"] = draw(
            st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0, exclude_min=True))
        )
        key = "sampling.rollout_top_p"
    # Keep section order stable so [experiment] stays first (dicts keep insertion order).
    return kind, render(config), key


@PROPERTY_SETTINGS
@given(mutated())
def test_any_single_mutation_fails_with_the_right_key(case: tuple[str, str, str]) -> None:
    kind, text, key = case
    report = validate_config_text(text, kind)  # type: ignore[arg-type]
    assert not report.ok, text
    assert any(issue.key.startswith(key) for issue in report.issues), (key, [str(i) for i in report.issues])
    for issue in report.issues:
        assert issue.line >= 1 and issue.column >= 1
