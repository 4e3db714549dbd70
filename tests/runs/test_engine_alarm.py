"""The per-item timeout of a session on the engine's own loop (``runs.lanes.Alarm``): one timer for every
item, a late item logged as timed out, its worker free and uncancelled for the next, Ctrl+C still a stop."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from osmosis_ai.runs.engine import RunEngine
from osmosis_ai.runs.work import MemorySink, RunControl, WorkItem, new_item_record

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 keeps within() per item")


class _Executor:
    """Row 0 waits for ever (``swallow``: it swallows the first cancellation and returns); the others succeed,
    noting whether their task still had a cancellation pending."""

    def __init__(self, swallow: bool = False) -> None:
        self.swallow = swallow
        self.pending_cancellations: list[int] = []

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        return new_item_record(item)

    async def execute(self, item: WorkItem, record: dict[str, Any], control: RunControl) -> None:
        task = asyncio.current_task()
        assert task is not None
        if item.row_index == 0:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                if not self.swallow:
                    raise
            return
        self.pending_cancellations.append(task.cancelling())
        record["success"] = True

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        pass


def _items(count: int) -> list[WorkItem]:
    return [WorkItem(i, {}, f"k{i}", 0) for i in range(count)]


@pytest.mark.parametrize("swallow", [False, True])
@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_late_item_is_timed_out_and_its_worker_goes_on_uncancelled(swallow: bool, concurrency: int) -> None:
    executor, sink = _Executor(swallow), MemorySink()
    engine = RunEngine(executor, sink, concurrency=concurrency, item_timeout=0.05, handle_signals=False)
    outcome = asyncio.run(engine.run(_items(4)))
    by_row = {r["row_index"]: r for r in sink.records}
    assert by_row[0]["error"] == "Run timed out after 0.05s" and by_row[0]["success"] is False
    assert all(by_row[i]["success"] for i in (1, 2, 3))
    assert executor.pending_cancellations == [0, 0, 0]
    assert (outcome.executed, outcome.failed) == (4, 1)
    assert engine._alarm is not None and not engine._alarm.tasks  # every item forgotten


def test_the_callers_cancellation_stays_a_cancellation() -> None:
    async def main() -> bool:
        engine = RunEngine(_Executor(), MemorySink(), item_timeout=60.0, handle_signals=False)
        run = asyncio.ensure_future(engine.run(_items(1)))
        for _ in range(5):  # let the item start waiting
            await asyncio.sleep(0)
        run.cancel()
        try:
            await run
        except asyncio.CancelledError:
            return True
        return False

    assert asyncio.run(main()) is True


def test_items_without_a_timeout_have_no_alarm() -> None:
    executor, sink = _Executor(), MemorySink()
    engine = RunEngine(executor, sink, item_timeout=None, handle_signals=False)
    asyncio.run(engine.run(_items(4)[1:]))
    assert engine._alarm is None and len(sink.records) == 3
