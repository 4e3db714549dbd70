"""``await within(awaitable, seconds)``: a deadline on an await without a task per wait.

Before Python 3.12, ``asyncio.wait_for`` runs its awaitable in a new task (and schedules it twice); the
hot path of ``eval run`` waits under four deadlines per item (the item, the workflow, the grader, the model
request), and those tasks were a measurable share of its CPU. From 3.11 ``asyncio.timeout`` puts the
deadline on the running task instead; 3.10 keeps ``wait_for``. Either way the deadline raises
``TimeoutError`` (``asyncio.TimeoutError``, the same class from 3.11) and ``None`` means no deadline.

A deadline nested in an earlier one of the same task can never fire first (the model request's 600 s
inside the workflow's 60 s), so on 3.11+ it sets no timer: each timer costs a heap entry, a handle and a
cancellation per wait. The enclosing deadline is kept with its task, so a task spawned inside (which an
outer timeout does not cancel) still sets its own.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["within"]

T = TypeVar("T")

if sys.version_info >= (3, 11):
    # (task, loop-time deadline) of the innermost deadline set in this context.
    _ENCLOSING: ContextVar[tuple[asyncio.Task | None, float] | None] = ContextVar("_ENCLOSING", default=None)

    async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
        """Awaits ``awaitable``, cancelling it and raising ``TimeoutError`` after ``seconds``.

        Example:
            >>> asyncio.run(within(asyncio.sleep(0, "done"), 1.0))
            'done'
        """
        if seconds is None:
            return await awaitable
        now = asyncio.get_running_loop().time()
        deadline = now + seconds
        enclosing = _ENCLOSING.get()
        if (
            enclosing is not None
            and now < enclosing[1] <= deadline
            and enclosing[0] is asyncio.current_task()
        ):
            return await awaitable  # the enclosing deadline, still ahead, fires first
        token = _ENCLOSING.set((asyncio.current_task(), deadline))
        try:
            async with asyncio.timeout_at(deadline):
                return await awaitable
        finally:
            _ENCLOSING.reset(token)

else:  # pragma: no cover - exercised on 3.10 only

    async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
        """Awaits ``awaitable``, cancelling it and raising ``TimeoutError`` after ``seconds``."""
        return await asyncio.wait_for(awaitable, seconds)
