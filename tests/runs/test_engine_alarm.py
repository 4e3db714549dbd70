"""The per-item timeout of a session on the engine's own loop (``runs.lanes.Alarm``): one timer for every
item, a late item logged as timed out, its worker free and uncancelled for the next, Ctrl+C still a stop."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
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


def test_a_stop_requested_before_the_alarm_rings_stays_a_stop() -> None:
    # Ctrl+C cancels the worker, and the item's time is up in the same turn of the loop, before the worker
    # runs again: the cancellation it then sees is the stop's, not a timeout taken back by the alarm.
    from osmosis_ai.runs.lanes import Alarm, Lane

    async def main() -> tuple[bool | None, int]:
        lane = Lane(threading.Lock())
        alarm = Alarm(lane, timeout=1.0)
        item = WorkItem(0, {}, "k0", 0)
        lane.running[7] = (item, new_item_record(item), time.monotonic() - 5.0)  # its time is up
        seen: list[bool | None] = []

        async def worker() -> None:
            task = asyncio.current_task()
            assert task is not None
            alarm.watch(7, task, lane.running[7][2])
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                seen.append(alarm.end(7, task))
                raise

        task = asyncio.ensure_future(worker())
        await asyncio.sleep(0)  # the worker is waiting, watched
        task.cancel()  # the stop
        alarm._ring()  # the alarm's timer, due in this same turn
        with pytest.raises(asyncio.CancelledError):
            await task
        alarm.close()
        return seen[0], task.cancelling()

    verdict, still_cancelling = asyncio.run(main())
    assert verdict is False  # not the alarm's alone: the stop stands
    assert still_cancelling == 1
