"""``await within(awaitable, seconds)``: a deadline on an await without a task per wait.

Before Python 3.12, ``asyncio.wait_for`` runs its awaitable in a new task (and schedules it twice); the
hot path of ``eval run`` waits under four deadlines per item (the item, the workflow, the grader, the model
request), and those tasks were a measurable share of its CPU. From 3.11 ``asyncio.timeout`` puts the
deadline on the running task instead; 3.10 keeps ``wait_for``. Either way the deadline raises
``TimeoutError`` (``asyncio.TimeoutError``, the same class from 3.11) and ``None`` means no deadline.

A deadline nested in an earlier one of the same task can never fire first (the model request's 600 s
inside the workflow's 60 s), so on 3.11+ it sets no timer: each timer costs a heap entry, a handle and a
cancellation per wait. The held deadline is kept per task, so a task spawned inside (which an outer
timeout does not cancel) still sets its own.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["within"]

T = TypeVar("T")

if sys.version_info >= (3, 11):
    # Per task, the earliest deadline a within() of that task holds (loop time). A plain dict of floats: a
    # context variable allocated a token and a tuple per wait, and the extra garbage-collector work cost
    # more than the timers saved.
    _HELD: dict[asyncio.Task, float] = {}

    async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
        """Awaits ``awaitable``, cancelling it and raising ``TimeoutError`` after ``seconds``.

        Example:
            >>> asyncio.run(within(asyncio.sleep(0, "done"), 1.0))
            'done'
        """
        if seconds is None:
            return await awaitable
        task = asyncio.current_task()
        if task is None:  # a coroutine driven by hand: no task to hold a deadline for
            async with asyncio.timeout(seconds):
                return await awaitable
        now = task.get_loop().time()
        deadline = now + seconds
        held = _HELD.get(task)
        if held is not None and now < held <= deadline:
            return await awaitable  # the held deadline, still ahead, fires first
        _HELD[task] = deadline
        try:
            async with asyncio.timeout_at(deadline):
                return await awaitable
        finally:
            if held is None:
                _HELD.pop(task, None)
            else:
                _HELD[task] = held

else:  # pragma: no cover - exercised on 3.10 only

    async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
        """Awaits ``awaitable``, cancelling it and raising ``TimeoutError`` after ``seconds``."""
        return await asyncio.wait_for(awaitable, seconds)
