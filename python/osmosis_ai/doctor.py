"""`osmosis doctor`: what a workspace is missing, and the fixes that are safe to apply.

Checked: the required directories, the agent guide files (``AGENTS.md``, ``CLAUDE.md``,
``configs/AGENTS.md``), every config under ``configs/eval`` and ``configs/training`` (the same checks as
``osmosis config validate``), and the ``origin`` remote (best effort). It also reports the proxies and
certificate authorities every outbound connection uses (:func:`osmosis_ai.llm.network.network_settings`,
credentials masked). ``fix`` only adds: a ``.gitkeep``
in each missing directory and our own guide files where none exist. It never overwrites a file and
refuses any path that goes through a symlink.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.errors import WorkspaceError
from osmosis_ai.workspace_layout import REQUIRED_DIRS

__all__ = ["DoctorReport", "add_guides", "diagnose"]

_AGENTS = """# Working in this Osmosis workspace

- `rollouts/<name>/`: one rollout per directory. `main.py` defines an `AgentWorkflow` (runs one episode per
  dataset row through the rollout context's chat-completions URL) and a `Grader` (`ctx.set_reward(x)`).
- `configs/eval/<name>.toml`, `configs/training/<name>.toml`: what to run; check them with
  `osmosis config validate configs/eval/<name>.toml`.
- `data/`: datasets (JSONL/CSV/Parquet with `user_prompt`, `system_prompt`, `ground_truth`, or `metadata`).
- Run an evaluation locally: `osmosis eval run configs/eval/<name>.toml --dataset-file data/<file>`.
- New rollout: `osmosis rollout init <name>`. Workspace check: `osmosis doctor`.
"""
_CLAUDE = "See AGENTS.md for how this workspace is laid out and which commands check and run it.\n"
_CONFIGS_AGENTS = """# Configs

`eval/<name>.toml` and `training/<name>.toml` each need `[experiment]` (`rollout`, `entrypoint`,
`model_path`, `dataset`); eval configs also need `[secrets]` (`required = []` when none). Validate with
`osmosis config validate <file>`; `osmosis eval submit <file> --dry-run` shows what would be sent.
"""
GUIDES = {"AGENTS.md": _AGENTS, "CLAUDE.md": _CLAUDE, "configs/AGENTS.md": _CONFIGS_AGENTS}


@dataclass
class DoctorReport:
    """What :func:`diagnose` found (and fixed)."""

    workspace_directory: Path
    git: dict[str, Any] | None
    missing: list[str]
    fixed: list[str] = field(default_factory=list)
    config_problems: list[str] = field(default_factory=list)
    network: dict[str, Any] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return not self.missing and not self.config_problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_directory": str(self.workspace_directory),
            "git": self.git,
            "required_paths": [f"{d}/" for d in REQUIRED_DIRS] + list(GUIDES),
            "missing": self.missing,
            "config_problems": self.config_problems,
            "valid": self.valid,
            "fixed": self.fixed,
            "network": self.network,
        }


def _missing(root: Path) -> list[str]:
    dirs = [f"{d}/" for d in REQUIRED_DIRS if not (root / d).is_dir()]
    return dirs + [name for name in GUIDES if not (root / name).exists()]


def add_guides(root: Path) -> list[str]:
    """Writes the agent guide files that do not exist yet (never overwrites one); returns those written."""
    written = []
    for name, text in GUIDES.items():
        target = root / name
        if target.exists() or target.is_symlink():
            continue
        _refuse_symlinks(root, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("x", encoding="utf-8") as fh:  # "x": never overwrite
            fh.write(text)
        written.append(name)
    return written


def _refuse_symlinks(root: Path, relative: str) -> None:
    current = root
    for part in Path(relative).parts:
        current = current / part
        if current.is_symlink():
            raise WorkspaceError(f"Refusing to fix {relative}: {current} is a symlink", code="CONFLICT")


def _git(root: Path) -> dict[str, Any] | None:
    from osmosis_ai.platform.workspace import origin_identity

    try:
        identity = origin_identity(root)
    except Exception as exc:  # best effort: a bad remote is a warning here, not a failure
        return {"identity": None, "warning": str(exc)}
    return None if identity is None else {"identity": identity.identity, "remote_url": identity.remote_url}


def _config_problems(root: Path) -> list[str]:
    from osmosis_ai.config import validate_files

    files = sorted([*root.glob("configs/eval/*.toml"), *root.glob("configs/training/*.toml")])
    if not files:
        return []
    return [str(issue) for report in validate_files(files) for issue in report.issues]


def diagnose(path: Path, *, fix: bool = False) -> DoctorReport:
    """Checks the workspace containing ``path`` (its Git top level, else ``path``); with ``fix``, adds what is safe.

    Example:
        >>> diagnose(Path(".")).valid  # doctest: +SKIP
        True
    """
    from osmosis_ai.platform.workspace import git_toplevel

    if not path.exists():
        raise WorkspaceError(f"{path}: no such directory")
    root = git_toplevel(path.resolve()) or path.resolve()
    report = DoctorReport(root, _git(root), _missing(root))
    if fix and report.missing:
        for item in report.missing:
            _refuse_symlinks(root, item.rstrip("/"))
        for item in report.missing:
            if item.endswith("/"):
                (root / item).mkdir(parents=True, exist_ok=True)
                (root / item / ".gitkeep").touch()
                report.fixed.append(item)
        report.fixed += add_guides(root)
        report.missing = _missing(root)
    report.config_problems = _config_problems(root)
    report.network = _network()
    return report


def _network() -> dict[str, Any]:
    from osmosis_ai.llm.network import network_settings

    return network_settings().describe()
