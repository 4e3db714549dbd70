"""Paged lists and log pages of the platform API.

Lists take ``limit`` (1-50) and ``offset`` and answer ``{<key>: [...], total_count, has_more,
next_offset}``; logs take ``limit`` (1-200), ``direction=older`` and a ``cursor`` and answer
``{logs: [...], next_cursor}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.platform.client import PlatformClient

__all__ = ["LOG_FIELDS", "MAX_PAGE", "Page", "fetch_all", "fetch_logs", "fetch_page"]

MAX_PAGE = 50
LOG_FIELDS = ("timestamp", "level", "step", "message", "details")


@dataclass
class Page:
    """One page (or, after :func:`fetch_all`, every page) of a list.

    Attributes:
        items: The records, as the platform sent them.
        total_count: The list's size on the platform.
        has_more: More records follow ``next_offset``.
        next_offset: Offset of the next page, or ``None``.
        extra: Other top-level keys of the answer (``active_deployments``, ``platform_url``, ...).
    """

    items: list[dict[str, Any]]
    total_count: int
    has_more: bool = False
    next_offset: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _page(data: dict[str, Any], key: str) -> Page:
    items = [item for item in data.get(key) or [] if isinstance(item, dict)]
    known = {key, "total_count", "has_more", "next_offset"}
    next_offset = data.get("next_offset")
    return Page(
        items=items,
        total_count=int(data.get("total_count", len(items))),
        has_more=bool(data.get("has_more")) and next_offset is not None,
        next_offset=next_offset if isinstance(next_offset, int) else None,
        extra={k: v for k, v in data.items() if k not in known},
    )


def fetch_page(
    client: PlatformClient,
    path: str,
    key: str,
    *,
    limit: int = MAX_PAGE,
    offset: int = 0,
    params: dict[str, Any] | None = None,
) -> Page:
    """One page of ``path`` (items under ``key``).

    Example:
        >>> fetch_page(client, "/api/cli/eval-runs", "eval_runs", limit=10)  # doctest: +SKIP
    """
    data = client.get(path, params={"limit": limit, "offset": offset, **(params or {})})
    return _page(data, key)


def fetch_all(client: PlatformClient, path: str, key: str, *, params: dict[str, Any] | None = None) -> Page:
    """Every page of ``path``, following ``next_offset`` until it is null or a page comes back empty."""
    first = fetch_page(client, path, key, params=params)
    items = list(first.items)
    page = first
    while page.has_more and page.items and page.next_offset is not None:
        page = fetch_page(client, path, key, offset=page.next_offset, params=params)
        items.extend(page.items)
    return Page(items, max(first.total_count, len(items)), False, None, first.extra)


def fetch_logs(client: PlatformClient, path: str, *, limit: int = 50, cursor: str | None = None) -> Page:
    """One page of log entries, newest first, older ones after ``cursor``.

    The ``next_cursor`` of the answer is in ``extra["next_cursor"]``; ``has_more`` is whether it is set.
    """
    data = client.get(path, params={"limit": limit, "direction": "older", "cursor": cursor})
    logs = [
        {k: entry.get(k) for k in LOG_FIELDS} for entry in data.get("logs") or [] if isinstance(entry, dict)
    ]
    next_cursor = data.get("next_cursor")
    return Page(logs, len(logs), next_cursor is not None, None, {"next_cursor": next_cursor})
