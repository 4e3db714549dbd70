"""Running user code (agents, eval functions, graders) so that it cannot hold the process hostage.

Two hazards, two answers:

* A **sync** function that never returns. ``asyncio.to_thread`` would run it in the loop's default
  executor, whose worker threads the interpreter joins at exit: the report is printed, then the process
  never ends. :func:`call_sync` runs it on a pool of *daemon* threads instead; a timeout abandons the
  thread (the pool starts another) and the process still exits.
* **Async** code that blocks (``time.sleep`` inside ``async def run``). On the engine's own loop it
  would stop every timer, so no timeout could fire. The run engine's ``isolate`` mode runs the items on
  a loop in a daemon thread and watches it from its own; a loop found blocked is abandoned (its thread
  is a daemon) and a fresh one takes the next items (see :mod:`osmosis_ai.runs.lanes`).

A hop to a thread costs more than most scoring functions (~18 µs per call), so :class:`SyncFunction` runs a
sync function *inline* on a watched lane while every call of it has returned within ``INLINE_BUDGET_S``,
and on the daemon pool for good after the first that did not (or raised ``RuntimeError``, as one that
starts its own event loop does). On Linux a call slowed only by the machine's load (preempted, neither
waiting nor using more CPU than the budget) does not count: on a loaded machine that happened to a
trivial function in one run of 10k items in four. A blocking inline call stops the lane; the lane's
watcher then gives up its items as timed out, as for a blocking coroutine, and the call, never having
returned, leaves the function on the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["INLINE_BUDGET_S", "SyncFunction", "call_sync", "watched_loop"]

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


# How long one call of a sync function may take and still let the next run inline (see the docstring).
INLINE_BUDGET_S = 0.002

try:
    import resource

    _RUSAGE_THREAD: int | None = resource.RUSAGE_THREAD
except (ImportError, AttributeError):  # not Linux: the wall clock alone decides
    _RUSAGE_THREAD = None


def _thread_usage() -> tuple[int, float]:
    """This thread's voluntary context switches (waits; -1 where the OS does not tell) and CPU seconds."""
    waits = -1 if _RUSAGE_THREAD is None else resource.getrusage(_RUSAGE_THREAD).ru_nvcsw
    return waits, time.thread_time()  # rusage's own CPU times move in scheduler ticks (4 ms)


def _quick(begun: float, before: tuple[int, float]) -> bool:
    """Whether a call that started at ``begun`` may let the next one run inline."""
    if time.perf_counter() - begun <= INLINE_BUDGET_S:
        return True
    waits, cpu = _thread_usage()
    # Slow but neither waiting nor busy: the thread was only preempted (a loaded machine).
    return waits >= 0 and waits == before[0] and cpu - before[1] <= INLINE_BUDGET_S


# True in the tasks of a watched lane (set by the run engine): only there may user code block the loop.
_WATCHED: contextvars.ContextVar[bool] = contextvars.ContextVar("osmosis_watched_loop", default=False)


def watched_loop() -> None:
    """Marks the current context (and the tasks created from it) as running on a watched lane."""
    _WATCHED.set(True)


class SyncFunction(Generic[T]):
    """A sync user function, called inline on a watched lane while it stays quick, else on the pool.

    The rule is per function and one-way (see the module docstring); off a watched lane every call goes to
    the pool (:func:`call_sync`).

    Example:
        >>> asyncio.run(SyncFunction(sum)([1, 2]))
        3
    """

    __slots__ = ("func", "inline")

    def __init__(self, func: Callable[..., T]) -> None:
        self.func = func
        self.inline = True  # False for good once a call took longer than the budget

    async def __call__(self, *args: Any, **kwargs: Any) -> T:
        if not (self.inline and _WATCHED.get()):
            return await call_sync(self.func, *args, **kwargs)
        self.inline = False  # a call that never returns leaves the function on the pool
        before = _thread_usage()
        begun = time.perf_counter()
        try:
            value = self.func(*args, **kwargs)
        except RuntimeError as exc:
            # Most likely asyncio.run() or run_until_complete() inside, which cannot run on a running
            # loop: this call and every later one run on the pool, where they can.
            failed = exc
        except BaseException:
            self.inline = _quick(begun, before)
            raise
        else:
            self.inline = _quick(begun, before)
            return value
        with warnings.catch_warnings():
            # The coroutine that asyncio.run() was given is dropped with the error; not the user's fault.
            warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
            del failed  # frees it (and the coroutine) here
        return await call_sync(self.func, *args, **kwargs)
