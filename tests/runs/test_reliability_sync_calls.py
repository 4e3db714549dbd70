"""Sync user functions on the run engine: inline on a watched lane while quick, on daemon threads after."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from osmosis_ai.runs.engine import RunEngine
from osmosis_ai.runs.user_code import INLINE_BUDGET_S, SyncFunction
from osmosis_ai.runs.work import MemorySink, WorkItem


class _Calls:
    """An executor whose items each await one call of ``sync`` with the item's row index."""

    def __init__(self, sync: SyncFunction[Any]) -> None:
        self.sync = sync
        self.loop_threads: set[int] = set()

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        return {"row_index": item.row_index, "success": False, "scores": {}, "error": None}

    async def execute(self, item: WorkItem, record: dict[str, Any], control: Any) -> None:
        self.loop_threads.add(threading.get_ident())
        record["thread"] = await self.sync(item.row_index)
        record["success"] = True

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        pass


def _run(func: Callable[[int], Any], rows: int, *, concurrency: int = 4, timeout: float = 5.0):
    executor = _Calls(SyncFunction(func))
    sink = MemorySink()
    engine = RunEngine(
        executor, sink, concurrency=concurrency, item_timeout=timeout, isolate=True, handle_signals=False
    )
    items = [WorkItem(i, {"q": i}, f"k{i}", 0) for i in range(rows)]
    asyncio.run(asyncio.wait_for(engine.run(items), 60))
    return executor, engine, {r["row_index"]: r for r in sink.records}


def test_a_quick_sync_function_runs_inline_on_the_lane() -> None:
    executor, _, records = _run(lambda row: threading.get_ident(), 20)
    assert all(r["success"] for r in records.values()) and len(records) == 20
    assert {r["thread"] for r in records.values()} == executor.loop_threads  # the lane's own thread
    assert executor.sync.inline


def test_a_slow_sync_function_moves_to_threads_for_good_and_runs_concurrently() -> None:
    active, peak, lock = [0], [0], threading.Lock()

    def io_bound(row: int) -> int:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(INLINE_BUDGET_S * 25)  # a request, say
        with lock:
            active[0] -= 1
        return threading.get_ident()

    executor, _, records = _run(io_bound, 12, concurrency=4)
    assert all(r["success"] for r in records.values()) and len(records) == 12
    assert not executor.sync.inline
    # The first call ran inline (alone); the others on the pool, side by side.
    assert sum(r["thread"] in executor.loop_threads for r in records.values()) == 1
    assert peak[0] > 1


def test_a_blocking_sync_function_is_still_timed_out_and_leaves_the_lane() -> None:
    gate = threading.Event()

    def blocks_on_row_zero(row: int) -> int:
        if row == 0:
            gate.wait()  # inline: the lane stops until its watcher gives it up
        return row

    try:
        executor, engine, records = _run(blocks_on_row_zero, 10, concurrency=2, timeout=0.2)
    finally:
        gate.set()
    assert records[0]["error"] == "Run timed out after 0.2s"
    assert engine.abandoned_lanes == 1 and not executor.sync.inline
    # Besides what the abandoned lane held, every item ran (on the pool) and succeeded.
    assert sum(r["success"] for r in records.values()) >= 8 and len(records) == 10


def test_off_a_lane_and_around_a_nested_event_loop_calls_go_to_threads() -> None:
    here = threading.get_ident()
    assert asyncio.run(SyncFunction(lambda: threading.get_ident())()) != here

    def starts_a_loop(row: int) -> int:
        return asyncio.run(asyncio.sleep(0, row))  # cannot run on a running loop

    executor, _, records = _run(starts_a_loop, 6)
    assert all(r["success"] for r in records.values()) and not executor.sync.inline
    assert [records[i]["thread"] for i in range(6)] == list(range(6))


def test_a_sync_function_busy_past_the_budget_moves_to_threads() -> None:
    def busy(row: int) -> int:
        until = time.thread_time() + INLINE_BUDGET_S * 3
        while time.thread_time() < until:
            pass
        return threading.get_ident()

    executor, _, records = _run(busy, 4, concurrency=1)
    assert not executor.sync.inline
    assert sum(r["thread"] in executor.loop_threads for r in records.values()) == 1
