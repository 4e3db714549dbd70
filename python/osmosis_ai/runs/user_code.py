"""Running user code (agents, eval functions, graders) so that it cannot hold the process hostage.

Two hazards, two answers:

* A **sync** function that never returns. ``asyncio.to_thread`` would run it in the loop's default
  executor, whose worker threads the interpreter joins at exit: the report is printed, then the process
  never ends. :func:`call_sync` runs it in a *daemon* thread instead; a timeout abandons the thread and
  the process still exits.
* **Async** code that blocks (``time.sleep`` inside ``async def run``). On the engine's own loop it
  would stop every timer, so no timeout could fire. :class:`UserLoop` runs such coroutines on a separate
  event loop in a daemon thread; the engine's loop keeps its timers, signals and log. A loop found stuck
  after a timeout is abandoned (its thread is a daemon) and a fresh one takes the next items.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["UserLoop", "call_sync"]

T = TypeVar("T")

# How long a loop may take to run one callback after a timeout before it counts as stuck.
_STUCK_AFTER_S = 1.0


async def call_sync(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Awaits ``func(*args, **kwargs)`` run in a daemon thread (cancelling the await abandons the thread).

    Example:
        >>> asyncio.run(call_sync(sum, [1, 2]))
        3
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def deliver(setter: Callable[[Any], None], value: Any) -> None:
        if not done.done():
            setter(value)

    def work() -> None:
        try:
            value = func(*args, **kwargs)
        except BaseException as exc:  # delivered to the awaiting coroutine, whatever it is
            outcome: tuple[Callable[[Any], None], Any] = (done.set_exception, exc)
        else:
            outcome = (done.set_result, value)
        # The awaiting loop may be closed by the time an abandoned call returns.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(deliver, *outcome)

    threading.Thread(target=work, name="osmosis-user-sync", daemon=True).start()
    return await done


class UserLoop:
    """An event loop in a daemon thread for user coroutines; replaced when user code blocks it.

    Example:
        >>> async def main():
        ...     loop = UserLoop()
        ...     async def two(): return 2
        ...     try:
        ...         return await loop.run(two())
        ...     finally:
        ...         loop.close()
        >>> asyncio.run(main())
        2
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self.abandoned = 0

    def _current(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="osmosis-user-loop", daemon=True).start()
            self._loop = loop
        return self._loop

    async def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Runs ``coro`` on the user loop; raises ``TimeoutError`` after ``timeout`` seconds.

        On a timeout or a cancellation the coroutine is cancelled; if the loop does not even get to run
        that cancellation (user code blocks it), the loop is abandoned so later items are not stuck too.
        """
        loop = self._current()
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            await self._abandon_if_stuck(loop)
            raise TimeoutError from None
        except asyncio.CancelledError:
            await self._abandon_if_stuck(loop)
            raise

    async def _abandon_if_stuck(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop is not self._loop:
            return  # already replaced by another item's timeout
        here = asyncio.get_running_loop()
        answered = asyncio.Event()
        try:
            loop.call_soon_threadsafe(here.call_soon_threadsafe, answered.set)
        except RuntimeError:
            return  # closed meanwhile
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(answered.wait(), _STUCK_AFTER_S)
        if not answered.is_set() and loop is self._loop:
            self._loop = None  # the blocked thread is a daemon: it cannot keep the process alive
            self.abandoned += 1

    def close(self, grace: float = 2.0) -> None:
        """Cancels what still runs on the loop, waits up to ``grace`` seconds for it to unwind, then stops it.

        Unwinding matters: a task left pending when the loop is collected runs its ``finally`` blocks on a
        closed loop (sockets of an interrupted LLM call), which prints tracebacks after the run's message.
        """
        loop, self._loop = self._loop, None
        if loop is None or loop.is_closed():
            return

        async def unwind() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=grace)

        # A loop that user code blocks cannot unwind: after the grace it is left to its daemon thread.
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(unwind(), loop).result(grace + 0.5)
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
