"""Where the run engine's items execute: in this process (``local``) or on Ray actors (``ray``).

A backend is not a second engine. The driver's :class:`~osmosis_ai.runs.engine.RunEngine` keeps the
work items, the bounded queue, progress, Ctrl+C, early stop and the one results log; a backend only
turns a work item into its finished record somewhere else. A remote worker cannot receive a live
executor (it holds sockets, transports, loaded modules), so the command describes it with an
:class:`ExecutorSpec`: plain, picklable data that each worker opens into its own executor.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from osmosis_ai.errors import OsmosisError
from osmosis_ai.runs.work import Executor, RunControl, WorkItem

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendError",
    "BackendOptions",
    "BackendReport",
    "ExecutorSpec",
    "backend_session",
    "start_backend",
    "worker_path",
]

BACKENDS = ("local", "ray")


class BackendError(OsmosisError, RuntimeError):
    """The backend cannot run the session (Ray missing or unreachable, a worker cannot import user code)."""


class ExecutorSpec(Protocol):
    """How a worker rebuilds the command's executor: picklable data, never a live socket or transport.

    ``open()`` runs on the worker and yields the executor for as long as the worker lives (it closes
    transports and pools on exit). ``modules()`` names the user's code the executor imports
    (``module.path`` or ``path/to/file.py``), which the backend ships to the workers. ``paths()`` names
    the folders the executor reads by (absolute) path, such as an MCP tool folder; they are shipped too,
    and ``open()`` finds them with :func:`worker_path`. ``isolate`` says whether the engine runs the
    executor on a separate event loop (``RunEngine(isolate=...)``), on a worker as on one machine.
    """

    @property
    def isolate(self) -> bool: ...

    def open(self) -> AbstractAsyncContextManager[Executor]: ...

    def modules(self) -> list[str]: ...

    def paths(self) -> list[str]: ...


# Driver path -> where the backend put it on this worker (empty on the driver and for ``local``).
_SHIPPED: dict[Path, Path] = {}


def set_worker_paths(shipped: dict[str, str]) -> None:
    """Called by a remote worker before it opens the spec: where each shipped path landed."""
    _SHIPPED.clear()
    _SHIPPED.update({Path(k): Path(v) for k, v in shipped.items()})


def worker_path(path: str | Path) -> Path:
    """Where a folder or file named on the driver is in this process (unchanged unless it was shipped).

    A path inside a shipped folder maps into the shipped copy.

    Example:
        >>> worker_path("/data/repo/mcp")  # nothing shipped into this process
        PosixPath('/data/repo/mcp')
    """
    path = Path(path)
    for original, here in _SHIPPED.items():
        if path == original or path.is_relative_to(original):
            return here / path.relative_to(original)
    return path


class Backend(Protocol):
    """What the engine asks of a backend (see ``RunEngine(backend=...)``)."""

    report: BackendReport

    def slots(self) -> int:
        """Items the driver's engine should keep in flight to keep every worker busy."""
        ...

    async def run_item(self, item: WorkItem, control: RunControl) -> dict[str, Any] | None:
        """The item's finished record, or None when it was lost twice (not logged: a resume re-runs it)."""
        ...


@dataclass(frozen=True)
class BackendOptions:
    """The ``--backend`` choice and its Ray settings.

    Args:
        name: ``local`` or ``ray``.
        ray_address: Ray cluster address; None means ``$RAY_ADDRESS``, else ``auto`` (a running
            cluster). ``local`` starts a Ray head inside this process.
        ray_workers: Actors to start; None means one per CPU of the cluster.

    Example:
        >>> BackendOptions("ray", ray_address="local").address()
        'local'
    """

    name: str = "local"
    ray_address: str | None = None
    ray_workers: int | None = None

    def address(self) -> str:
        """The address to connect to, after the ``RAY_ADDRESS`` default."""
        return self.ray_address or os.environ.get("RAY_ADDRESS", "").strip() or "auto"

    def check(self) -> BackendOptions:
        """Returns these options, or refuses ``ray`` without Ray installed and Ray settings without ``ray``
        (cheap: before any work). The messages name the fields ``backend``, ``ray_address``, ``ray_workers``."""
        import importlib.util

        from osmosis_ai.errors import RunError

        if self.name == "ray" and importlib.util.find_spec("ray") is None:
            raise RunError(
                "{backend} ray needs Ray, which is not installed: pip install 'osmosis-ai[ray]'",
                fields=("backend",),
            )
        if self.name != "ray" and (self.ray_address or self.ray_workers):
            raise RunError(
                "{ray_address} and {ray_workers} apply to {backend} ray only.",
                fields=("ray_address", "ray_workers", "backend"),
            )
        return self


@dataclass
class BackendReport:
    """How a session's items were spread: for the summary (``workers`` is 1 for ``local``)."""

    name: str = "local"
    workers: int = 1
    items_per_worker: dict[str, int] = field(default_factory=dict)
    retried: int = 0
    lost: int = 0
    replaced_workers: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The report for a ``--json`` envelope."""
        return {
            "name": self.name,
            "workers": self.workers,
            "items_per_worker": list(self.items_per_worker.values()),
            "retried": self.retried,
            "lost": self.lost,
            "replaced_workers": self.replaced_workers,
        }

    def describe(self) -> str:
        """One line: ``ray: 2 workers, items per worker 10/11, 1 retried after a lost worker``."""
        spread = "/".join(str(n) for n in self.items_per_worker.values()) or "0"
        text = (
            f"{self.name}: {self.workers} worker{'s' if self.workers != 1 else ''}, items per worker {spread}"
        )
        if self.retried:
            text += f", {self.retried} retried after a lost worker"
        if self.replaced_workers:
            text += f", {self.replaced_workers} worker(s) replaced"
        if self.lost:
            text += f", {self.lost} lost twice (not logged; resume to re-run them)"
        return text


@contextlib.asynccontextmanager
async def start_backend(
    options: BackendOptions,
    spec: ExecutorSpec,
    *,
    concurrency: int,
    item_timeout: float | None,
    report: BackendReport | None = None,
    pending: int | None = None,
) -> AsyncIterator[Backend | None]:
    """Starts the chosen backend for one session; yields None for ``local`` (the engine runs in-process).

    Each Ray worker runs its items with ``concurrency`` in flight and the ``item_timeout`` of the engine.
    ``report``, when given, is filled in with how the items were spread (read it after the session).
    ``pending`` is the number of items left to run when the command knows it before the start (a resumed
    log): with none left, nothing is started (a Ray session costs seconds) and it yields None.

    Example:
        async with start_backend(BackendOptions("ray"), spec, concurrency=8, item_timeout=600) as backend:
            engine = RunEngine(None, log, concurrency=backend.slots(), backend=backend)
    """
    if options.name == "local" or pending == 0:
        yield None
        return
    if options.name != "ray":
        raise BackendError(f"Unknown backend '{options.name}' (expected one of: {', '.join(BACKENDS)})")
    from osmosis_ai.runs.ray_backend import RayBackend

    backend = RayBackend(
        spec,
        address=options.address(),
        workers=options.ray_workers,
        concurrency=concurrency,
        item_timeout=item_timeout,
        report=report,
    )
    try:
        await backend.start()
        yield backend
    finally:  # also after a failed start: the actors that did start are ended
        await backend.close()


@contextlib.contextmanager
def backend_session(
    options: BackendOptions,
    spec: ExecutorSpec,
    *,
    concurrency: int,
    item_timeout: float | None,
    report: BackendReport | None = None,
    pending: int | None = None,
) -> Iterator[tuple[asyncio.AbstractEventLoop, Backend | None]]:
    """Starts the backend on a new event loop; yields ``(loop, backend or None)`` and closes both after.

    ``pending`` as for :func:`start_backend`: 0 starts no backend.

    For a command that must check the backend (an unreachable cluster, workers that cannot import the
    job's code) before it creates anything on disk, with plain code in between: it runs its session with
    ``loop.run_until_complete(...)``, and a prompt between the two runs with no loop running (Ctrl+C
    there stays a ``KeyboardInterrupt``).

    Example:
        with backend_session(BackendOptions("ray"), spec, concurrency=8, item_timeout=600) as (loop, backend):
            log = open_results_log()
            loop.run_until_complete(RunEngine(None, log, backend=backend).run(items))
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    stack = contextlib.AsyncExitStack()
    try:
        started = start_backend(
            options, spec, concurrency=concurrency, item_timeout=item_timeout, report=report, pending=pending
        )
        backend = loop.run_until_complete(stack.enter_async_context(started))
        try:
            yield loop, backend
        finally:
            loop.run_until_complete(stack.aclose())
    finally:
        _close_loop(loop)


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does at the end: cancel what is left, finish async generators, close."""
    try:
        tasks = asyncio.all_tasks(loop)
        for task in tasks:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()
