"""Which platform workspace a directory belongs to: its Git worktree and the ``origin`` remote's repository.

The platform maps the connected GitHub repository (``owner/repo``, sent as ``X-Osmosis-Git``) to a
workspace, so a platform command run anywhere inside the repository talks about the right one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from osmosis_ai.platform.errors import PlatformError

__all__ = [
    "GitIdentity",
    "WorkspaceContext",
    "git_state",
    "git_toplevel",
    "normalize_git_identity",
    "resolve_workspace",
    "source_warnings",
]

REQUIRED_DIRS = ("rollouts", "configs/training", "configs/eval", "data")
_SCP = re.compile(r"^(?P<user>[^@\s/]+)@(?P<host>[^:\s/]+):(?P<path>.+)$")
_IDENTITY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")


@dataclass(frozen=True)
class GitIdentity:
    """A GitHub repository as the platform knows it.

    Attributes:
        identity: ``owner/repo``, lower-case (the ``X-Osmosis-Git`` value).
        remote_url: The remote without credentials, for display.
    """

    identity: str
    remote_url: str


@dataclass(frozen=True)
class WorkspaceContext:
    """A workspace directory and its repository identity."""

    directory: Path
    git: GitIdentity

    def as_dict(self) -> dict[str, object]:
        """The ``git`` and ``workspace_directory`` keys the JSON results carry."""
        return {
            "git": {"identity": self.git.identity, "remote_url": self.git.remote_url},
            "workspace_directory": str(self.directory),
        }


def normalize_git_identity(remote: str) -> GitIdentity:
    """``owner/repo`` of a GitHub remote URL (ssh, scp-like or https), lower-cased.

    Raises:
        PlatformError: ``VALIDATION`` naming what is wrong (not GitHub, not one repository, odd characters).

    Example:
        >>> normalize_git_identity("git@github.com:Acme/Agents.git").identity
        'acme/agents'
    """
    text = remote.strip() if isinstance(remote, str) else ""
    if not text or any(ord(c) < 32 or 127 <= ord(c) <= 159 or c.isspace() for c in text):
        raise _bad(remote, "it is empty or contains whitespace or control characters")
    scp = _SCP.match(text)
    if scp and "://" not in text:
        text = f"ssh://{scp['user']}@{scp['host']}/{scp['path']}"
    parts = urlsplit(text)
    if (parts.hostname or "").lower() != "github.com":
        raise _bad(remote, "the Osmosis platform connects GitHub repositories only (host github.com)")
    path = parts.path
    if re.search(r"%2f|%5c", path, re.IGNORECASE):
        raise _bad(remote, "the path contains encoded separators")
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    if path.count("/") != 1 or not _IDENTITY.match(path):
        raise _bad(remote, "expected exactly one repository, as github.com/OWNER/REPO")
    user = "git@" if parts.username == "git" else ""
    display = f"{parts.scheme}://{user}github.com/{path}"
    return GitIdentity(path.lower(), display)


def _bad(remote: object, why: str) -> PlatformError:
    return PlatformError(
        f"The `origin` remote {remote!r} cannot select a workspace: {why}.", code="VALIDATION"
    )


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    if shutil.which("git") is None:
        return None
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        ["git", "-C", str(directory), *args], capture_output=True, text=True, env=env, check=False
    )


def git_toplevel(start: Path) -> Path | None:
    """The top level of the Git worktree containing ``start``, or ``None`` outside one (or without git)."""
    directory = start if start.is_dir() else start.parent
    proc = _git(directory, "rev-parse", "--show-toplevel")
    if proc is None or proc.returncode != 0 or not proc.stdout.strip():
        return None
    return Path(proc.stdout.strip())


def origin_identity(directory: Path) -> GitIdentity | None:
    """The identity of ``directory``'s ``origin`` remote; ``None`` when there is no such remote.

    The URL as configured, not as ``git remote get-url`` shows it: that applies ``url.*.insteadOf``, which
    turns the GitHub URL of a repository fetched through a mirror into the mirror's.
    """
    proc = _git(directory, "config", "--get", "remote.origin.url")
    if proc is None or proc.returncode != 0 or not proc.stdout.strip():
        return None
    return normalize_git_identity(proc.stdout.strip())


def resolve_workspace(start: Path | None = None, *, check_layout: bool = True) -> WorkspaceContext:
    """The workspace containing ``start`` (default: the current directory).

    Raises:
        PlatformError: ``WORKSPACE_REQUIRED`` outside a Git worktree; ``VALIDATION`` for missing workspace
            directories or a missing / non-GitHub ``origin`` remote.

    Example:
        >>> resolve_workspace(Path("/tmp/repo"))  # doctest: +SKIP
        WorkspaceContext(directory=PosixPath('/tmp/repo'), git=GitIdentity(identity='acme/agents', ...))
    """
    start = (start or Path.cwd()).resolve()
    top = git_toplevel(start)
    if top is None:
        raise PlatformError(
            f"{start} is not inside a Git repository: run this from your Osmosis workspace (the clone of the "
            "repository connected to the platform), or create one with `osmosis init` and `git init`.",
            code="WORKSPACE_REQUIRED",
        )
    if check_layout:
        missing = [f"{d}/" for d in REQUIRED_DIRS if not (top / d).is_dir()]
        if missing:
            lines = "\n".join(f"  - {m}" for m in missing)
            raise PlatformError(
                f"{top} is not an Osmosis workspace; these directories are missing:\n{lines}\n"
                "Create them (`osmosis init` makes the layout) and run the command again.",
                code="VALIDATION",
                details={"workspace_directory": str(top), "missing": missing},
            )
    git = origin_identity(top)
    if git is None:
        raise PlatformError(
            f"{top} has no `origin` remote. Set `origin` to the platform-connected GitHub repository "
            "(git remote add origin git@github.com:OWNER/REPO.git), or clone the repository from the platform.",
            code="VALIDATION",
        )
    return WorkspaceContext(top, git)


def source_warnings(directory: Path, *, pinned: bool) -> list[str]:
    """What may make the platform's copy of the code differ from this working tree.

    The platform fetches the rollout code from the connected repository, so local edits and unpushed
    commits are not part of a submitted run.

    Args:
        directory: The workspace.
        pinned: The config pins ``commit_sha`` (then the branch state does not matter).
    """
    warnings: list[str] = []
    status = _git(directory, "status", "--porcelain")
    if status is not None and status.returncode == 0 and status.stdout.strip():
        warnings.append(
            "The working tree has uncommitted changes; the platform runs the code in the connected repository, "
            "so commit and push them first if the run needs them."
        )
    if pinned:
        return warnings
    ahead = _git(directory, "rev-list", "--count", "@{upstream}..HEAD")
    if ahead is not None and ahead.returncode == 0 and ahead.stdout.strip() not in ("", "0"):
        warnings.append(
            f"{ahead.stdout.strip()} local commit(s) are not pushed; push them before submitting."
        )
    elif ahead is not None and ahead.returncode != 0:
        head = _git(directory, "rev-parse", "--verify", "-q", "HEAD")
        if head is not None and head.returncode == 0:
            warnings.append(
                "The current branch has no upstream; the platform cannot see its commits until you push."
            )
    return warnings


def git_state(directory: Path) -> dict[str, Any]:
    """``git_head``, ``git_branch`` and ``git_dirty`` of the worktree at ``directory`` (what is known only).

    Example:
        >>> git_state(Path("/nonexistent"))
        {}
    """
    state: dict[str, Any] = {}
    head = _git(directory, "rev-parse", "--verify", "-q", "HEAD")
    if head is None or head.returncode != 0:
        return state
    state["git_head"] = head.stdout.strip()
    branch = _git(directory, "symbolic-ref", "--short", "-q", "HEAD")
    if branch is not None and branch.returncode == 0 and branch.stdout.strip():
        state["git_branch"] = branch.stdout.strip()
    status = _git(directory, "status", "--porcelain")
    if status is not None and status.returncode == 0:
        state["git_dirty"] = bool(status.stdout.strip())
    return state
