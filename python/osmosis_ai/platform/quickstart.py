"""What ``osmosis quickstart`` asks the platform, and the clones it remembers.

The wizard checks live state at every step (login, workspace, connected repository, a local clone,
billing), so running it again resumes from what is true, not from saved progress. The one thing kept
locally is where each workspace was cloned: ``<config dir>/workspace-directories.json``
(``{"version": 1, "platforms": {url: {workspace id: path}}}``, mode 0600, replaced whole).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_ai.platform.client import PlatformClient
from osmosis_ai.platform.errors import PlatformError

__all__ = [
    "INTENTS",
    "QuickstartStatus",
    "agent_prompt",
    "complete_quickstart",
    "forget_clone",
    "list_workspaces",
    "quickstart_status",
    "recall_clone",
    "remember_clone",
    "wait_for_repository",
]

PATH = "/api/cli/quickstart"
INTENTS = (
    ("train", "Train a model for a task"),
    ("eval", "Evaluate a model on a dataset"),
    ("benchmark", "Run a benchmark"),
    ("explore", "Just look around for now"),
)
_PROMPTS = {
    "train": (
        "In this Osmosis workspace I want to train a model for {task}. Read the workspace's agent instructions "
        "first, then help me pin down the dataset and the reward, and propose the next step before you create "
        "a rollout, run an evaluation or submit a training run."
    ),
    "eval": (
        "In this Osmosis workspace I want to evaluate a model on {task}. Read the workspace's agent instructions "
        "first, then help me settle the rollout and the eval config, and propose the next step before you "
        "submit an evaluation run."
    ),
    "benchmark": (
        "In this Osmosis workspace I want to run a benchmark. Read the workspace's agent instructions first, "
        "then help me choose the benchmark, its tasks and the agents to compare, and confirm the size of the "
        "run with me before you submit it."
    ),
}


def list_workspaces(client: PlatformClient) -> list[dict[str, Any]]:
    """The login's workspaces: ``{id, name, role, repository}`` (the connected ``owner/repo`` or None)."""
    data = client.get("/api/cli/workspaces", scoped=False)
    items = []
    for ws in data.get("workspaces") or []:
        if isinstance(ws, dict):
            repo = (ws.get("connected_repo") or {}).get("repo_full_name")
            items.append(
                {"id": ws.get("id"), "name": ws.get("name"), "role": ws.get("role"), "repository": repo}
            )
    return items


@dataclass(frozen=True)
class QuickstartStatus:
    """A workspace's setup as the platform sees it."""

    repo_connected: bool
    repo_full_name: str | None
    billing_ready: bool
    completed: bool


def quickstart_status(client: PlatformClient, workspace_id: str) -> QuickstartStatus:
    """The workspace's repository, billing and whether quickstart was completed before."""
    data = client.get(PATH, params={"organizationId": workspace_id}, scoped=False)
    repo = found if isinstance(found := data.get("repo"), dict) else {}
    return QuickstartStatus(
        repo_connected=bool(repo.get("connected")),
        repo_full_name=repo.get("full_name") or None,
        billing_ready=bool(data.get("billing_ready")),
        completed=bool(data.get("completed")),
    )


def wait_for_repository(
    client: PlatformClient,
    workspace_id: str,
    *,
    poll_s: float = 5.0,
    timeout_s: float = 900.0,
    sleep: Callable[[float], None] = time.sleep,
) -> QuickstartStatus:
    """Polls until a workspace admin connects a repository.

    Raises:
        PlatformError: Still none after ``timeout_s`` (running quickstart again resumes the wait).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        sleep(poll_s)
        status = quickstart_status(client, workspace_id)
        if status.repo_connected and status.repo_full_name:
            return status
        if time.monotonic() >= deadline:
            raise PlatformError(
                "No repository was connected to the workspace in time; run `osmosis quickstart` again once an "
                "admin has connected it on the platform (Integrations > Git)."
            )


def complete_quickstart(client: PlatformClient, workspace_id: str, intent: str) -> None:
    """Tells the platform quickstart is done and what the user wants to do next."""
    client.post(PATH, {"organizationId": workspace_id, "intent": intent}, scoped=False, idempotent=True)


def agent_prompt(intent: str, task: str | None) -> str | None:
    """The prompt handed to the user's coding agent (None for ``explore``, or a task-less train/eval)."""
    template = _PROMPTS.get(intent)
    if template is None or ("{task}" in template and not task):
        return None
    return template.format(task=task)


def _registry_path() -> Path:
    from osmosis_ai.platform.credentials import config_dir

    return config_dir() / "workspace-directories.json"


def _read() -> dict[str, Any]:
    try:
        data = json.loads(_registry_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"version": 1, "platforms": {}}
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("platforms"), dict):
        return {"version": 1, "platforms": {}}
    return data


def _write(data: dict[str, Any]) -> None:
    path = _registry_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".workspace-directories-", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def recall_clone(platform_url: str, workspace_id: str) -> Path | None:
    """Where this workspace was cloned before, if that directory still exists."""
    path = _read()["platforms"].get(platform_url, {}).get(workspace_id)
    return Path(path) if isinstance(path, str) and Path(path).is_dir() else None


def remember_clone(platform_url: str, workspace_id: str, path: Path) -> None:
    """Records the workspace's clone."""
    data = _read()
    data["platforms"].setdefault(platform_url, {})[workspace_id] = str(path.resolve())
    _write(data)


def forget_clone(platform_url: str, workspace_id: str) -> None:
    """Drops a recorded clone that is no longer one."""
    data = _read()
    if data["platforms"].get(platform_url, {}).pop(workspace_id, None) is not None:
        _write(data)
