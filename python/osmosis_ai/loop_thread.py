"""An asyncio event loop running in a daemon thread: the one helper behind every loop this package hosts.

The blocking LLM calls (:mod:`osmosis_ai.llm.sync`) and the run engine's isolated sessions
(:mod:`osmosis_ai.runs.engine`) both need a loop of their own that a stuck callback cannot pin the process
to: the thread is a daemon, so the interpreter exits without waiting for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread", "home_loop"]

T = TypeVar("T")

# The loop that handed the current work to a LoopThread (tasks inherit it through their context).
_HOME: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "osmosis_home_loop", default=None
)


def home_loop() -> asyncio.AbstractEventLoop | None:
    """The loop that submitted the running work to a :class:`LoopThread`, else the running loop (or None).

    Objects bound to one loop (a LiteLLM client's connections) are used from there.

    Example:
        >>> home_loop() is None
        True
    """
    home = _HOME.get()
    if home is not None:
        return home
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class LoopThread:
    """A new event loop, running forever in a daemon thread named ``name``.

    Example:
        >>> async def two(): return 2
        >>> host = LoopThread("example")
        >>> host.submit(two()).result()
        2
        >>> host.stop()
    """

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def submit(
        self, coro: Coroutine[Any, Any, T], *, keep_home: bool = False
    ) -> concurrent.futures.Future[T]:
        """Schedules ``coro`` on this loop; cancelling the returned future cancels it.

        ``keep_home``: :func:`home_loop` inside ``coro`` (and the tasks it starts) is the caller's loop.
        """
        if not keep_home:
            return asyncio.run_coroutine_threadsafe(coro, self.loop)
        token = _HOME.set(home_loop())
        try:
            return asyncio.run_coroutine_threadsafe(coro, self.loop)
        finally:
            _HOME.reset(token)

    def is_current(self) -> bool:
        """True when called from this loop's own thread."""
        return threading.current_thread() is self.thread

    async def responds(self, timeout: float) -> bool:
        """Whether this loop runs a callback within ``timeout`` seconds (False: user code is blocking it)."""
        here = asyncio.get_running_loop()
        answered = asyncio.Event()

        def answer() -> None:
            with contextlib.suppress(RuntimeError):  # the asking loop may be gone by then
                here.call_soon_threadsafe(answered.set)

        try:
            self.loop.call_soon_threadsafe(answer)
        except RuntimeError:
            return False  # closed
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(answered.wait(), timeout)
        return answered.is_set()

    def stop(self, grace: float = 2.0, *, wait: bool = True) -> None:
        """Cancels what still runs, gives it up to ``grace`` seconds to unwind, then stops the loop.

        Unwinding matters: a task left pending when the loop is collected runs its ``finally`` blocks on a
        closed loop (sockets of an interrupted LLM call), which prints tracebacks after the run's message.
        ``wait=False`` returns at once: a loop that user code blocks winds down if it ever unblocks. A
        blocked loop is otherwise left to its daemon thread after the grace.
        """
        if self.loop.is_closed() or not self.loop.is_running():
            return

        async def wind_down() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=grace)

        loop = self.loop
        try:
            done = asyncio.run_coroutine_threadsafe(wind_down(), loop)
        except RuntimeError:
            return  # closed meanwhile

        def stop(_: object) -> None:
            with contextlib.suppress(RuntimeError):  # closed meanwhile
                loop.call_soon_threadsafe(loop.stop)

        # Stopped once the result is delivered (stopping inside wind_down would strand its own result).
        done.add_done_callback(stop)
        if wait:
            with contextlib.suppress(Exception):
                done.result(grace + 0.5)
