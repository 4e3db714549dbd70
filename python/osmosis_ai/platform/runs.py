"""Evaluation and training runs on the platform: submit, list, inspect, stop, logs.

The two kinds share every route shape (``/api/cli/eval-runs`` and ``/api/cli/training-runs``); what
differs is a :class:`RunKind`. Records are flattened into the established item shapes (nested model /
dataset / rollout references become names), so ``--json`` output is the same as the established CLI's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from osmosis_ai.platform.client import PlatformClient, segment
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.pages import Page, fetch_all, fetch_logs, fetch_page

__all__ = [
    "BENCHMARK",
    "EVAL",
    "TRAINING",
    "RunKind",
    "get_run",
    "list_runs",
    "run_checkpoints",
    "run_item",
    "run_logs",
    "run_metrics",
    "stop_run",
    "submit_run",
]


@dataclass(frozen=True)
class RunKind:
    """Everything that differs between evaluation and training runs."""

    name: str  # "eval", "training" or "benchmark"
    command: str  # "eval", "train" or "benchmark runs" (the CLI group)
    path: str
    list_key: str
    detail_key: str
    label: str
    pending: frozenset[str]
    terminal: frozenset[str]
    operation: str = ""  # prefix of operation names ("benchmark.stop"); the command's when empty

    @property
    def operation_prefix(self) -> str:
        return self.operation or self.command


EVAL = RunKind(
    "eval",
    "eval",
    "/api/cli/eval-runs",
    "eval_runs",
    "eval_run",
    "evaluation",
    frozenset({"pending"}),
    frozenset({"finished", "failed", "stopped"}),
)
TRAINING = RunKind(
    "training",
    "train",
    "/api/cli/training-runs",
    "training_runs",
    "training_run",
    "training",
    frozenset({"pending", "queued"}),
    frozenset({"finished", "failed", "crashed", "stopped", "killed", "unknown"}),
)
BENCHMARK = RunKind(
    "benchmark",
    "benchmark runs",
    "/api/cli/benchmark-runs",
    "benchmark_runs",
    "benchmark_run",
    "benchmark",
    frozenset({"pending", "queued"}),
    frozenset({"finished", "failed", "stopped"}),
    operation="benchmark",
)
BENCHMARK_RUN_FIELDS = (
    "id",
    "name",
    "status",
    "benchmark_id",
    "benchmark_name",
    "agent_count",
    "best_pass_at_1",
    "ingested_results",
    "expected_results",
    "creator_name",
    "creator_email",
    "created_at",
    "started_at",
    "completed_at",
    "platform_url",
)
_SECRETS_NOT_FOUND = re.compile(r"Secrets? not found:\s*(?P<names>[A-Z0-9_, ]+)", re.IGNORECASE)


def _ref(value: Any, *keys: str) -> Any:
    if isinstance(value, dict):
        for key in keys:
            if value.get(key) is not None:
                return value[key]
        return None
    return value


def run_item(kind: RunKind, run: dict[str, Any]) -> dict[str, Any]:
    """The established list item of a run record (names of nested references, no raw config)."""
    base = {k: run.get(k) for k in ("id", "name", "status", "created_at", "started_at", "completed_at")}
    people = {"creator_name": run.get("creator_name"), "creator_email": run.get("creator_email")}
    if kind is BENCHMARK:
        benchmark = found if isinstance(found := run.get("benchmark"), dict) else {}
        item = {k: run.get(k) for k in BENCHMARK_RUN_FIELDS}
        item["benchmark_id"] = item["benchmark_id"] or benchmark.get("id")
        item["benchmark_name"] = item["benchmark_name"] or benchmark.get("name")
        return item
    if kind is EVAL:
        item = {
            **base,
            "model": _ref(run.get("model"), "model_name", "name"),
            "dataset": _ref(run.get("dataset"), "file_name", "name"),
            "rollout": _ref(run.get("rollout"), "name"),
            **people,
        }
        for optional in ("results", "platform_url"):
            if run.get(optional) is not None:
                item[optional] = run[optional]
        return item
    model, dataset, rollout = run.get("model") or {}, run.get("dataset") or {}, run.get("rollout") or {}
    item = {
        **base,
        "model_id": _ref(model, "id"),
        "model_name": _ref(model, "model_name", "name"),
        "dataset_id": _ref(dataset, "id"),
        "dataset_name": _ref(dataset, "file_name", "name"),
        "rollout_id": _ref(rollout, "id"),
        "rollout_name": _ref(rollout, "name"),
        **people,
    }
    for optional in ("platform_url", "current_step", "total_steps", "reward"):
        if run.get(optional) is not None:
            item[optional] = run[optional]
    return item


def submit_run(client: PlatformClient, kind: RunKind, body: dict[str, Any]) -> dict[str, Any]:
    """``POST`` the run; returns ``{id, name, status, created_at, platform_url?}``.

    Sent once (never retried): a retry after a lost answer could start the run twice.

    Raises:
        PlatformError: The platform refused; a missing-secrets 404 says how to add them.
    """
    try:
        created = client.post(kind.path, body, idempotent=False)
    except PlatformError as exc:
        match = _SECRETS_NOT_FOUND.search(str(exc))
        if exc.status_code == 404 and match:
            names = [n.strip() for n in match["names"].split(",") if n.strip()]
            hint = "\n".join(f"  osmosis secret set {n}" for n in names)
            raise PlatformError(
                f"The platform has no value for secret(s) {', '.join(names)}. Add them (personal scope by "
                f"default; --scope workspace shares them):\n{hint}\nor pass per-run values with --secrets-file.",
                code="NOT_FOUND",
                details={**exc.details, "missing": names},
                status_code=404,
            ) from None
        raise
    missing = [k for k in ("id", "name", "status") if not created.get(k)]
    if missing:
        raise PlatformError(f"The platform accepted the run but its answer lacks {', '.join(missing)}.")
    return created


def list_runs(
    client: PlatformClient,
    kind: RunKind,
    *,
    limit: int = 50,
    every: bool = False,
    params: dict[str, Any] | None = None,
) -> Page:
    """One page (or ``every`` page) of runs, as :func:`run_item` records (``params`` filter the list, e.g.
    ``{"benchmark": id}``)."""
    page = (
        fetch_all(client, kind.path, kind.list_key, params=params)
        if every
        else fetch_page(client, kind.path, kind.list_key, limit=limit, params=params)
    )
    page.items = [run_item(kind, run) for run in page.items]
    return page


def get_run(client: PlatformClient, kind: RunKind, name: str) -> dict[str, Any]:
    """The run's detail answer (``{eval_run|training_run: {...}, config, ...}``)."""
    data = client.get(f"{kind.path}/{segment(name)}")
    if not isinstance(data.get(kind.detail_key), dict):
        raise PlatformError(f"The platform's answer for {kind.label} run '{name}' lacks the run record.")
    return data


def run_metrics(client: PlatformClient, kind: RunKind, run_id: str) -> dict[str, Any]:
    """The run's metrics (``overview``, ``reward_stats``, ``pass_at_k`` for evals)."""
    return client.get(f"{kind.path}/{segment(run_id)}/metrics")


def run_checkpoints(client: PlatformClient, name: str) -> list[dict[str, Any]]:
    """A training run's saved checkpoints (``id, checkpoint_name, checkpoint_step, status, created_at``)."""
    data = client.get(f"{TRAINING.path}/{segment(name)}/checkpoints")
    keys = ("id", "checkpoint_name", "checkpoint_step", "status", "created_at")
    return [{k: c.get(k) for k in keys} for c in data.get("checkpoints") or [] if isinstance(c, dict)]


def stop_run(client: PlatformClient, kind: RunKind, name: str) -> None:
    """Asks the platform to stop the run."""
    client.post(f"{kind.path}/{segment(name)}/stop", {}, idempotent=True)


def run_logs(
    client: PlatformClient, kind: RunKind, name: str, *, limit: int = 50, cursor: str | None = None
) -> Page:
    """One page of the run's log entries (older entries follow ``extra["next_cursor"]``)."""
    return fetch_logs(client, f"{kind.path}/{segment(name)}/logs", limit=limit, cursor=cursor)
