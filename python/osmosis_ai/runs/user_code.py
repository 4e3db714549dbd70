"""Running user code (agents, eval functions, graders) so that it cannot hold the process hostage.

Two hazards, two answers:

* A **sync** function that never returns. ``asyncio.to_thread`` would run it in the loop's default
  executor, whose worker threads the interpreter joins at exit: the report is printed, then the process
  never ends. :func:`call_sync` runs it on a pool of *daemon* threads instead; a timeout abandons the
  thread (the pool starts another) and the process still exits.
* **Async** code that blocks (``time.sleep`` inside ``async def run``). On the engine's own loop it
  would stop every timer, so no timeout could fire. The run engine's ``isolate`` mode runs the items on
  a loop in a daemon thread and watches it from its own; a loop found blocked is abandoned (its thread
  is a daemon) and a fresh one takes the next items (see :mod:`osmosis_ai.runs.engine`).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["call_sync"]

T = TypeVar("T")


class _DaemonPool:
    """Reused daemon threads for blocking calls: starting a thread per call costs more than most calls.

    A thread whose call never returns is lost to the pool, which starts another when every thread is busy;
    threads idle for ``idle_s`` seconds exit, so the pool shrinks back after a burst.
    """

    def __init__(self, idle_s: float = 30.0) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        # Threads waiting for a job that no queued job has claimed yet.
        self._idle = 0
        self._idle_s = idle_s

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1  # that waiting thread is this job's
        self._jobs.put(job)
        if spawn:
            threading.Thread(target=self._serve, name="osmosis-user-sync", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # no job claimed this thread meanwhile: it may go
                        self._idle -= 1
                        return
                continue  # a job was claimed for a waiting thread and is on its way
            job()
            del job  # an idle thread must not keep the last call's arguments alive
            with self._lock:
                self._idle += 1


_POOL = _DaemonPool()


async def call_sync(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Awaits ``func(*args, **kwargs)`` run on a daemon thread (cancelling the await abandons the thread).

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

    _POOL.submit(work)
    return await done
