"""The Ray actor of the ``ray`` backend: opens the command's executor once, then runs batches of items.

Items run with the engine's rules (per-item timeout, error rules, early stop), on the actor as on one
machine. The driver (:mod:`osmosis_ai.runs.ray_backend`) receives, for every item of a batch, exactly one
``(position in the batch, record, stop reason)``: the record is None for an item the actor did not start
because its session stopped early (not logged, so a resume runs it; the reason stops the driver too). A
batch that ends with items missing (the actor died, a bug) is the driver's to retry. Each message also
carries what Python logging received on the actor since the last one (``(level, logger name, message)``),
which the driver logs again, so the command's log holds it as on one machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import socket
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from osmosis_ai.redact import redact, redact_log_records, redact_std_streams, remember_environment
from osmosis_ai.runs.backends import ExecutorSpec, set_worker_paths
from osmosis_ai.runs.engine import RunEngine
from osmosis_ai.runs.ray_modules import find_shipped, shipped_key
from osmosis_ai.runs.work import Executor, MemorySink, RunControl, RunOutcome, WorkItem

__all__ = ["Worker"]

# An actor sends back what finished within this many seconds of the first record in one message.
_COALESCE = 0.005

Finished = tuple[int, "dict[str, Any] | None", "str | None"]
LogLine = tuple[int, str, str]
# Log lines an actor keeps between two messages (the oldest go first past this).
_LOG_LINES_KEPT = 10_000


class _LogBuffer(logging.Handler):
    """Keeps what reaches the actor's root logger (INFO and up, as the command's own log) for the driver."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self._lines: deque[LogLine] = deque(maxlen=_LOG_LINES_KEPT)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            # Masked here: secrets only this actor knows (its own bridge token) stay here.
            self._lines.append((record.levelno, record.name, redact(record.getMessage())))
        except Exception:  # a log line must never fail an item
            self.handleError(record)

    def drain(self) -> list[LogLine]:
        lines = []
        while self._lines:
            lines.append(self._lines.popleft())
        return lines


class Worker:
    """One Ray actor: opens the executor once, then runs batches with the engine's rules.

    User code runs as on one machine: with the spec's ``isolate``, the batches join one session of the
    engine's own isolated mode (items on a watched loop in a daemon thread, :class:`_Isolated`), so an
    agent that blocks cannot stop this actor's timeouts or its stream of records.
    """

    def __init__(
        self,
        spec: ExecutorSpec,
        concurrency: int,
        item_timeout: float | None,
        env: dict[str, str],
        paths: list[str],
    ) -> None:
        # What the user's code prints or logs lands in the cluster's worker logs: masked as on the driver.
        os.environ.update(env)
        redact_std_streams()
        redact_log_records()
        remember_environment()
        self._logs = _LogBuffer()
        logging.getLogger().addHandler(self._logs)
        from osmosis_ai.llm.network import network_settings

        network_settings()  # learns the proxy credentials, so what the worker prints masks them
        self._spec = spec
        self._paths = paths
        self._concurrency = concurrency
        self._item_timeout = item_timeout
        self._engine: RunEngine | None = None
        self._executor: Executor | None = None
        self._slots: asyncio.Semaphore | None = None
        self._context: contextvars.Context | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._isolated: _Isolated | None = None

    async def _hold(self, ready: asyncio.Future[tuple[Executor, contextvars.Context]]) -> None:
        # The executor's context (a transport pool found through a context variable) is entered and
        # left in this one task; items run in copies of its context.
        assert self._stop is not None
        try:
            async with self._spec.open() as executor:
                ready.set_result((executor, contextvars.copy_context()))
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)

    async def start(self) -> tuple[str, str | None]:
        """(this worker's name, the reason it cannot run items or None)."""
        name = f"{socket.gethostname()}:{os.getpid()}"
        found = {path: find_shipped(shipped_key(path)) for path in self._paths}
        missing = [path for path, here in found.items() if here is None]
        if missing:
            return name, f"the runtime environment did not bring {', '.join(missing)}"
        set_worker_paths({path: str(here) for path, here in found.items()})
        self._stop = asyncio.Event()
        ready: asyncio.Future[tuple[Executor, contextvars.Context]] = (
            asyncio.get_running_loop().create_future()
        )
        self._holder = asyncio.create_task(self._hold(ready))
        try:
            executor, self._context = await ready
        except Exception as exc:  # reported to the driver, which stops with a clear message
            return name, f"{type(exc).__name__}: {exc}"
        self._executor = executor
        self._engine = RunEngine(
            executor,
            MemorySink(),  # never written: run_item does not log; the driver logs what comes back
            concurrency=self._concurrency,
            item_timeout=self._item_timeout,
            handle_signals=False,
        )
        self._slots = asyncio.Semaphore(self._concurrency)
        return name, None

    async def run_batch(self, items: list[WorkItem]) -> AsyncIterator[tuple[list[Finished], list[LogLine]]]:
        """Yields ``(finished, log lines)``: ``finished`` lists ``(position in the batch, record or None, stop
        reason)`` as items finish; the log lines are what the actor logged meanwhile."""
        async for finished in self._batch(items):
            yield finished, self._logs.drain()

    async def _batch(self, items: list[WorkItem]) -> AsyncIterator[list[Finished]]:
        assert self._engine is not None and self._slots is not None and self._context is not None
        if self._spec.isolate:
            async for finished in self._run_isolated(items):
                yield finished
            return
        engine, slots = self._engine, self._slots

        async def one(position: int, item: WorkItem) -> Finished:
            async with slots:  # the timeout starts when the item runs, not while it waits here
                if engine.control.stop_reason is not None:
                    return position, None, engine.control.stop_reason  # as one machine: not started
                record = await engine.run_item(item)
            return position, record, engine.control.stop_reason

        loop = asyncio.get_running_loop()
        pending = {self._context.run(loop.create_task, one(i, item)) for i, item in enumerate(items)}
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if pending:
                    # What else finishes within a few ms goes back in the same message: each message is a
                    # Ray object, so instant items would otherwise cost one object each.
                    more, pending = await asyncio.wait(pending, timeout=_COALESCE)
                    done |= more
                yield [task.result() for task in done]
        finally:
            for task in pending:  # the driver stopped listening: nobody wants these records
                task.cancel()

    async def _run_isolated(self, items: list[WorkItem]) -> AsyncIterator[list[Finished]]:
        """The batch joins the actor's isolated session (started when none runs); yields as run_batch."""
        assert self._context is not None and self._executor is not None
        current = self._isolated
        if current is None or (current.ended and current.stop_reason is None):  # stopped early: stays so
            current = self._isolated = _Isolated(
                self._executor, self._concurrency, self._item_timeout, self._context
            )
        async for finished in current.run(items):
            yield finished

    async def stop(self) -> None:
        """Ends the batches still running, then closes the executor."""
        if self._isolated is not None:
            await self._isolated.close()
        if self._stop is not None and self._holder is not None:
            self._stop.set()
            await self._holder


class _Isolated:
    """An actor's isolated engine session (items on a watched lane), shared by the batches it holds.

    One session with the actor's concurrency, whatever the number of batches held: a session per batch
    would run two batches' worth at once (the driver keeps two per actor). Batches feed it items as they
    arrive; each finished record is routed back to the batch that sent its item. The session ends when
    the actor stops, when it stops early (every item not started then is answered "not run" with the
    reason, also those of later batches), or on an error (each batch still waiting raises it).
    """

    def __init__(
        self, executor: Executor, concurrency: int, item_timeout: float | None, context: contextvars.Context
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._feed = _Feed()
        self._engine = RunEngine(
            _FeedExecutor(executor, self._feed),
            _Router(self._loop, self._route),
            concurrency=concurrency,
            item_timeout=item_timeout,
            handle_signals=False,
            isolate=True,
        )
        # Item key -> (the queue of the batch that sent it, its position in that batch).
        self._owners: dict[tuple[int, int, str], tuple[asyncio.Queue[Finished | BaseException], int]] = {}
        self._task = context.run(self._loop.create_task, self._engine.run(self._feed))
        self._task.add_done_callback(self._ended)
        self.ended = False

    async def run(self, items: list[WorkItem]) -> AsyncIterator[list[Finished]]:
        queue: asyncio.Queue[Finished | BaseException] = asyncio.Queue()
        keys = [_item_key(item) for item in items]
        for position, key in enumerate(keys):
            self._owners[key] = (queue, position)
        reason = self._engine.control.stop_reason
        if reason is not None:  # stopped early: nothing more starts
            self._answer_not_run(items, reason)
        else:
            self._feed.add(items)
        left = len(items)
        try:
            while left:
                finished = [await queue.get()]
                await asyncio.sleep(_COALESCE)  # what finishes meanwhile shares the message (see run_batch)
                while not queue.empty():
                    finished.append(queue.get_nowait())
                for entry in finished:
                    if isinstance(entry, BaseException):
                        raise entry  # the session failed: the driver retries the batch elsewhere
                left -= len(finished)
                yield [entry for entry in finished if not isinstance(entry, BaseException)]  # none is, now
        finally:
            self._feed.take(set(keys))  # the driver stopped listening: what has not started never will
            for key in keys:
                if self._owners.get(key, (None, 0))[0] is queue:
                    del self._owners[key]

    def _route(self, record: dict[str, Any]) -> None:
        owner = self._owners.pop(_item_key(record), None)
        if owner is not None:  # None: its batch is gone
            queue, position = owner
            queue.put_nowait((position, record, self._engine.control.stop_reason))

    def _answer_not_run(self, items: list[WorkItem], reason: str) -> None:
        for item in items:
            owner = self._owners.pop(_item_key(item), None)
            if owner is not None:
                owner[0].put_nowait((owner[1], None, reason))

    def _ended(self, task: asyncio.Task[RunOutcome]) -> None:
        # Runs after every record of the session was routed (they were scheduled on this loop first).
        self.ended = True
        self._feed.close()
        left = self._feed.take(None)
        error = None if task.cancelled() else task.exception()
        if error is None and not task.cancelled() and (reason := task.result().stop_reason) is not None:
            self._answer_not_run(left, reason)
        # Anything still owed cannot come any more: those batches raise, and the driver retries them.
        problem = error or RuntimeError("the worker's isolated session ended with items not run")
        for queue in {id(q): q for q, _ in self._owners.values()}.values():
            queue.put_nowait(problem)
        self._owners.clear()

    @property
    def stop_reason(self) -> str | None:
        """Why the session stopped early, or None."""
        return self._engine.control.stop_reason

    async def close(self) -> None:
        self._feed.close()
        if not self._task.done():
            self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


# The stand-in item an engine worker of an isolated session runs while the actor has no item for it: it
# waits for work (its record is dropped) instead of leaving the session, which could not grow again.
_IDLE = WorkItem(-1, {}, "", -1, "")
_IDLE_MARK = "__osmosis_idle__"
# How often a waiting stand-in looks whether the session stopped early.
_IDLE_POLL = 0.25


class _Feed:
    """The items of an isolated session, taken by the engine on its lane thread (hence the lock)."""

    def __init__(self) -> None:
        self._items: deque[WorkItem] = deque()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._closed = False

    def __iter__(self) -> _Feed:
        return self

    def __next__(self) -> WorkItem:
        with self._lock:
            if self._closed:
                raise StopIteration
            return self._items.popleft() if self._items else _IDLE

    def add(self, items: list[WorkItem]) -> None:
        with self._lock:
            self._items.extend(items)
        self._wake()

    def take(self, keys: set[tuple[int, int, str]] | None) -> list[WorkItem]:
        """Removes and returns the items not started yet: all (None), or those with these keys."""
        with self._lock:
            taken = [i for i in self._items if keys is None or _item_key(i) in keys]
            if taken:
                self._items = deque(i for i in self._items if keys is not None and _item_key(i) not in keys)
        return taken

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._wake()

    def _wake(self) -> None:
        with self._lock:
            waiters, self._waiters = self._waiters, []
        for loop, woken in waiters:
            with contextlib.suppress(RuntimeError):  # an abandoned lane's loop may be closed
                loop.call_soon_threadsafe(_resolve, woken)

    async def wait(self, control: RunControl) -> None:
        """Returns once there is an item, the feed is closed, or the session stopped early."""
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._items or self._closed:
                return
            self._waiters.append((loop, woken))
        try:
            while not control.stop_event.is_set():
                done, _ = await asyncio.wait({woken}, timeout=_IDLE_POLL)
                if done:
                    return
        finally:
            with self._lock, contextlib.suppress(ValueError):
                self._waiters.remove((loop, woken))


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _FeedExecutor:
    """The actor's executor, plus the stand-in :data:`_IDLE` item, which only waits for work."""

    def __init__(self, executor: Executor, feed: _Feed) -> None:
        self._executor, self._feed = executor, feed

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        return {_IDLE_MARK: True} if item is _IDLE else self._executor.new_record(item)

    async def execute(self, item: WorkItem, record: dict[str, Any], control: RunControl) -> None:
        if item is _IDLE:
            await self._feed.wait(control)
        else:
            await self._executor.execute(item, record, control)

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        if item is not _IDLE:
            self._executor.finish(item, record)


class _Router:
    """The isolated session's results sink: records, written on the lane thread (under the engine's
    lock), go to the actor's loop; a stand-in's are dropped."""

    def __init__(self, loop: asyncio.AbstractEventLoop, route: Callable[[dict[str, Any]], None]) -> None:
        self._loop, self._route = loop, route

    def append(self, record: dict[str, Any]) -> None:
        if _IDLE_MARK not in record:
            self._loop.call_soon_threadsafe(self._route, record)


def _item_key(item: WorkItem | dict[str, Any]) -> tuple[int, int, str]:
    if isinstance(item, dict):
        return item["row_index"], item["run_index"], item.get("model_tag") or ""
    return item.row_index, item.run_index, item.model_tag
