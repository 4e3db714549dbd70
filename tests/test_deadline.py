"""``within``: deadlines fire on time whether nested, shadowed by an earlier one, or in a spawned task."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time

import pytest

from osmosis_ai._deadline import within


def _timers() -> int:
    return sum(not h.cancelled() for h in asyncio.get_running_loop()._scheduled)  # type: ignore[attr-defined]


def test_a_nested_earlier_deadline_fires_and_a_later_one_is_shadowed() -> None:
    async def main() -> tuple[float, int, int]:
        counts = []

        async def inner() -> None:
            counts.append(_timers())
            await asyncio.sleep(10)

        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await within(within(inner(), 0.1), 60)  # the inner, earlier one sets its own timer
        elapsed = time.monotonic() - started
        with pytest.raises(TimeoutError):
            await within(within(inner(), 60), 0.1)  # the outer, earlier one fires; the inner sets none
        return elapsed, *counts

    elapsed, both, shadowed = asyncio.run(main())
    assert elapsed < 5
    if sys.version_info >= (3, 11):
        assert (both, shadowed) == (2, 1)


def test_a_task_spawned_under_a_deadline_keeps_its_own() -> None:
    async def main() -> bool:
        async def child() -> bool:
            try:
                await within(
                    asyncio.sleep(10), 0.2
                )  # later than the parent's, but the parent won't cancel it
            except TimeoutError:
                return True
            return False

        task = None

        async def parent() -> None:
            nonlocal task
            task = asyncio.create_task(child())
            await asyncio.sleep(10)

        with pytest.raises(TimeoutError):
            await within(parent(), 0.05)
        assert task is not None
        return await asyncio.wait_for(task, 5)

    assert asyncio.run(main()) is True


def test_a_deadline_after_a_swallowed_expiry_still_fires() -> None:
    async def main() -> bool:
        async def stubborn() -> bool:
            with contextlib.suppress(asyncio.CancelledError):  # swallows the outer deadline's cancellation
                await asyncio.sleep(10)
            try:
                await within(asyncio.sleep(10), 0.1)  # must still time out: the outer one already fired
            except TimeoutError:
                return True
            return False

        return await asyncio.wait_for(within(stubborn(), 0.05), 5)

    assert asyncio.run(main()) is True
