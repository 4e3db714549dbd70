"""In-memory state of the platform stand-in (shared by the server and its routes)."""

from __future__ import annotations

import threading
from typing import Any

NOW = "2026-11-25T12:00:00+00:00"
USER = {"id": "user-1", "email": "ada@example.com", "name": "Ada Lovelace"}


def initial_state() -> dict[str, Any]:
    return {
        "tokens": {},  # token -> {token_id, user, expires_at, revoked}
        "workspaces": {"acme/agents": {"id": "ws-1", "name": "Acme", "role": "owner"}},
        "device": {"pending_polls": 1, "slow_down_polls": 0, "deny": False, "approved": False, "codes": {}},
        "eval_runs": [],
        "training_runs": [],
        "logs": {},  # run name -> [log entries]
        "secrets": [],  # {id, name, scope, value, ...}
        "datasets": [],
        "storage": {},  # key -> {"size", "sha256"} (bytes are hashed, not kept)
        "uploads": {},  # upload id -> {parts: {n: size}}
        "multipart_threshold": 1 << 20,
        "part_size": 1 << 16,
        "models_base": [],
        "models_lora": [],
        "rollouts": [],
        "registrations": [],
        "eval_files": {},  # eval run id -> {path: text}
        "imports": {},
        "benchmarks": [],
        "benchmark_runs": [],
        "benchmark_files": {},  # benchmark run id -> {path: text}
        "dev_servers": [],
        "quickstart": {},  # workspace id -> {connected, full_name, billing_ready, completed, intent}  # eval import session id -> {local_run_id, manifest_digest, status, files, run, ...}
        "version_status": None,
        "failures": [],
        "requests": [],
        "counter": 0,
    }


class State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.data = initial_state()

    def next_id(self, prefix: str) -> str:
        self.data["counter"] += 1
        return f"{prefix}-{self.data['counter']}"


STATE = State()
# Bytes PUT to /_storage/ by key (kept out of the state: the state is sent as JSON to the tests).
BLOBS: dict[str, bytes] = {}


class ApiError(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def page(items: list[dict[str, Any]], query: dict[str, str], key: str, **extra: Any) -> dict[str, Any]:
    limit = int(query.get("limit", 50))
    offset = int(query.get("offset", 0))
    if not 1 <= limit <= 50:
        raise ApiError(400, {"error": "limit must be between 1 and 50", "code": "INVALID_LIMIT"})
    chunk = items[offset : offset + limit]
    more = offset + limit < len(items)
    return {
        key: chunk,
        "total_count": len(items),
        "has_more": more,
        "next_offset": offset + limit if more else None,
        **extra,
    }


def find(items: list[dict[str, Any]], name: str, what: str) -> dict[str, Any]:
    for item in items:
        if name in (item.get("name"), item.get("id"), item.get("file_name"), item.get("model_name")):
            return item
    raise ApiError(404, {"error": f"{what} '{name}' not found", "code": "NOT_FOUND"})
