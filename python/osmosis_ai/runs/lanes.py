"""Lanes: the event loops a run engine session's workers run on, and the watcher of an isolated one.

Isolation (``RunEngine(isolate=True)``, for user coroutines): the workers run on an event loop in a daemon
thread, a *lane*, with the per-item timeout on that loop, so an item costs no hop between threads. The
engine's own loop only watches: an item still running past its timeout means the lane cannot enforce it
(user code blocks the loop, or ignores cancellation). A lane that still answers loses just those items
(logged as timed out), and a fresh worker takes the place of each worker such an item still holds; one
that does not answer is abandoned with every item it holds, and a fresh lane takes the remaining items.
A session that is not isolated runs one lane on the engine's own loop, its per-item timeout kept by an
:class:`Alarm`.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, Literal

from osmosis_ai.loop_thread import LoopThread
from osmosis_ai.runs.user_code import watched_loop

__all__ = ["Alarm", "Lane", "watch"]

# How long past its timeout an item may still run before the watcher steps in, how often it looks, and
# how long a lane has to answer before it counts as blocked.
GRACE_S = 0.5
TICK_S = 0.25
ANSWER_S = 0.5

# What a lane holds of an item it runs: the item, its record, its start (time.monotonic()).
Entry = tuple[Any, dict[str, Any], float]
Worker = Callable[["Lane"], Coroutine[Any, Any, str]]


class Lane:
    """The loop a share of the session runs on, its workers and the items they run (token -> entry).

    ``lock`` is the engine's: it guards ``running`` and ``dead`` between the lane and the watcher.
    """

    def __init__(self, lock: threading.Lock, host: LoopThread | None = None) -> None:
        self.host = host  # None: the engine's own loop
        self.dead = False  # abandoned: it takes no more items and logs nothing more
        self.running: dict[int, Entry] = {}
        self._lock = lock
        self._worker: Worker | None = None
        self._tasks: set[asyncio.Future[str]] = set()
        # Items given up while their worker was still in them: first ``_given_up``, then, once another
        # worker took that one's place, ``_replaced`` (the lane does not wait for such a worker).
        self._given_up: set[int] = set()
        self._replaced: set[int] = set()
        self._active = 0  # workers neither finished nor replaced
        self._finished: asyncio.Future[None] | None = None

    async def run(self, worker: Worker, count: int) -> None:
        """Runs ``count`` workers (``worker(lane)``, returning ``"done"`` or ``"replaced"``) to the end."""
        if self.host is not None:
            watched_loop()  # the workers' tasks inherit it: quick sync user functions may run inline
        self._worker = worker
        self._finished = asyncio.get_running_loop().create_future()
        for _ in range(count):
            self._start()
        try:
            await self._finished
        finally:
            for task in self._tasks:
                task.cancel()

    def end(self, token: int) -> Literal["mine", "given up", "replaced"]:
        """What became of item ``token`` when its worker is back from it (call with the lock held).

        ``"mine"``: the worker logs it; ``"given up"``: the watcher logged it, the worker goes on;
        ``"replaced"``: another worker took this one's place, which ends.
        """
        if not self.dead and self.running.pop(token, None) is not None:
            return "mine"
        if token in self._replaced:
            self._replaced.discard(token)
            return "replaced"
        self._given_up.discard(token)
        return "given up"

    def late(self, limit: float) -> list[int]:
        """The items running for more than ``limit`` seconds."""
        now = time.monotonic()
        with self._lock:
            return [token for token, (_, _, begun) in self.running.items() if now - begun > limit]

    def take_over(self, tokens: list[int] | None) -> list[Entry]:
        """Takes items ``tokens`` from the lane (None: all, and the lane is abandoned); lock held.

        A worker still in a taken item is replaced by a fresh one, unless the lane is abandoned.
        """
        if tokens is None:
            self.dead = True
            tokens = list(self.running)
        entries = []
        for token in tokens:
            entry = self.running.pop(token, None)
            if entry is None:
                continue  # finished meanwhile
            if self.host is not None and not self.dead:
                self._given_up.add(token)
                self.host.loop.call_soon_threadsafe(self._replace, token)
            entries.append(entry)
        return entries

    def _start(self) -> None:
        assert self._worker is not None
        task = asyncio.ensure_future(self._worker(self))
        self._active += 1
        self._tasks.add(task)
        task.add_done_callback(self._worker_done)

    def _worker_done(self, task: asyncio.Future[str]) -> None:
        self._tasks.discard(task)
        failed = None if task.cancelled() else task.exception()
        if failed is None and not task.cancelled() and task.result() == "replaced":
            return  # no longer counted
        self._active -= 1
        assert self._finished is not None
        if self._finished.done():
            return
        if failed is not None:
            self._finished.set_exception(failed)
        elif self._active == 0:
            self._finished.set_result(None)

    def _replace(self, token: int) -> None:
        # On the lane's loop, like the worker's return from the item: the first of the two claims it.
        with self._lock:
            if token not in self._given_up or self.dead:
                return  # the worker came back meanwhile and took the next item
            self._given_up.discard(token)
            self._replaced.add(token)
        self._active -= 1
        self._start()


async def watch(
    lane: Lane,
    finished: asyncio.Future[None],
    timeout: float | None,
    give_up: Callable[[Lane, list[int] | None], None],
) -> bool:
    """Waits for ``lane`` to finish (True), or abandons it once it is found blocked (False).

    ``give_up(lane, tokens)`` logs items as timed out: the late ones of a lane that answers, or (None)
    every item of a blocked one.
    """
    assert lane.host is not None
    while True:
        done, _ = await asyncio.wait({finished}, timeout=None if timeout is None else TICK_S)
        if done:
            finished.result()
            return True
        assert timeout is not None
        late = lane.late(timeout + GRACE_S)
        if not late:
            continue
        if await lane.host.responds(ANSWER_S):
            give_up(lane, late)  # a loop late under load: these items alone are given up
            continue
        give_up(lane, None)
        return False


class Alarm:
    """The per-item timeout of a lane on the engine's own loop: one timer for every item, due when the oldest
    item's time is up, instead of a deadline per item (``within``: a timer's share, a wait object, a
    coroutine frame). A late item's worker task is cancelled once; :meth:`end` says whether a
    cancellation was the alarm's, and takes it back (Python 3.11+: ``Task.uncancel``).
    """

    def __init__(self, lane: Lane, timeout: float) -> None:
        self.lane, self.timeout = lane, timeout
        # token -> the worker task running the item, and that task's cancellation requests when the item
        # began: counted then, not when the alarm rings, since a Ctrl+C may already be requested (not yet
        # delivered) by then and must not be taken back as the alarm's.
        self.tasks: dict[int, tuple[asyncio.Task[Any], int]] = {}
        self._rung: set[int] = set()
        self._handle: asyncio.TimerHandle | None = None

    def watch(self, token: int, task: asyncio.Task[Any], begun: float) -> None:
        """Item ``token`` (in ``lane.running``, begun at ``begun``) runs in ``task`` from now on."""
        if sys.version_info < (3, 11):  # pragma: no cover - the engine makes no alarm on 3.10
            raise NotImplementedError("Task.cancelling is 3.11+")
        self.tasks[token] = (task, task.cancelling())
        if self._handle is None:
            self._arm(begun)

    def end(self, token: int, task: asyncio.Task[Any]) -> bool | None:
        """Forgets item ``token``: None if the alarm did not cancel it; else True, its cancellation taken
        back, or False when the task was also cancelled by someone else (that cancellation stands)."""
        if sys.version_info < (3, 11):  # pragma: no cover - the engine makes no alarm on 3.10
            raise NotImplementedError("Task.uncancel is 3.11+")
        _, before = self.tasks.pop(token)
        if token not in self._rung:
            return None
        self._rung.discard(token)
        return task.uncancel() <= before

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _arm(self, begun: float) -> None:
        delay = max(begun + self.timeout - time.monotonic(), 0.0)
        self._handle = asyncio.get_running_loop().call_later(delay, self._ring)

    def _ring(self) -> None:
        self._handle = None
        now = time.monotonic()
        oldest = None
        for token, (_, _, begun) in list(self.lane.running.items()):
            watched = self.tasks.get(token)
            if watched is None or token in self._rung:
                continue
            if now - begun >= self.timeout:
                self._rung.add(token)
                watched[0].cancel()
            elif oldest is None or begun < oldest:
                oldest = begun
        if oldest is not None:
            self._arm(oldest)
