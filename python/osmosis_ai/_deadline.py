"""``await within(awaitable, seconds)``: a deadline on an await without a task or a timer per wait.

Before Python 3.12, ``asyncio.wait_for`` runs its awaitable in a new task (and schedules it twice); the
hot path of ``eval run`` waits under four deadlines per item (the item, the workflow, the grader, the model
request), and those tasks were a measurable share of its CPU. From 3.11 the deadline is put on the
running task instead (cancelled when it passes, the cancellation turned into ``TimeoutError`` as
``asyncio.timeout`` does); 3.10 keeps ``wait_for``. Either way the deadline raises ``TimeoutError``
(``asyncio.TimeoutError``, the same class from 3.11) and ``None`` means no deadline.

On 3.11+ waits share their loop timers: a deadline is rounded up to a grain of 1/64 of its length (at
most 100 ms), and the waits whose deadlines round to the same instant share one timer. A deadline fires
that little late, never early; a timer of its own per wait (``asyncio.timeout``: a handle, a heap entry
ordered by Python comparisons, a cancellation, two coroutines) cost three times what the wait costs now.

A deadline nested in an earlier one of the same task can never fire first (the model request's 600 s
inside the workflow's 60 s), so on 3.11+ it is not registered at all; one nested in a later one still fires
first (rounded up no further than the later deadline). The held deadline is kept per task,
so a task spawned inside (which an outer deadline does not cancel) still sets its own.
"""

from __future__ import annotations

import asyncio
import math
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
    # Per loop, the waits due at each shared timer's instant (a loop's entry goes once its timers fired,
    # or once it is found closed).
    _DUE: dict[asyncio.AbstractEventLoop, dict[float, set[_Wait]]] = {}
    _MAX_LATE_S = 0.1
    _GRAIN = 1 / 64

    class _Wait:
        """One task waiting under a deadline: whether the deadline cancelled it, and its count before."""

        __slots__ = ("cancelling", "expired", "task")

        def __init__(self, task: asyncio.Task) -> None:
            self.task = task
            self.cancelling = task.cancelling()
            self.expired = False

    def _expire(loop: asyncio.AbstractEventLoop, when: float) -> None:
        pending = _DUE.get(loop)
        if pending is None:
            return
        due = pending.pop(when, ())
        if not pending:
            _DUE.pop(loop, None)
        for wait in due:
            wait.expired = True
            wait.task.cancel()

    def _register(loop: asyncio.AbstractEventLoop, when: float) -> set[_Wait]:
        """A new set of waits sharing the timer that fires at ``when`` (the first wait due then)."""
        pending = _DUE.get(loop)
        if pending is None:
            # A closed loop's timers never fire. (Loops of other threads share this dict: list() is one step.)
            for other in list(_DUE):
                if other.is_closed():
                    _DUE.pop(other, None)
            pending = _DUE[loop] = {}
        # Kept until its timer fires even once empty: a wait that starts after the last one ended (one item
        # at a time) shares it too.
        due = pending[when] = set()
        loop.call_at(when, _expire, loop, when)
        return due

    if sys.version_info >= (3, 12):
        _current_task = asyncio.current_task  # in C from 3.12
    else:
        from asyncio.tasks import _current_tasks

        _current_task = _current_tasks.get  # the running task of a loop, without a Python frame

    async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
        """Awaits ``awaitable``, cancelling it and raising ``TimeoutError`` after ``seconds``.

        Example:
            >>> asyncio.run(within(asyncio.sleep(0, "done"), 1.0))
            'done'
        """
        if seconds is None or seconds == math.inf:
            return await awaitable
        loop = asyncio.get_running_loop()
        task = _current_task(loop)
        if task is None:  # a coroutine driven by hand: no task to hold a deadline for
            async with asyncio.timeout(seconds):
                return await awaitable
        now = loop.time()
        deadline = now + seconds
        held = _HELD.get(task)
        if held is not None and now < held <= deadline:
            return await awaitable  # the held deadline, still ahead, fires first
        _HELD[task] = deadline
        # The shared timer's instant: the deadline rounded up to its grain (inline: three waits per item).
        grain = seconds * _GRAIN if seconds < _MAX_LATE_S / _GRAIN else _MAX_LATE_S
        when = math.ceil(deadline / grain) * grain if grain > 0 else deadline
        if held is not None and when >= held:
            # Nested in a later deadline of the same task that close: it fires exactly, so still first.
            when = deadline
        pending = _DUE.get(loop)
        due = pending.get(when) if pending is not None else None
        if due is None:
            due = _register(loop, when)
        wait = _Wait(task)
        due.add(wait)
        try:
            return await awaitable
        except asyncio.CancelledError as exc:
            if wait.expired:
                wait.expired = False
                # Our cancellation, not the caller's (nor a second one on top of ours): a timeout.
                if task.uncancel() <= wait.cancelling:
                    raise TimeoutError from exc
            raise
        finally:
            if wait.expired:  # it swallowed the cancellation: take ours back all the same
                task.uncancel()
            due.discard(wait)
            if held is None:
                _HELD.pop(task, None)
            else:
                _HELD[task] = held

else:  # pragma: no cover - exercised on 3.10 only

    async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
        """Awaits ``awaitable``, cancelling it and raising ``TimeoutError`` after ``seconds``."""
        return await asyncio.wait_for(awaitable, seconds)
