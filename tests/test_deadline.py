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
        counts = []  # timers set since the outer within() began (an expired deadline's shared timer stays)

        async def inner() -> None:
            counts[-1] = _timers() - counts[-1]
            await asyncio.sleep(10)

        started = time.monotonic()
        counts.append(_timers())
        with pytest.raises(TimeoutError):
            await within(within(inner(), 0.1), 60)  # the inner, earlier one sets its own timer
        elapsed = time.monotonic() - started
        counts.append(_timers())
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


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 waits with asyncio.wait_for")
def test_waits_due_at_about_the_same_time_share_one_timer_and_each_fires_never_early() -> None:
    async def main() -> tuple[int, list[float]]:
        before = _timers()
        started = asyncio.Event()
        seconds = 0.2  # shared within a grain of 0.2 / 64 s

        async def waiter() -> float:
            begun = asyncio.get_running_loop().time()
            with contextlib.suppress(TimeoutError):
                await within(asyncio.sleep(10), seconds)
            return asyncio.get_running_loop().time() - begun

        tasks = [asyncio.create_task(waiter()) for _ in range(50)]
        asyncio.get_running_loop().call_soon(started.set)
        await started.wait()
        timers = _timers() - before - sum(1 for t in tasks if not t.done())  # each sleep's own timer
        return timers, await asyncio.gather(*tasks)

    timers, waited = asyncio.run(main())
    # 50 waits begun in one loop step: one shared timer (two if a grain boundary fell between them).
    assert timers <= 2
    assert min(waited) >= 0.2


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 waits with asyncio.wait_for")
def test_a_deadline_leaves_the_task_uncancelled_whether_it_raised_or_its_cancellation_was_swallowed() -> None:
    async def main() -> tuple[int, int, bool]:
        task = asyncio.current_task()
        assert task is not None
        with pytest.raises(TimeoutError):
            await within(asyncio.sleep(10), 0.01)
        after_timeout = task.cancelling()

        async def swallows() -> str:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(10)
            return "kept"

        assert await within(swallows(), 0.01) == "kept"
        after_swallowed = task.cancelling()
        # The caller's own cancellation stays a cancellation, not a timeout.
        inner = asyncio.create_task(within(asyncio.sleep(10), 60))
        await asyncio.sleep(0)
        inner.cancel()
        try:
            await inner
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        return after_timeout, after_swallowed, cancelled

    assert asyncio.run(main()) == (0, 0, True)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 waits with asyncio.wait_for")
def test_a_closed_loop_with_a_pending_deadline_is_not_kept() -> None:
    from osmosis_ai import _deadline

    async def quick() -> None:
        await within(asyncio.sleep(0), 60)  # its shared timer is still pending when the loop closes

    loop = asyncio.new_event_loop()
    loop.run_until_complete(quick())
    loop.close()
    asyncio.run(quick())  # a new loop's first deadline sweeps the closed ones
    assert loop not in _deadline._DUE


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 waits with asyncio.wait_for")
def test_a_deadline_nested_in_a_slightly_later_one_still_fires_first() -> None:
    from osmosis_ai import _deadline

    async def timers_of_this_task() -> list[float]:
        task = asyncio.current_task()
        pending = _deadline._DUE[asyncio.get_running_loop()]
        return sorted(when for when, waits in pending.items() if any(w.task is task for w in waits))

    async def main() -> list[float]:
        # Rounded up to its grain, the inner deadline would share the outer's timer (and fire with it).
        return await within(within(timers_of_this_task(), 0.6399), 0.64)

    inner, outer = asyncio.run(main())  # two timers, the inner one's first
    assert inner < outer
