"""The workspace contract: where configs live, the rollout directory, and what its entrypoint exposes.

A workspace is a directory holding ``rollouts/``, ``configs/eval/``, ``configs/training/`` and ``data/``
(the established layout). A config at ``<ws>/configs/<kind>/...`` names a rollout directory
``<ws>/rollouts/<rollout>/`` and an entrypoint inside it; the platform imports that entrypoint and uses the
``AgentWorkflow`` and ``Grader`` (or legacy ``RolloutAgentLoop``) classes it exposes, which
:mod:`osmosis_ai.entrypoint_probe` checks in a child process.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from osmosis_ai.config import ConfigKind, EvalConfig, RolloutTarget, TrainingConfig
from osmosis_ai.entrypoint_probe import EntrypointReport, inspect_entrypoint
from osmosis_ai.errors import ConfigError

__all__ = [
    "REQUIRED_DIRS",
    "EntrypointReport",
    "check_config_location",
    "check_rollout",
    "find_workspace_root",
    "inspect_entrypoint",
    "missing_workspace_dirs",
    "resolve_config_path",
]

REQUIRED_DIRS = ("rollouts", "configs/training", "configs/eval", "data")
CONFIG_DIRS: dict[ConfigKind, str] = {
    "eval": "configs/eval",
    "training": "configs/training",
    "benchmark": "configs/benchmark",
}


def find_workspace_root(start: str | os.PathLike[str]) -> Path | None:
    """The nearest directory at or above ``start`` that holds both ``configs/`` and ``rollouts/``.

    Example:
        >>> find_workspace_root("/nonexistent/dir") is None
        True
    """
    here = Path(os.path.abspath(start))
    for candidate in (here, *here.parents):
        if (candidate / "configs").is_dir() and (candidate / "rollouts").is_dir():
            return candidate
    return None


def resolve_config_path(path: str | os.PathLike[str]) -> Path:
    """Resolves a config argument: relative to the current directory, else to the enclosing workspace.

    The established CLI resolves ``submit`` paths against the workspace root only and ``eval run`` paths
    against the current directory; accepting both makes the same argument work from anywhere inside it.

    Example:
        >>> resolve_config_path("/abs/configs/eval/x.toml").name
        'x.toml'
    """
    candidate = Path(path).expanduser()
    if candidate.is_absolute() or candidate.exists():
        return candidate.resolve()
    root = find_workspace_root(Path.cwd())
    if root is not None and (root / candidate).exists():
        return (root / candidate).resolve()
    return candidate.resolve()


def check_config_location(path: Path, kind: ConfigKind, command: str) -> Path:
    """Checks that ``path`` is a ``.toml`` file under ``<ws>/configs/<kind>/``; returns the workspace root.

    Raises:
        ConfigError: Naming the path and the directory it must live under.

    Example:
        >>> check_config_location(Path("/ws/configs/eval/a.toml"), "eval", "osmosis eval submit")
        PosixPath('/ws')
    """
    resolved = path.resolve()
    wanted = CONFIG_DIRS[kind]
    parts = resolved.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1] == "configs" and parts[i] == wanted.split("/")[1]:
            root = Path(*parts[: i - 1])
            if resolved.suffix != ".toml":
                raise ConfigError(f"The `{command}` config must be a .toml file under {wanted}/. Got: {path}")
            return root
    hint_root = find_workspace_root(resolved.parent) or find_workspace_root(Path.cwd())
    expected = f"{hint_root / wanted}/" if hint_root else f"<workspace>/{wanted}/"
    raise ConfigError(
        f"The `{command}` config must live under {wanted}/.\n  Got: {path}\n  Expected under: {expected}"
    )


def missing_workspace_dirs(root: Path) -> list[str]:
    """The required workspace directories that are missing under ``root`` (as ``name/``)."""
    return [f"{d}/" for d in REQUIRED_DIRS if not (root / d).is_dir()]


def check_rollout(root: Path, config: EvalConfig | TrainingConfig | RolloutTarget) -> tuple[Path, Path]:
    """Checks that the rollout directory and its entrypoint exist inside the workspace.

    Returns:
        ``(rollout_dir, entrypoint_file)``.

    Raises:
        ConfigError: Pointing at the config line (``path:line:column``) of the value to fix.
    """
    rollouts = (root / "rollouts").resolve()
    name, entrypoint = config.experiment.rollout, config.experiment.entrypoint
    rollout_dir = (rollouts / name).resolve()
    if rollout_dir.parent != rollouts:
        raise ConfigError(
            f"{config.where('experiment.rollout')}: experiment.rollout: rollouts/{name} resolves outside "
            f"{rollouts}/ (a symlink?)"
        )
    if not rollout_dir.is_dir():
        found = sorted(p.name for p in rollouts.iterdir() if p.is_dir()) if rollouts.is_dir() else []
        listing = ", ".join(found) if found else "none"
        raise ConfigError(
            f"{config.where('experiment.rollout')}: experiment.rollout: rollout directory rollouts/{name}/ "
            f"does not exist in {root} (rollouts found: {listing})"
        )
    entry_file = (rollout_dir / entrypoint).resolve()
    if not entry_file.is_relative_to(rollout_dir):
        raise ConfigError(
            f"{config.where('experiment.entrypoint')}: experiment.entrypoint: {entrypoint} resolves outside "
            f"rollouts/{name}/"
        )
    if not entry_file.is_file():
        raise ConfigError(
            f"{config.where('experiment.entrypoint')}: experiment.entrypoint: entrypoint file "
            f"rollouts/{name}/{entrypoint} does not exist"
        )
    return rollout_dir, entry_file


@dataclass
class WorkspaceCheck:
    """The workspace half of validating one config: problems (each a full message) and warnings."""

    root: Path | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_workspace(
    config: EvalConfig | TrainingConfig | RolloutTarget,
    *,
    import_entrypoint: bool = True,
    root: Path | None = None,
    probe_cache: dict[tuple[Path, str], EntrypointReport] | None = None,
) -> WorkspaceCheck:
    """Checks a validated config against its workspace: layout, rollout directory, entrypoint.

    Args:
        config: A config loaded from ``<ws>/configs/<kind>/``, or the rollout an invalid one names
            (:func:`osmosis_ai.config.rollout_target`).
        import_entrypoint: Import the entrypoint (in a child process) to see what it exposes.
        root: The workspace root; by default the directory above the config's ``configs/``.
        probe_cache: Reuses entrypoint imports across configs of one run (eval and training configs
            usually share a rollout).

    Returns:
        Every problem found; an empty ``problems`` list means the workspace is ready.

    Example:
        >>> check = check_workspace(load_eval_config("configs/eval/demo.toml"))  # doctest: +SKIP
        >>> check.problems  # doctest: +SKIP
        []
    """
    check = WorkspaceCheck()
    if root is None:
        try:
            root = check_config_location(Path(config.path), config.kind, "osmosis config validate")
        except ConfigError:
            # Outside a workspace the file itself can still be checked; `submit` enforces the location.
            check.warnings.append(
                f"{config.path}: not under configs/{config.kind}/ of a workspace; skipped the rollout checks"
            )
            return check
    check.root = root
    missing = missing_workspace_dirs(root)
    if missing:
        listing = ", ".join(missing)
        check.problems.append(
            f"workspace {root} lacks required directories: {listing} (`osmosis init` creates them)"
        )
    try:
        rollout_dir, _ = check_rollout(root, config)
    except ConfigError as exc:
        check.problems.append(str(exc))
        return check
    if import_entrypoint:
        key = (rollout_dir, config.experiment.entrypoint)
        cached = probe_cache.get(key) if probe_cache is not None else None
        report = cached or inspect_entrypoint(rollout_dir, config.experiment.entrypoint)
        if probe_cache is not None:
            probe_cache[key] = report
        if report.warning:
            check.warnings.append(f"{config.where('experiment.entrypoint')}: {report.warning}")
        if report.error:
            check.problems.append(
                f"{config.where('experiment.entrypoint')}: experiment.entrypoint: {report.error}"
            )
    return check
