"""The workspace contract: where configs live, the rollout directory, and what its entrypoint exposes.

A workspace is a directory holding ``rollouts/``, ``configs/eval/``, ``configs/training/`` and ``data/``
(the established layout). A config at ``<ws>/configs/<kind>/...`` names a rollout directory
``<ws>/rollouts/<rollout>/`` and an entrypoint inside it; the platform imports that entrypoint and uses the
``AgentWorkflow`` and ``Grader`` (or legacy ``RolloutAgentLoop``) classes it exposes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from osmosis_ai.config import ConfigKind, EvalConfig, TrainingConfig
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
ENTRYPOINT_TIMEOUT_S = 60.0


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


def check_rollout(root: Path, config: EvalConfig | TrainingConfig) -> tuple[Path, Path]:
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
class EntrypointReport:
    """What importing an entrypoint showed.

    Attributes:
        ok: The module imported (or the check was skipped, see ``warning``).
        error: Why it is not usable (the import failed), when not ``ok``.
        warning: Set when the check was skipped because this environment lacks a module the entrypoint
            imports (the platform installs the rollout's own dependencies).
    """

    ok: bool
    error: str | None = None
    warning: str | None = None


# Runs in a child interpreter so user code never enters this process (its module-level side effects,
# sys.path and sys.modules stay there). As in the established CLI, importing is the whole check: a backend
# validates itself at import time, and nothing scans the module for AgentWorkflow/Grader classes.
_PROBE = r"""
import importlib, importlib.util, json, sys, traceback, types
from pathlib import Path

rollout_dir, entrypoint, out_file = sys.argv[1], sys.argv[2], sys.argv[3]
result = {"imported": False}


def unmet_requirements():
    # The rollout's own [project].dependencies, checked against this interpreter (as the established CLI
    # does): when some are missing, importing would fail for reasons the platform does not share.
    path = Path(rollout_dir) / "pyproject.toml"
    if not path.is_file():
        return []
    try:
        try:
            import tomllib
        except ModuleNotFoundError:
            import tomli as tomllib
        deps = tomllib.loads(path.read_text(encoding="utf-8"))["project"]["dependencies"]
    except Exception:
        return []  # a malformed or dependency-less pyproject is the platform's to judge
    try:
        from packaging.requirements import Requirement
    except ModuleNotFoundError:
        Requirement = None
    from importlib import metadata
    import re
    problems = []
    for spec in deps if isinstance(deps, list) else []:
        if not isinstance(spec, str):
            continue
        req = None
        if Requirement is not None:
            try:
                req = Requirement(spec)
            except Exception:
                continue
            if req.url or (req.marker is not None and not req.marker.evaluate()):
                continue
            name = req.name
        else:
            match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
            if match is None or "@" in spec or ";" in spec:
                continue
            name = match.group(1)
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name} is not installed")
            continue
        if req is not None and req.specifier and not req.specifier.contains(version, prereleases=True):
            problems.append(f"{name} {version} does not satisfy {req.specifier}")
    return problems


def import_entrypoint():
    sys.path.insert(0, rollout_dir)
    package = types.ModuleType("_osmosis_rollout")
    package.__path__ = [rollout_dir]
    sys.modules["_osmosis_rollout"] = package
    parts = Path(entrypoint).with_suffix("").parts
    for i in range(1, len(parts)):
        importlib.import_module("_osmosis_rollout." + ".".join(parts[:i]))
    name = "_osmosis_rollout." + ".".join(parts)
    spec = importlib.util.spec_from_file_location(name, str(Path(rollout_dir) / entrypoint))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


unmet = unmet_requirements()
if unmet:
    result["unmet"] = unmet
else:
    try:
        import_entrypoint()
    except ModuleNotFoundError as exc:
        result["missing_module"] = exc.name
        result["error"] = f"{type(exc).__name__}: {exc}"
    except BaseException as exc:  # includes SystemExit raised by user code at import time
        frames = traceback.extract_tb(exc.__traceback__)
        user = [f for f in frames if f.filename.startswith(rollout_dir)]
        where = f" ({Path(user[-1].filename).name}:{user[-1].lineno})" if user else ""
        result["error"] = f"{type(exc).__name__}: {exc}{where}"
    else:
        result["imported"] = True
with open(out_file, "w", encoding="utf-8") as fh:
    json.dump(result, fh)
"""


def inspect_entrypoint(
    rollout_dir: Path, entrypoint: str, *, timeout: float = ENTRYPOINT_TIMEOUT_S
) -> EntrypointReport:
    """Imports a rollout entrypoint in a child Python, as the established submit preflight does.

    A module the entrypoint imports but this environment lacks skips the check with a warning.

    Example:
        >>> inspect_entrypoint(Path("rollouts/demo"), "main.py").ok  # doctest: +SKIP
        True
    """
    label = f"rollouts/{rollout_dir.name}/{entrypoint}"
    with tempfile.TemporaryDirectory(prefix="osmosis-probe-") as tmp:
        out_file = Path(tmp) / "result.json"
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _PROBE, str(rollout_dir), entrypoint, str(out_file)],
                cwd=rollout_dir,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return EntrypointReport(ok=False, error=f"importing {label} did not finish within {timeout:g} s")
        if not out_file.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            detail = " | ".join(tail) or f"exit status {proc.returncode}"
            return EntrypointReport(ok=False, error=f"importing {label} ended the interpreter: {detail}")
        result = json.loads(out_file.read_text(encoding="utf-8"))
    if not result["imported"]:
        if result.get("unmet"):
            warning = (
                f"skipped the import check of {label}: this environment does not satisfy the rollout's "
                f"dependencies ({'; '.join(result['unmet'])}); the platform checks it after installing them"
            )
            return EntrypointReport(ok=True, warning=warning)
        if result.get("missing_module"):
            warning = (
                f"skipped the import check of {label}: this environment lacks module "
                f"'{result['missing_module']}' ({result['error']}); the platform checks it after installing "
                "the rollout's dependencies"
            )
            return EntrypointReport(ok=True, warning=warning)
        return EntrypointReport(ok=False, error=f"importing {label} failed: {result['error']}")
    return EntrypointReport(ok=True)


@dataclass
class WorkspaceCheck:
    """The workspace half of validating one config: problems (each a full message) and warnings."""

    root: Path | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_workspace(
    config: EvalConfig | TrainingConfig,
    *,
    import_entrypoint: bool = True,
    root: Path | None = None,
    probe_cache: dict[tuple[Path, str], EntrypointReport] | None = None,
) -> WorkspaceCheck:
    """Checks a validated config against its workspace: layout, rollout directory, entrypoint.

    Args:
        config: A config loaded from ``<ws>/configs/<kind>/``.
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
