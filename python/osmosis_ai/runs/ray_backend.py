"""The ``ray`` backend: work items run on Ray actors, records stream back to the driver's engine.

The driver keeps everything that makes a session one session (the queue, progress, Ctrl+C, early stop,
the one results log); here work items are grouped into batches for actors, and the records each actor
finishes come back as they finish (an actor's batch call is a streaming generator). Every actor opens
the command's :class:`~osmosis_ai.runs.backends.ExecutorSpec` once and runs its items through a
:class:`~osmosis_ai.runs.engine.RunEngine` of its own, so per-item timeouts and error rules are the
engine's, unchanged. An item whose actor dies before its record arrived is sent again once, to another
actor (a new one replaces the dead); lost a second time, it is reported and left out of the log, so a
resume runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.runs.backends import BackendError, BackendReport, ExecutorSpec, set_worker_paths
from osmosis_ai.runs.engine import RunControl, RunEngine, WorkItem
from osmosis_ai.runs.ray_modules import find_shipped, runtime_env_for, shipped_key

try:
    import ray
    from ray.exceptions import RayActorError, RayError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise BackendError(
        "--backend ray needs Ray, which is not installed: pip install 'osmosis-ai[ray]'"
    ) from exc

__all__ = ["RayBackend"]

# Environment a worker needs to reach the same models as the driver (keys are read when a call is
# made). Sent with the actor's arguments, never in the runtime environment (which Ray shows in its UI).
_FORWARDED_SUFFIXES = ("_API_KEY", "_BASE_URL", "_API_BASE", "_API_VERSION")
_FORWARDED_PREFIXES = ("OSMOSIS_", "LITELLM_")
# A batch is sent once this many items wait, or after this pause (seconds) when fewer do.
_LINGER = 0.002
# An actor sends back what finished within this many seconds of the first record in one message.
_COALESCE = 0.005


def _forwarded_env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if k.endswith(_FORWARDED_SUFFIXES) or k.startswith(_FORWARDED_PREFIXES)
    }


class _Worker:
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
        import socket

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
            isolate=self._spec.isolate,
        )
        self._slots = asyncio.Semaphore(self._concurrency)
        return name, None

    async def run_batch(self, items: list[WorkItem]) -> Any:
        """Yields lists of ``(position in the batch, record, stop reason)`` as items finish."""
        assert self._engine is not None and self._slots is not None and self._context is not None
        if self._spec.isolate:
            async for finished in self._run_isolated(items):
                yield finished
            return
        engine, slots = self._engine, self._slots

        async def one(position: int, item: WorkItem) -> tuple[int, dict[str, Any], str | None]:
            async with slots:  # the timeout starts when the item runs, not while it waits here
                record = await engine.run_item(item)
            return position, record, engine.control.stop_reason

        loop = asyncio.get_running_loop()
        pending = {self._context.run(loop.create_task, one(i, item)) for i, item in enumerate(items)}
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if pending:
                # What else finishes within a few ms goes back in the same message: each message is a
                # Ray object, so instant items would otherwise cost one object each.
                more, pending = await asyncio.wait(pending, timeout=_COALESCE)
                done |= more
            yield [task.result() for task in done]

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
        session = self._context.run(loop.create_task, engine.run(items))
        left = len(items)
        try:
            while left:
                taken = asyncio.ensure_future(finished.get())
                await asyncio.wait({taken, session}, return_when=asyncio.FIRST_COMPLETED)
                if not taken.done():
                    taken.cancel()
                    session.result()  # the session ended without every record: raise what ended it
                    return
                await asyncio.sleep(_COALESCE)  # as above: what finishes meanwhile shares the message
                records = [taken.result()]
                while not finished.empty():
                    records.append(finished.get_nowait())
                left -= len(records)
                yield [(position[_item_key(r)], r, engine.control.stop_reason) for r in records]
        finally:
            if not session.done():
                session.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await session

    async def stop(self) -> None:
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


@dataclass
class _Slot:
    """A worker the driver talks to, and the items it holds."""

    handle: Any
    name: str = ""
    in_flight: int = 0
    alive: bool = True
    # Actor calls run concurrently on an async actor: nothing is sent before its executor is open.
    ready: bool = False


@dataclass
class _Pending:
    item: WorkItem
    future: asyncio.Future[dict[str, Any] | None]
    control: RunControl
    attempts: int = 0


@dataclass
class _State:
    queue: deque[_Pending] = field(default_factory=deque)
    streams: set[asyncio.Task[None]] = field(default_factory=set)


class RayBackend:
    """Runs items on Ray actors; see the module docstring.

    Args:
        spec: How each actor rebuilds the command's executor.
        address: Ray address (``auto``: a running cluster; ``local``: a head started here).
        workers: Actors to start; None means one per CPU of the cluster.
        concurrency: Items each actor runs at once (the command's concurrency).
        item_timeout: The engine's per-item timeout, applied on the actor.
        report: Filled in with how the items were spread.
    """

    def __init__(
        self,
        spec: ExecutorSpec,
        *,
        address: str = "auto",
        workers: int | None = None,
        concurrency: int = 1,
        item_timeout: float | None = None,
        report: BackendReport | None = None,
    ) -> None:
        self.spec = spec
        self.address = address
        self.requested_workers = workers
        self.concurrency = max(1, concurrency)
        self.item_timeout = item_timeout
        # An actor holds two batches, so the next one is there when the running one ends.
        self.batch = max(self.concurrency, 16)
        self.capacity = 2 * self.batch
        self.report = report if report is not None else BackendReport()
        self.report.name = "ray"
        self._slots: list[_Slot] = []
        self._state = _State()
        self._wake = asyncio.Event()
        self._dispatcher: asyncio.Task[None] | None = None
        self._options: dict[str, Any] = {}
        self._env = _forwarded_env()

    def slots(self) -> int:
        """Items the driver keeps in flight: every actor's capacity."""
        return self.capacity * len(self._slots)

    async def start(self) -> None:
        """Connects to Ray, starts the actors and waits until each has opened its executor."""
        self._connect()
        workers = self.requested_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        env = runtime_env_for(self.spec.modules(), self.spec.paths())
        self._options = {"num_cpus": 1, "runtime_env": env}
        self._slots = [_Slot(self._new_actor()) for _ in range(workers)]
        await asyncio.gather(*(self._ready(slot) for slot in self._slots))
        self.report.workers = workers
        self._dispatcher = asyncio.create_task(self._dispatch())

    def _connect(self) -> None:
        if ray.is_initialized():
            return  # a session (a test, a notebook) already connected: use it
        address = None if self.address == "local" else self.address
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except ConnectionError as exc:
            raise BackendError(
                f"No Ray cluster at '{self.address}' ({exc}). Start one (`ray start --head`), set "
                "RAY_ADDRESS or --ray-address to its address, or use --ray-address local for a head here."
            ) from exc

    def _new_actor(self) -> Any:
        actor_class = ray.remote(_Worker)
        return actor_class.options(**self._options).remote(
            self.spec, self.concurrency, self.item_timeout, self._env, self.spec.paths()
        )

    async def _ready(self, slot: _Slot) -> None:
        try:
            slot.name, problem = await slot.handle.start.remote()
        except RayError as exc:
            raise BackendError(f"A Ray worker could not start: {exc}") from exc
        if problem is not None:
            modules = ", ".join([*self.spec.modules(), *self.spec.paths()]) or "none"
            raise BackendError(
                f"A Ray worker ({slot.name}) cannot load the job's code: {problem}. The workers receive "
                f"these modules and folders through Ray's runtime environment: {modules}; every other import "
                "(osmosis-ai[ray] itself, the modules' dependencies) must be installed on the cluster's nodes."
            )
        self.report.items_per_worker.setdefault(slot.name, 0)
        slot.ready = True
        self._wake.set()

    async def run_item(self, item: WorkItem, control: RunControl) -> dict[str, Any] | None:
        """Queues the item for the next batch and waits for its record."""
        future: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._state.queue.append(_Pending(item, future, control))
        self._wake.set()
        return await future

    async def _dispatch(self) -> None:
        queue = self._state.queue
        while True:
            await self._wake.wait()
            self._wake.clear()
            if len(queue) < self.batch:
                await asyncio.sleep(_LINGER)  # let the engine's other workers add theirs
            while queue:
                alive = [s for s in self._slots if s.alive and s.ready]
                if not alive:
                    break
                slot = max(alive, key=lambda s: self.capacity - s.in_flight)
                room = self.capacity - slot.in_flight
                if room <= 0:
                    break  # a stream that ends sets the wake event again
                batch: list[_Pending] = []
                while queue and len(batch) < min(room, self.batch):
                    pending = queue.popleft()
                    if not pending.future.done():  # cancelled by Ctrl+C while it waited
                        batch.append(pending)
                if batch:
                    slot.in_flight += len(batch)
                    task = asyncio.create_task(self._stream(slot, batch))
                    self._state.streams.add(task)
                    task.add_done_callback(self._state.streams.discard)

    async def _stream(self, slot: _Slot, batch: list[_Pending]) -> None:
        received: set[int] = set()
        try:
            generator = slot.handle.run_batch.remote([p.item for p in batch])
            async for ref in generator:
                for position, record, stop_reason in await ref:
                    received.add(position)
                    self.report.items_per_worker[slot.name] = (
                        self.report.items_per_worker.get(slot.name, 0) + 1
                    )
                    pending = batch[position]
                    if stop_reason is not None:
                        pending.control.stop_early(stop_reason)
                    if not pending.future.done():
                        pending.future.set_result(record)
            if len(received) < len(batch):
                raise RayError(f"a worker's batch ended after {len(received)} of {len(batch)} records")
        except Exception as exc:  # a dead actor, or anything else: its items must not wait forever
            await self._lost(slot, [p for i, p in enumerate(batch) if i not in received], exc)
        finally:
            slot.in_flight -= len(batch)
            self._wake.set()

    async def _lost(self, slot: _Slot, lost: list[_Pending], exc: Exception) -> None:
        replacement: _Slot | None = None
        if slot.alive:
            # Not only RayActorError: a dying actor's stream can also end in an object-lost error.
            # Either way nothing more is sent there; an actor still running is ended, never reused.
            slot.alive = False
            if not isinstance(exc, RayActorError):
                with contextlib.suppress(RayError):
                    ray.kill(slot.handle)
            replacement = _Slot(self._new_actor())
            self._slots.append(replacement)
            self.report.replaced_workers += 1
        for pending in lost:
            if pending.future.done():
                continue
            if pending.attempts == 0:
                pending.attempts = 1
                self.report.retried += 1
                self._state.queue.appendleft(pending)
            else:
                self.report.lost += 1
                pending.future.set_result(None)
        self._wake.set()  # the retries go to the other workers while the replacement starts
        if replacement is not None:
            try:
                await self._ready(replacement)
            except BackendError:
                replacement.alive = False
        if not any(s.alive for s in self._slots):
            self._fail_all(BackendError(f"Every Ray worker was lost ({exc})"))

    def _fail_all(self, problem: BackendError) -> None:
        # No worker is left to run anything: the session ends with the reason (what finished is logged).
        while self._state.queue:
            pending = self._state.queue.popleft()
            if not pending.future.done():
                pending.future.set_exception(problem)

    async def close(self) -> None:
        """Stops dispatching and ends the actors (items still running on them are not logged)."""
        tasks = [t for t in (self._dispatcher, *self._state.streams) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for slot in self._slots:
            if slot.alive:
                with contextlib.suppress(RayError, asyncio.TimeoutError, TimeoutError):
                    await asyncio.wait_for(slot.handle.stop.remote(), 10)
            with contextlib.suppress(RayError):
                ray.kill(slot.handle)
        self.report.workers = len(self._slots)
