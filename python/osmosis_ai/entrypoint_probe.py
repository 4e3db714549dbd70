"""Checking a rollout entrypoint by importing it in a child process, as ``eval run`` will import it.

``config validate`` and ``eval submit``'s check call :func:`inspect_entrypoint`, which runs
``python -m osmosis_ai.entrypoint_probe ROLLOUT_DIR ENTRYPOINT OUT_FILE``: the child imports the entrypoint
with the one importer (package semantics, the import deadline) and reports, in ``OUT_FILE``, whether it
imported and what it exposes (the one finder, :func:`osmosis_ai.eval.run_entry.find_exposed`). User code
never enters the checking process: its module-level side effects, ``sys.path`` and ``sys.modules`` stay in
the child.

As in the established CLI, importing is the whole check: a backend validates itself at import time. What
``eval run`` would find to run is reported too; when it finds nothing, that is a warning, not a failure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["EntrypointReport", "inspect_entrypoint", "unmet_requirements"]

# Time the child needs besides the import itself (an interpreter and this package starting, under load).
_START_MARGIN_S = 30.0


@dataclass
class EntrypointReport:
    """What importing an entrypoint showed.

    Attributes:
        ok: The module imported (or the check was skipped, see ``warning``).
        error: Why it is not usable (the import failed), when not ``ok``.
        warning: Set when the check was skipped because this environment lacks a module the entrypoint
            imports (the platform installs the rollout's own dependencies), or when ``eval run`` would find
            nothing to run in it.
        exposes: What ``eval run`` would run ("MyWorkflow + MyGrader"), when it found something.
    """

    ok: bool
    error: str | None = None
    warning: str | None = None
    exposes: str | None = None


def _requirement_name(spec: str) -> tuple[str, Any] | None:
    """``(distribution name, parsed requirement or None)`` of a dependency that applies here, else None."""
    try:
        from packaging.requirements import Requirement
    except ModuleNotFoundError:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if match is None or "@" in spec or ";" in spec:
            return None
        return match.group(1), None
    try:
        req = Requirement(spec)
    except Exception:
        return None
    if req.url or (req.marker is not None and not req.marker.evaluate()):
        return None
    return req.name, req


def unmet_requirements(rollout_dir: Path) -> list[str]:
    """The rollout's ``[project].dependencies`` this interpreter does not satisfy, as the established CLI
    checks them: when some are missing, importing would fail for reasons the platform does not share.

    Example:
        >>> unmet_requirements(Path("/nonexistent"))
        []
    """
    from importlib import metadata

    path = rollout_dir / "pyproject.toml"
    if not path.is_file():
        return []
    try:
        try:
            import tomllib
        except ModuleNotFoundError:  # pragma: no cover - Python 3.10
            import tomli as tomllib
        deps = tomllib.loads(path.read_text(encoding="utf-8"))["project"]["dependencies"]
    except Exception:
        return []  # a malformed or dependency-less pyproject is the platform's to judge
    problems = []
    for spec in deps if isinstance(deps, list) else []:
        parsed = _requirement_name(spec) if isinstance(spec, str) else None
        if parsed is None:
            continue
        name, req = parsed
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name} is not installed")
            continue
        if req is not None and req.specifier and not req.specifier.contains(version, prereleases=True):
            problems.append(f"{name} {version} does not satisfy {req.specifier}")
    return problems


def _failure(exc: BaseException, rollout_dir: str) -> dict[str, Any]:
    """The child's report of a failed import: the user's exception and line, or the deadline's message."""
    from osmosis_ai.import_deadline import ImportDeadlineError

    cause = exc.__cause__ or exc
    if isinstance(cause, ImportDeadlineError):
        return {"error": str(cause)}
    text = f"{type(cause).__name__}: {cause}"
    missing = cause.name if isinstance(cause, ModuleNotFoundError) else None
    if missing and not missing.startswith("_osmosis_rollout"):  # a dependency, not a file of the rollout
        return {"missing_module": missing, "error": text}
    user = [f for f in traceback.extract_tb(cause.__traceback__) if f.filename.startswith(rollout_dir)]
    where = f" ({Path(user[-1].filename).name}:{user[-1].lineno})" if user else ""
    return {"error": f"{text}{where}"}


def _probe(rollout_dir: str, entrypoint: str) -> dict[str, Any]:
    """Runs in the child: imports the entrypoint and finds what it exposes."""
    from osmosis_ai.errors import ConfigError
    from osmosis_ai.eval.run_entry import find_exposed, import_rollout_entrypoint

    root = Path(rollout_dir)
    try:
        module = import_rollout_entrypoint(root / entrypoint, root)
    except ConfigError as exc:
        return {"imported": False, **_failure(exc, rollout_dir)}
    exposed = find_exposed(module, root)
    problem = exposed.problem()
    if problem is not None:
        return {"imported": True, "nothing_to_run": problem}
    return {"imported": True, "exposes": exposed.choice()[1]}


def _report(result: dict[str, Any], label: str) -> EntrypointReport:
    if result.get("missing_module"):
        warning = (
            f"skipped the import check of {label}: this environment lacks module "
            f"'{result['missing_module']}' ({result['error']}); the platform checks it after installing "
            "the rollout's dependencies"
        )
        return EntrypointReport(ok=True, warning=warning)
    if not result["imported"]:
        return EntrypointReport(ok=False, error=f"importing {label} failed: {result['error']}")
    if result.get("nothing_to_run"):
        warning = f"{label} imports, but `osmosis eval run` could not run it ({result['nothing_to_run']})"
        return EntrypointReport(ok=True, warning=warning)
    return EntrypointReport(ok=True, exposes=result.get("exposes"))


def inspect_entrypoint(
    rollout_dir: Path, entrypoint: str, *, timeout: float | None = None
) -> EntrypointReport:
    """Imports a rollout entrypoint in a child Python, as the established submit preflight does.

    A module the entrypoint imports but this environment lacks skips the check with a warning.

    Args:
        rollout_dir: The rollout folder (the package the entrypoint belongs to).
        entrypoint: The entrypoint's path inside it.
        timeout: The import deadline in seconds; None reads ``OSMOSIS_IMPORT_TIMEOUT``, 0 means none.

    Raises:
        ImportInterrupted: Ctrl+C or SIGTERM arrived while the child imported (the child is stopped).

    Example:
        >>> inspect_entrypoint(Path("rollouts/demo"), "main.py").ok  # doctest: +SKIP
        True
    """
    from osmosis_ai.import_deadline import IMPORT_TIMEOUT_ENV, guarded, import_timeout

    label = f"rollouts/{rollout_dir.name}/{entrypoint}"
    unmet = unmet_requirements(rollout_dir)
    if unmet:
        warning = (
            f"skipped the import check of {label}: this environment does not satisfy the rollout's "
            f"dependencies ({'; '.join(unmet)}); the platform checks it after installing them"
        )
        return EntrypointReport(ok=True, warning=warning)
    deadline = import_timeout() if timeout is None else (timeout or None)
    with tempfile.TemporaryDirectory(prefix="osmosis-probe-") as tmp:
        out_file = Path(tmp) / "result.json"
        command = [sys.executable, "-m", __name__, str(rollout_dir), entrypoint, str(out_file)]
        env_deadline = {IMPORT_TIMEOUT_ENV: str(deadline or 0)}
        try:
            proc = guarded(
                lambda: subprocess.run(
                    command,
                    cwd=rollout_dir,
                    env={**os.environ, **env_deadline},
                    capture_output=True,
                    text=True,
                    timeout=deadline + _START_MARGIN_S if deadline else None,
                    check=False,
                ),
                label=label,
                seconds=0,  # the child keeps the deadline; here only Ctrl+C and SIGTERM are honoured
            )
        except subprocess.TimeoutExpired:  # the child could not even stop itself (stuck in C code)
            return EntrypointReport(ok=False, error=f"importing {label} did not finish within {deadline:g} s")
        if not out_file.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            detail = " | ".join(tail) or f"exit status {proc.returncode}"
            return EntrypointReport(ok=False, error=f"importing {label} ended the interpreter: {detail}")
        result = json.loads(out_file.read_text(encoding="utf-8"))
    return _report(result, label)


def main(argv: list[str]) -> int:
    """The child: ``ROLLOUT_DIR ENTRYPOINT OUT_FILE``; writes the report as JSON to ``OUT_FILE``."""
    rollout_dir, entrypoint, out_file = argv
    try:
        result = _probe(rollout_dir, entrypoint)
    except KeyboardInterrupt:  # the parent was interrupted too, and says so
        return 130
    Path(out_file).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
