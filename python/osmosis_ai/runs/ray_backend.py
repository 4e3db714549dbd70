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
import logging
import os
import socket
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.runs.backends import BackendError, BackendReport, ExecutorSpec
from osmosis_ai.runs.ray_modules import runtime_env_for
from osmosis_ai.runs.ray_worker import Worker
from osmosis_ai.runs.work import RunControl, WorkItem

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
# Seconds to wait for the cluster's address to accept a connection.
_CONNECT_S = 5.0


def _forwarded_env() -> dict[str, str]:
    from osmosis_ai.llm.network import proxy_variables

    # The proxy and certificate variables too: a worker's model calls leave by the driver's route.
    return {
        **proxy_variables(),
        **{
            k: v
            for k, v in os.environ.items()
            if k.endswith(_FORWARDED_SUFFIXES) or k.startswith(_FORWARDED_PREFIXES)
        },
    }


def _no_cluster(address: str, why: str) -> str:
    return (
        f"No Ray cluster at '{address}' ({why}). Start one (`ray start --head`), set RAY_ADDRESS or "
        "--ray-address to its address, or use --ray-address local for a head here."
    )


def _check_reachable(address: str) -> None:
    """Fails at once when nothing listens at the cluster's address (``ray.init`` retries for minutes)."""
    target = address.removeprefix("ray://")
    if target == address:
        try:  # `auto` and names resolved as Ray resolves them (private API: on failure Ray judges)
            from ray._private.services import canonicalize_bootstrap_address

            target = canonicalize_bootstrap_address(address) or ""
        except Exception:
            return
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        return  # no running cluster recorded for `auto`: ray.init says so itself, at once
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_CONNECT_S).close()
    except OSError as exc:
        raise BackendError(_no_cluster(address, f"nothing answers at {target}: {exc}")) from exc


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
        if address is not None:
            _check_reachable(address)
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except ConnectionError as exc:
            raise BackendError(_no_cluster(self.address, str(exc))) from exc

    def _new_actor(self) -> Any:
        actor_class = ray.remote(Worker)
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
                    if pending.future.done():  # cancelled by Ctrl+C while it waited
                        continue
                    if pending.control.stop_reason is not None:
                        # As on one machine: after an early stop nothing more starts (a resume runs it).
                        pending.future.set_result(None)
                        continue
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
                finished, lines = await ref
                for level, name, message in lines:  # as if logged here: the command's log takes it
                    logging.getLogger(name).log(level, "%s", message)
                for position, record, stop_reason in finished:
                    received.add(position)
                    if record is not None:  # None: not started, the worker's session stopped early
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
