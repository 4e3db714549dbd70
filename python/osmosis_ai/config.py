"""Eval and training configs (``configs/eval/*.toml``, ``configs/training/*.toml``).

The Rust core parses and checks a file (every section, key and value; all problems in one pass, each with
line and column); this module turns its plain-data report into pydantic models. It is the only module
that imports ``_core`` for configs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_ai import _core
from osmosis_ai.config_models import (
    BenchmarkConfig,
    CheckpointsSection,
    ConfigKind,
    EvalConfig,
    EvaluationSection,
    ExperimentSection,
    SamplingSection,
    TrainingConfig,
    TrainingSection,
)
from osmosis_ai.errors import ConfigValidationError

__all__ = [
    "BenchmarkConfig",
    "CheckpointsSection",
    "ConfigIssue",
    "ConfigKind",
    "ConfigReport",
    "EvalConfig",
    "EvaluationSection",
    "ExperimentSection",
    "RolloutTarget",
    "SamplingSection",
    "TrainingConfig",
    "TrainingSection",
    "infer_kind",
    "load_benchmark_config",
    "load_eval_config",
    "load_training_config",
    "rollout_target",
    "validate_config_text",
    "validate_files",
]


# Directory names under `configs/` per kind (the workspace layout of the established CLI).
KIND_DIRS: dict[str, ConfigKind] = {"eval": "eval", "training": "training"}


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a config file.

    ``str(issue)`` is ``path:line:column: key: message (did you mean 'x'?)``; ``line``/``column`` are
    1-based (0 when the problem has no place in the file, such as a file that cannot be read).
    """

    path: str
    line: int
    column: int
    key: str
    message: str
    suggestion: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:{self.column}" if self.line else self.path
        text = f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"
        return f"{text} (did you mean '{self.suggestion}'?)" if self.suggestion else text


@dataclass(frozen=True)
class ConfigReport:
    """The outcome of validating one file; ``config`` is set only when ``issues`` is empty."""

    path: str
    kind: ConfigKind | None
    issues: list[ConfigIssue]
    config: EvalConfig | TrainingConfig | BenchmarkConfig | None = None
    io_error: str | None = None
    # Where each value sits, also for an invalid file (see :func:`rollout_target`).
    positions: dict[str, tuple[int, int]] | None = None

    @property
    def ok(self) -> bool:
        return not self.issues


def _construct(
    kind: ConfigKind, data: dict[str, Any], path: str, positions: dict[str, Any]
) -> EvalConfig | TrainingConfig | BenchmarkConfig:
    """Builds the typed config from data the core has fully checked.

    Validation here cannot fail on data the core accepted; it is kept because pydantic-core builds the
    nested models faster than ``model_construct`` does, and it guards the two sides against drifting apart.
    """
    models: dict[str, type[EvalConfig] | type[TrainingConfig] | type[BenchmarkConfig]]
    models = {"eval": EvalConfig, "training": TrainingConfig, "benchmark": BenchmarkConfig}
    model = models[kind]
    return model.model_validate({**data, "path": path, "positions": positions})


def _build_report(raw: dict[str, Any], kind: ConfigKind) -> ConfigReport:
    path = raw["path"]
    if "io_error" in raw:
        message = f"cannot read the file: {raw['io_error']['message']}"
        issue = ConfigIssue(path=path, line=0, column=0, key="", message=message)
        return ConfigReport(path=path, kind=kind, issues=[issue], io_error=raw["io_error"]["kind"])
    issues = [ConfigIssue(path=path, **issue) for issue in raw["issues"]]
    config = None
    if not issues and raw.get("config") is not None:
        config = _construct(kind, raw["config"], path, raw.get("positions", {}))
    positions = {key: tuple(value) for key, value in raw.get("positions", {}).items()}
    return ConfigReport(
        path=path,
        kind=kind,
        issues=issues,
        config=config,
        positions=positions,
    )


@dataclass(frozen=True)
class _TargetExperiment:
    rollout: str
    entrypoint: str


@dataclass(frozen=True)
class RolloutTarget:
    """The rollout an invalid config names: enough for the workspace checks (``check_workspace``)."""

    path: Path
    kind: ConfigKind
    experiment: _TargetExperiment
    positions: dict[str, tuple[int, int]]

    def where(self, key: str) -> str:
        """``path:line:column`` of a value (just the path when unknown)."""
        line_col = self.positions.get(key)
        return f"{self.path}:{line_col[0]}:{line_col[1]}" if line_col else str(self.path)


def rollout_target(report: ConfigReport) -> RolloutTarget | None:
    """The rollout named by a config that has problems elsewhere, so one pass can report both.

    ``None`` when the file is valid (use ``report.config``), unreadable, or its ``experiment.rollout`` /
    ``experiment.entrypoint`` are themselves wrong, and on Python 3.10 (no ``tomllib``).

    Example:
        >>> target = rollout_target(validate_files(["configs/eval/demo.toml"])[0])  # doctest: +SKIP
        >>> target.experiment.rollout  # doctest: +SKIP
        'demo'
    """
    keys = ("experiment.rollout", "experiment.entrypoint")
    if report.config is not None or report.kind is None or report.io_error is not None:
        return None
    if any(issue.key in keys or issue.line == 0 for issue in report.issues):
        return None
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the next pass reports the workspace
        return None
    try:
        with open(report.path, "rb") as handle:
            experiment = tomllib.load(handle).get("experiment", {})
    except (OSError, ValueError):
        return None
    rollout, entrypoint = experiment.get("rollout"), experiment.get("entrypoint")
    if not isinstance(rollout, str) or not isinstance(entrypoint, str):
        return None
    return RolloutTarget(
        path=Path(report.path),
        kind=report.kind,
        experiment=_TargetExperiment(rollout, entrypoint),
        positions=dict(report.positions or {}),
    )


def infer_kind(path: str | os.PathLike[str]) -> ConfigKind | None:
    """The config kind a file's location implies: under ``configs/eval/`` or ``configs/training/``.

    Example:
        >>> infer_kind("ws/configs/training/demo.toml")
        'training'
    """
    # Plain string work (pathlib is slow for thousands of files). The path as given usually names
    # configs/<kind>/ already; only otherwise is it made absolute.
    text = os.fspath(path)
    for candidate in (text, os.path.abspath(text)):
        parts = candidate.replace(os.sep, "/").split("/")
        for i in range(len(parts) - 2, 0, -1):
            if parts[i - 1] == "configs" and parts[i] in KIND_DIRS:
                return KIND_DIRS[parts[i]]
    return None


def validate_config_text(text: str, kind: ConfigKind, path: str = "<string>") -> ConfigReport:
    """Validates config text without a file.

    Args:
        text: TOML text.
        kind: ``"eval"`` or ``"training"``.
        path: The label issues carry.

    Returns:
        The report: every issue, and the typed config when there are none.

    Example:
        >>> report = validate_config_text("[experiment]\\nrollout = 1\\n", "training")
        >>> str(report.issues[0])
        "<string>:1:1: experiment.entrypoint: missing required key 'entrypoint' in [experiment]"
    """
    return _build_report(_core.validate_config_text(text, path, kind), kind)


def validate_files(
    paths: Sequence[str | os.PathLike[str]], kind: ConfigKind | None = None
) -> list[ConfigReport]:
    """Validates many config files at once (the core reads and checks them with the GIL released).

    Args:
        paths: Config files.
        kind: Force one kind for all files; by default each file's kind comes from its location
            (``configs/eval/`` or ``configs/training/``).

    Returns:
        One report per path, in order. A file whose kind cannot be told gets an issue saying so.

    Example:
        >>> [r.ok for r in validate_files(["configs/eval/demo.toml"])]  # doctest: +SKIP
        [True]
    """
    reports: list[ConfigReport | None] = []
    todo: list[tuple[int, str, ConfigKind]] = []
    for i, path in enumerate(paths):
        file_kind = kind or infer_kind(path)
        if file_kind is None:
            message = (
                "cannot tell whether this is an eval or a training config: put it under configs/eval/ "
                "or configs/training/, or pass the kind explicitly (--kind eval|training)"
            )
            issue = ConfigIssue(path=os.fspath(path), line=0, column=0, key="", message=message)
            reports.append(ConfigReport(path=os.fspath(path), kind=None, issues=[issue]))
        else:
            reports.append(None)
            todo.append((i, os.fspath(path), file_kind))
    raw_reports = _core.validate_config_files([p for _, p, _ in todo], [k for _, _, k in todo])
    for (i, _, file_kind), raw in zip(todo, raw_reports, strict=True):
        reports[i] = _build_report(raw, file_kind)
    return [r for r in reports if r is not None]


def _load(path: str | os.PathLike[str], kind: ConfigKind) -> EvalConfig | TrainingConfig | BenchmarkConfig:
    raw = _core.validate_config_files([os.fspath(path)], [kind])[0]
    if "io_error" in raw:
        error_kind, message = raw["io_error"]["kind"], raw["io_error"]["message"]
        if error_kind == "not_found":
            raise FileNotFoundError(f"config file not found: {raw['path']}")
        if error_kind == "permission_denied":
            raise PermissionError(f"cannot read config file {raw['path']}: {message}")
        if error_kind == "is_a_directory":
            raise IsADirectoryError(f"config path is a directory, not a file: {raw['path']}")
        raise OSError(f"cannot read config file {raw['path']}: {message}")
    report = _build_report(raw, kind)
    if report.config is None:
        count = len(report.issues)
        lines = "\n".join(f"  {issue}" for issue in report.issues)
        message = f"Invalid {kind} config {report.path} ({count} problem{'s' * (count != 1)}):\n{lines}"
        raise ConfigValidationError(message, path=report.path, issues=report.issues)
    return report.config


def load_eval_config(path: str | os.PathLike[str]) -> EvalConfig:
    """Loads and validates an eval config.

    Args:
        path: The ``.toml`` file (usually ``configs/eval/<name>.toml``).

    Returns:
        The typed config.

    Raises:
        ConfigValidationError: Listing every problem as ``path:line:column: key: message``.
        FileNotFoundError: If the file does not exist (``OSError`` for other read failures).

    Example:
        >>> config = load_eval_config("configs/eval/demo.toml")  # doctest: +SKIP
        >>> config.secrets  # doctest: +SKIP
        ['OPENAI_API_KEY']
    """
    config = _load(path, "eval")
    assert isinstance(config, EvalConfig)
    return config


def load_training_config(path: str | os.PathLike[str]) -> TrainingConfig:
    """Loads and validates a training config.

    Args:
        path: The ``.toml`` file (usually ``configs/training/<name>.toml``).

    Returns:
        The typed config.

    Raises:
        ConfigValidationError: Listing every problem as ``path:line:column: key: message``.
        FileNotFoundError: If the file does not exist (``OSError`` for other read failures).

    Example:
        >>> config = load_training_config("configs/training/demo.toml")  # doctest: +SKIP
        >>> config.sampling.rollout_top_p  # doctest: +SKIP
        1.0
    """
    config = _load(path, "training")
    assert isinstance(config, TrainingConfig)
    return config


def load_benchmark_config(path: str | os.PathLike[str]) -> BenchmarkConfig:
    """Loads and validates a benchmark config (``osmosis benchmark submit``).

    Args:
        path: The ``.toml`` file (usually ``configs/benchmark/<name>.toml``).

    Raises:
        ConfigValidationError: Listing every problem as ``path:line:column: key: message``.
        FileNotFoundError: If the file does not exist (``OSError`` for other read failures).

    Example:
        >>> load_benchmark_config("configs/benchmark/tb.toml").required_secrets  # doctest: +SKIP
        ['OPENAI_API_KEY']
    """
    config = _load(path, "benchmark")
    assert isinstance(config, BenchmarkConfig)
    return config
