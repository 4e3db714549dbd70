"""Benchmarks on the platform: the catalog (``/api/cli/benchmarks``) and submitting a benchmark run.

Benchmark runs themselves (list, detail, logs, stop, outputs) share the run routes of evaluation and
training runs: see :data:`osmosis_ai.platform.runs.BENCHMARK`. A benchmark's key is its ``source_ref``
(``osmosis benchmark info terminal-bench``).
"""

from __future__ import annotations

from typing import Any

from osmosis_ai.platform.client import PlatformClient, segment
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.pages import Page, fetch_all, fetch_page
from osmosis_ai.platform.runs import BENCHMARK

__all__ = [
    "BENCHMARK_FIELDS",
    "benchmark_item",
    "get_benchmark",
    "list_benchmarks",
    "run_progress",
    "submit_benchmark_run",
]

PATH = "/api/cli/benchmarks"
BENCHMARK_FIELDS = (
    "id",
    "name",
    "description",
    "source_type",
    "source_ref",
    "source_url",
    "task_count",
    "category_count",
    "task_sets",
    "sync_status",
    "synced_task_count",
    "sync_error",
    "platform_url",
)
LIST_FIELDS = (
    "run_count",
    "running_count",
    "last_run_at",
    "last_run_status",
    "last_run_name",
    "creator_name",
)
DETAIL_FIELDS = (
    "runner_family",
    "supports_harness",
    "requires_harness",
    "default_harness",
    "requires_judge_model",
    "requires_judge_api_key",
    "judge_model_default",
    "pass_threshold",
    "categories",
    "tasks",
    "unavailable_tasks",
)


def benchmark_item(record: dict[str, Any], *, detail: bool = False) -> dict[str, Any]:
    """The established shape of a catalog entry (``key`` is the ``source_ref`` commands take)."""
    item = {k: record.get(k) for k in BENCHMARK_FIELDS}
    item["key"] = record.get("source_ref")
    item["task_sets"] = [t for t in record.get("task_sets") or [] if isinstance(t, dict)]
    extra = DETAIL_FIELDS if detail else LIST_FIELDS
    item.update({k: record.get(k) for k in extra})
    return item


def list_benchmarks(client: PlatformClient, *, limit: int = 50, every: bool = False) -> Page:
    """One page (or ``every`` page) of the workspace's benchmark catalog."""
    page = (
        fetch_all(client, PATH, "benchmarks")
        if every
        else fetch_page(client, PATH, "benchmarks", limit=limit)
    )
    page.items = [benchmark_item(b) for b in page.items]
    return page


def get_benchmark(client: PlatformClient, key: str) -> dict[str, Any]:
    """``{benchmark: {...}, leaderboard: [...]}`` of one benchmark (by key or id).

    Raises:
        PlatformError: ``NOT_FOUND`` for an unknown key; an answer without the benchmark record.
    """
    data = client.get(f"{PATH}/{segment(key)}")
    if not isinstance(data.get("benchmark"), dict):
        raise PlatformError(f"The platform's answer for benchmark '{key}' lacks the benchmark record.")
    leaderboard = [e for e in data.get("leaderboard") or [] if isinstance(e, dict)]
    return {"benchmark": benchmark_item(data["benchmark"], detail=True), "leaderboard": leaderboard}


def run_progress(run: dict[str, Any]) -> dict[str, Any] | None:
    """``{completed, total, unit: "results"}`` of a benchmark run once the platform expects results."""
    total = run.get("expected_results") or 0
    if not total:
        return None
    return {"completed": run.get("ingested_results") or 0, "total": total, "unit": "results"}


def submit_benchmark_run(client: PlatformClient, body: dict[str, Any]) -> dict[str, Any]:
    """``POST`` the run once (never retried: a retry could start it twice); returns the platform's answer.

    Raises:
        PlatformError: The platform refused, or its answer lacks ``id``, ``name`` or ``status``.
    """
    created = client.post(BENCHMARK.path, body, idempotent=False)
    missing = [k for k in ("id", "name", "status") if not created.get(k)]
    if missing:
        raise PlatformError(
            f"The platform accepted the benchmark run but its answer lacks {', '.join(missing)}."
        )
    return created
