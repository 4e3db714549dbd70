"""The Ray actor of the ``ray`` backend: opens the command's executor once, then runs batches of items.

Items run with the engine's rules (per-item timeout, error rules, early stop), on the actor as on one
machine. The driver (:mod:`osmosis_ai.runs.ray_backend`) receives, for every item of a batch, exactly one
``(position in the batch, record, stop reason)``: the record is None for an item the actor did not start
because its session stopped early (not logged, so a resume runs it; the reason stops the driver too). A
batch that ends with items missing (the actor died, a bug) is the driver's to retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import socket
from typing import Any

from osmosis_ai.runs.backends import ExecutorSpec, set_worker_paths
from osmosis_ai.runs.engine import RunEngine, WorkItem
from osmosis_ai.runs.ray_modules import find_shipped, shipped_key

__all__ = ["Worker"]

# An actor sends back what finished within this many seconds of the first record in one message.
_COALESCE = 0.005

Finished = tuple[int, "dict[str, Any] | None", "str | None"]


class Worker:
    """One Ray actor: opens the executor once, then runs batches with the engine's rules.

    User code runs as on one machine: with the spec's ``isolate``, each batch is a session of the engine's
    own isolated mode (items on a watched loop in a daemon thread), so an agent that blocks cannot stop
    this actor's timeouts or its stream of records.
    """

    def __init__(
        self,
        spec: ExecutorSpec,
        concurrency: int,
        item_timeout: float | None,
        env: dict[str, str],
        paths: list[str],
    ) -> None:
        os.environ.update(env)
        self._spec = spec
        self._paths = paths
        self._concurrency = concurrency
        self._item_timeout = item_timeout
        self._engine: RunEngine | None = None
        self._executor: Any = None
        self._slots: asyncio.Semaphore | None = None
        self._context: contextvars.Context | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        # The isolated sessions running now: ended before the executor closes.
        self._sessions: set[asyncio.Task[Any]] = set()

    async def _hold(self, ready: asyncio.Future[Any]) -> None:
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
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._holder = asyncio.create_task(self._hold(ready))
        try:
            executor, self._context = await ready
        except Exception as exc:  # reported to the driver, which stops with a clear message
            return name, f"{type(exc).__name__}: {exc}"
        self._executor = executor
        self._engine = RunEngine(
            executor,
            None,
            concurrency=self._concurrency,
            item_timeout=self._item_timeout,
            handle_signals=False,
        )
        self._slots = asyncio.Semaphore(self._concurrency)
        return name, None

    async def run_batch(self, items: list[WorkItem]) -> Any:
        """Yields lists of ``(position in the batch, record or None, stop reason)`` as items finish."""
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

    async def _run_isolated(self, items: list[WorkItem]) -> Any:
        """The batch as one isolated engine session; its records reach this loop through a queue."""
        assert self._context is not None
        loop = asyncio.get_running_loop()
        finished: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        engine = RunEngine(
            self._executor,
            _LoopSink(loop, finished),
            concurrency=self._concurrency,
            item_timeout=self._item_timeout,
            handle_signals=False,
            isolate=True,
        )
        position = {_item_key(item): i for i, item in enumerate(items)}
        left = set(position.values())
        session = self._context.run(loop.create_task, engine.run(items))
        self._sessions.add(session)
        session.add_done_callback(self._sessions.discard)
        try:
            while left:
                taken = asyncio.ensure_future(finished.get())
                await asyncio.wait({taken, session}, return_when=asyncio.FIRST_COMPLETED)
                if not taken.done():
                    taken.cancel()
                    # Every record is queued before the session ends; what is left was never started:
                    # the session stopped early (anything else raises here, and the driver retries).
                    reason = session.result().stop_reason
                    if reason is None:
                        raise RuntimeError(f"an isolated session ended with {len(left)} items not run")
                    yield [(i, None, reason) for i in sorted(left)]
                    return
                await asyncio.sleep(_COALESCE)  # as above: what finishes meanwhile shares the message
                records = [taken.result()]
                while not finished.empty():
                    records.append(finished.get_nowait())
                batch = [(position[_item_key(r)], r, engine.control.stop_reason) for r in records]
                left.difference_update(i for i, _, _ in batch)
                yield batch
        finally:
            if not session.done():
                session.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await session

    async def stop(self) -> None:
        """Ends the batches still running, then closes the executor."""
        for session in list(self._sessions):
            session.cancel()
        await asyncio.gather(*self._sessions, return_exceptions=True)
        if self._stop is not None and self._holder is not None:
            self._stop.set()
            await self._holder


class _LoopSink:
    """The results sink of a worker's isolated session: records, written from the engine's lane thread
    (under its lock), are handed to the actor's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self._loop, self._queue = loop, queue

    def append(self, record: dict[str, Any]) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, record)


def _item_key(item: WorkItem | dict[str, Any]) -> tuple[int, int, str]:
    if isinstance(item, dict):
        return item["row_index"], item["run_index"], item.get("model_tag") or ""
    return item.row_index, item.run_index, item.model_tag
