"""``await within(awaitable, seconds)``: a deadline on an await without a task per wait.

Before Python 3.12, ``asyncio.wait_for`` runs its awaitable in a new task (and schedules it twice); the
hot path of ``eval run`` waits under four deadlines per item (the item, the workflow, the grader, the model
request), and those tasks were a measurable share of its CPU. From 3.11 ``asyncio.timeout`` puts the
deadline on the running task instead; 3.10 keeps ``wait_for``. Either way the deadline raises
``TimeoutError`` (``asyncio.TimeoutError``, the same class from 3.11) and ``None`` means no deadline.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["within"]

T = TypeVar("T")

if sys.version_info >= (3, 11):

    async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
        """Awaits ``awaitable``, cancelling it and raising ``TimeoutError`` after ``seconds``.

        Example:
            >>> asyncio.run(within(asyncio.sleep(0, "done"), 1.0))
            'done'
        """
        if seconds is None:
            return await awaitable
        async with asyncio.timeout(seconds):
            return await awaitable

else:  # pragma: no cover - exercised on 3.10 only

    async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
        """Awaits ``awaitable``, cancelling it and raising ``TimeoutError`` after ``seconds``."""
        return await asyncio.wait_for(awaitable, seconds)
