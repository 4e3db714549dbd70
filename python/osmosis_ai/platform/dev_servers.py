"""Remote development rollout servers (``osmosis dev server up|down|list|logs``, a hidden 0.3 group).

The platform runs a rollout folder's ``main.py`` at a pushed commit of the connected repository for a
while (24 hours unless told otherwise) and answers its URL; logs come as pages or as a server-sent event
stream (``data:`` lines carry JSON log entries, ``:`` lines are heartbeats).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from osmosis_ai.platform.client import PlatformClient, segment
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.pages import Page, fetch_all, fetch_logs, fetch_page

__all__ = ["SERVER_FIELDS", "list_servers", "provision", "server_logs", "stream_logs", "teardown"]

PATH = "/api/cli/dev-rollout-server"
SERVER_FIELDS = ("id", "name", "url", "status", "expires_at", "started_at")


def provision(
    client: PlatformClient, *, rollout_name: str, commit_sha: str, repository_path: str, ttl_hours: int | None
) -> dict[str, Any]:
    """Asks for a server running ``repository_path/main.py`` at ``commit_sha``; returns the platform's answer
    (``id``, ``url``, and an ``api_key`` the server takes). Sent once: a retry could start two servers.

    Raises:
        PlatformError: The platform refused, or answered without a URL.
    """
    body = {
        "rollout_name": rollout_name,
        "commit_sha": commit_sha,
        "repository_path": repository_path,
        "entrypoint": "main.py",
        "ttl_hours": ttl_hours,
    }
    created = client.post(PATH, body, idempotent=False)
    if not created.get("url"):
        raise PlatformError("The platform accepted the dev server but its answer has no url.")
    return created


def teardown(client: PlatformClient, server_id: str) -> dict[str, Any]:
    """Stops a server (the platform's answer, usually its id and new status)."""
    return client.delete(f"{PATH}/{segment(server_id)}", {})


def list_servers(client: PlatformClient, *, limit: int = 50, every: bool = False) -> Page:
    """One page (or ``every`` page) of the workspace's dev servers."""
    key = "dev_rollout_servers"
    page = fetch_all(client, PATH, key) if every else fetch_page(client, PATH, key, limit=limit)
    page.items = [{k: s.get(k) for k in SERVER_FIELDS} for s in page.items]
    return page


def server_logs(client: PlatformClient, server_id: str, *, tail: int = 100) -> Page:
    """The last ``tail`` log entries of a server."""
    return fetch_logs(client, f"{PATH}/{segment(server_id)}/logs", limit=tail)


def _events(lines: Iterator[str]) -> Iterator[str]:
    """The data of each event: ``data:`` lines joined, a blank line ends an event, comments skipped."""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield "\n".join(data)


def stream_logs(client: PlatformClient, server_id: str, *, tail: int = 100) -> Iterator[dict[str, Any]]:
    """The last ``tail`` entries, then new ones as they arrive, until the platform ends the stream.

    Entries that are not JSON objects are skipped (a stream is read on; one bad event does not end it).
    """
    lines = client.stream_lines(f"{PATH}/{segment(server_id)}/logs/stream", params={"tail": tail})
    for data in _events(lines):
        try:
            entry = json.loads(data)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry
