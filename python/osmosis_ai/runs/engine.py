"""Runs work items (row x attempt x model) with bounded concurrency, logging every finished item.

Rows stream in; ``concurrency`` workers take items from the row stream one at a time, so memory follows
the work in flight, not the dataset. Each finished item is appended to the results log before the next is counted. The command's
:class:`Executor` does the work of one item; the engine owns everything around it: skipping items a
resumed log holds, the per-item timeout, errors of the executor itself, early stop when the executor
reports a failure every further item would repeat, and the first Ctrl+C / SIGTERM (stop taking items,
cancel those in flight, return what finished; a second Ctrl+C interrupts at once).

Isolation (``isolate=True``, for user coroutines): the workers run on an event loop in a daemon thread, a
*lane*, with the per-item timeout on that loop, so an item costs no hop between threads. This loop only
watches: an item still running past its timeout means the lane cannot enforce it (user code blocks the
loop, or ignores cancellation). A lane that still answers loses just those items (logged as timed out);
one that does not is abandoned with every item it holds, and a fresh lane takes the remaining items.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from osmosis_ai._deadline import within
from osmosis_ai.loop_thread import LoopThread
from osmosis_ai.runs.log import RunKey, row_key
from osmosis_ai.runs.user_code import watched_loop

__all__ = ["Executor", "MemorySink", "RunControl", "RunEngine", "RunOutcome", "WorkItem", "new_item_record"]


@dataclass(frozen=True)
class WorkItem:
    """One attempt at one row, for one model (``model_tag`` is ``""`` unless a baseline is compared)."""

    row_index: int
    row: Mapping[str, Any]
    key: str
    run_index: int
    model_tag: str = ""


def new_item_record(item: WorkItem) -> dict[str, Any]:
    """The one shape every executor's record starts from: the item's keys, not yet a success, no scores.

    Example:
        >>> new_item_record(WorkItem(3, {}, "k", 0))["row_index"]
        3
    """
    return {
        "row_key": item.key,
        "row_index": item.row_index,
        "run_index": item.run_index,
        "model_tag": item.model_tag,
        "success": False,
        "scores": {},
        "error": None,
    }


class MemorySink:
    """Keeps records in memory instead of a log, for ``osmosis test`` (which has nothing to resume)."""

    def __init__(self) -> None:
        self.done: set[RunKey] = set()
        self.records: list[dict[str, Any]] = []

    def append(self, record: dict[str, Any]) -> None:
        self.records.append(record)


@dataclass
class RunOutcome:
    """What a whole session did (the results themselves are in the log)."""

    executed: int = 0
    skipped: int = 0
    failed: int = 0
    eval_errors: int = 0
    stopped_early: bool = False
    stop_reason: str | None = None
    interrupted: bool = False
    # The signal that stopped the run (SIGINT or SIGTERM); None for a KeyboardInterrupt raised elsewhere.
    signal: int | None = None
    duration_ms: float = 0.0
    tokens: int = 0
    # score name -> [sum of scores, count], for the running mean the progress line shows.
    score_sums: dict[str, list[float]] = field(default_factory=dict)

    @property
    def interrupted_exit_code(self) -> int:
        """128 + the signal: 130 after Ctrl+C (SIGINT), 143 after SIGTERM."""
        return 128 + (self.signal or signal.SIGINT)

    def running_mean(self) -> float | None:
        """Mean of the first score over the items scored so far, or None."""
        first = next(iter(self.score_sums.values()), None)
        return first[0] / first[1] if first and first[1] else None

    def account(self, record: Mapping[str, Any]) -> None:
        self.executed += 1
        self.tokens += int(record.get("tokens") or 0)
        if not record.get("success"):
            self.failed += 1
        if record.get("eval_errors"):
            self.eval_errors += 1
        for name, value in (record.get("scores") or {}).items():
            sums = self.score_sums.setdefault(name, [0.0, 0])
            sums[0] += value
            sums[1] += 1


class RunControl:
    """What an executor may ask of the engine while an item runs."""

    def __init__(self) -> None:
        self.stop_event = asyncio.Event()
        self.stop_reason: str | None = None

    def stop_early(self, reason: str) -> None:
        """Stops taking new items: every further item would fail the same way (bad key, no server)."""
        if not self.stop_event.is_set():
            self.stop_reason = reason
            self.stop_event.set()


class Executor(Protocol):
    """The work of one item, supplied by the command (eval's agent runs, the rubric judge, ...)."""

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        """The item's record before it runs (what survives a timeout or a crash of the item)."""
        ...

    async def execute(self, item: WorkItem, record: dict[str, Any], control: RunControl) -> None:
        """Runs the item, filling ``record`` in (``success``, ``scores``, ``error``, ...)."""
        ...

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        """Adds what is known only at the end (token counts, ...), whatever happened."""
        ...


def work_items(
    rows: Iterable[tuple[int, Mapping[str, Any]]],
    runs_per_row: int,
    model_tags: tuple[str, ...],
    done: set[RunKey] | Mapping[RunKey, Any],
    outcome: RunOutcome,
    *,
    first_run_index: int = 0,
) -> Iterator[WorkItem]:
    """Every (row, attempt, model) not already in ``done``; skipped items are counted in ``outcome``."""
    for row_index, row in rows:
        key = row_key(row)
        for run_index in range(first_run_index, first_run_index + runs_per_row):
            for tag in model_tags:
                if (row_index, key, run_index, tag) in done:
                    outcome.skipped += 1
                    continue
                yield WorkItem(row_index, row, key, run_index, tag)


# How long past its timeout an item may still run before the watcher steps in, how often it looks, and
# how long a lane has to answer before it counts as blocked.
_GRACE_S = 0.5
_TICK_S = 0.25
_ANSWER_S = 0.5


class _Lane:
    """The loop a share of the session runs on, its workers and the items they run (token -> item, ...)."""

    def __init__(self, host: LoopThread | None = None) -> None:
        self.host = host  # None: the engine's own loop
        self.dead = False  # abandoned: it takes no more items and logs nothing more
        self.running: dict[int, tuple[WorkItem, dict[str, Any], float]] = {}
        self.workers: set[asyncio.Future[Any]] = set()
        # Items given up while their worker was still in them: first ``given_up``, then, once another
        # worker took that one's place, ``replaced`` (the lane does not wait for such a worker).
        self.given_up: set[int] = set()
        self.replaced: set[int] = set()
        self.active = 0  # workers neither finished nor replaced
        self.finished: asyncio.Future[None] | None = None


class RunEngine:
    """Drives an :class:`Executor` over work items; see the module docstring.

    Args:
        executor: The command's work per item.
        log: The open results log (or a :class:`MemorySink`).
        concurrency: Items in flight at once.
        item_timeout: Seconds one item may take; None for no limit.
        on_record: Called after each record is logged (the progress display).
        handle_signals: Install the Ctrl+C / SIGTERM handlers (main thread only).
        isolate: Run the items on a lane (see the module docstring), for executors that run user
            coroutines: one that blocks cannot stop the timeouts, signals and log of this loop.
        backend: Where items run (:mod:`osmosis_ai.runs.backends`); None runs them in this process.
            A backend returns each item's finished record (or None for an item it lost, which is then
            not logged, so a resume re-runs it); everything else stays here.
    """

    def __init__(
        self,
        executor: Executor,
        log: Any,
        *,
        concurrency: int = 1,
        item_timeout: float | None = None,
        on_record: Callable[[dict[str, Any], RunOutcome], None] | None = None,
        handle_signals: bool = True,
        isolate: bool = False,
        backend: Any = None,
    ) -> None:
        self.executor = executor
        self.log = log
        self.concurrency = max(1, concurrency)
        self.item_timeout = item_timeout
        self.on_record = on_record
        self.handle_signals = handle_signals
        self.isolate = isolate and backend is None
        self.backend = backend
        self.outcome = RunOutcome()
        self.control = RunControl()
        self.abandoned_lanes = 0
        self._input_error: Exception | None = None
        self._items: Iterator[WorkItem] = iter(())
        # Guards the item stream, the lanes' running items and everything written (log, outcome, progress):
        # lanes run in other threads. Uncontended but for the watcher's look every _TICK_S.
        self._lock = threading.Lock()

    async def run(self, items: Iterable[WorkItem]) -> RunOutcome:
        """Runs every item; returns when all are logged, the run stopped early, or a signal stopped it.

        Raises:
            Exception: Whatever the item iterator raised (a bad row), after every item before it is logged.
        """
        started = time.monotonic()
        self._items = iter(items)
        main = asyncio.ensure_future(self._isolated() if self.isolate else self._lane_main(_Lane()))
        with self._signals(main):
            try:
                await main
            except asyncio.CancelledError:
                if not self.outcome.interrupted:
                    raise
            finally:
                main.cancel()
                self.outcome.duration_ms = (time.monotonic() - started) * 1000.0
        if self._input_error is not None and not self.outcome.interrupted:
            raise self._input_error
        if self.control.stop_reason is not None:
            self.outcome.stopped_early = True
            self.outcome.stop_reason = self.control.stop_reason
        return self.outcome

    async def _isolated(self) -> None:
        """Runs the session on lanes, one after another while lanes get abandoned."""
        while True:
            lane = _Lane(LoopThread("osmosis-run"))
            finished = asyncio.wrap_future(lane.host.submit(self._lane_main(lane), keep_home=True))
            try:
                if await self._watch(lane, finished):
                    return
            finally:
                if lane.dead:
                    lane.host.stop(wait=False)  # blocked: it winds down if it ever unblocks
                else:
                    finished.cancel()  # interrupted: its items in flight are not logged
                    lane.host.stop()
                    with self._lock:
                        lane.dead = True

    async def _watch(self, lane: _Lane, finished: asyncio.Future[None]) -> bool:
        """Waits for ``lane`` to finish (True), or abandons it once it is found blocked (False)."""
        assert lane.host is not None
        timeout = self.item_timeout
        while True:
            done, _ = await asyncio.wait({finished}, timeout=None if timeout is None else _TICK_S)
            if done:
                finished.result()
                return True
            assert timeout is not None
            now = time.monotonic()
            with self._lock:
                late = [t for t, (_, _, begun) in lane.running.items() if now - begun > timeout + _GRACE_S]
            if not late:
                continue
            if await lane.host.responds(_ANSWER_S):
                self._give_up(lane, late)  # a loop late under load: these items alone are given up
                continue
            self._give_up(lane, None)
            self.abandoned_lanes += 1
            return False

    def _give_up(self, lane: _Lane, tokens: list[int] | None) -> None:
        """Logs ``lane``'s items ``tokens`` (None: all, and the lane is abandoned) as timed out."""
        with self._lock:
            if tokens is None:
                lane.dead = True
                tokens = list(lane.running)
            for token in tokens:
                entry = lane.running.pop(token, None)
                if entry is None:
                    continue  # finished meanwhile
                item, record, begun = entry
                if lane.host is not None and not lane.dead:
                    # Its worker is stuck in code that ignores cancellation: another takes its place.
                    lane.given_up.add(token)
                    lane.host.loop.call_soon_threadsafe(self._replace, lane, token)
                record = dict(record)  # the lane may still write into its own copy
                self._timed_out(record)
                record["duration_ms"] = (time.monotonic() - begun) * 1000.0
                self.executor.finish(item, record)
                self._write(record)

    async def _lane_main(self, lane: _Lane) -> None:
        if lane.host is not None:
            watched_loop()  # the workers' tasks inherit it: quick sync user functions may run inline
        lane.finished = asyncio.get_running_loop().create_future()
        for _ in range(self.concurrency):
            self._start_worker(lane)
        try:
            await lane.finished
        finally:
            for task in lane.workers:
                task.cancel()

    def _start_worker(self, lane: _Lane) -> None:
        task = asyncio.ensure_future(self._worker(lane))
        lane.active += 1
        lane.workers.add(task)
        task.add_done_callback(lambda done: self._worker_done(lane, done))

    def _worker_done(self, lane: _Lane, task: asyncio.Future[Any]) -> None:
        lane.workers.discard(task)
        failed = None if task.cancelled() else task.exception()
        if failed is None and not task.cancelled() and task.result() == "replaced":
            return  # no longer counted
        lane.active -= 1
        assert lane.finished is not None
        if lane.finished.done():
            return
        if failed is not None:
            lane.finished.set_exception(failed)
        elif lane.active == 0:
            lane.finished.set_result(None)

    def _replace(self, lane: _Lane, token: int) -> None:
        # On the lane's loop, like the worker's return from the item: the first of the two claims it.
        with self._lock:
            if token not in lane.given_up or lane.dead:
                return  # the worker came back meanwhile and took the next item
            lane.given_up.discard(token)
            lane.replaced.add(token)
        lane.active -= 1
        self._start_worker(lane)

    def _take(self, lane: _Lane) -> WorkItem | None:
        with self._lock:
            if lane.dead or self._input_error is not None or self.control.stop_event.is_set():
                return None
            try:
                return next(self._items, None)
            except Exception as exc:
                # A bad row mid-file: the items in flight still run and are logged, then run() raises
                # this error (it names file, line and field) once no worker can write any more.
                self._input_error = exc
                return None

    async def _worker(self, lane: _Lane) -> str:
        while (item := self._take(lane)) is not None:
            if self.backend is not None:
                record = await self.backend.run_item(item, self.control)
                if record is not None:
                    with self._lock:
                        self._write(record)
                continue
            begun = time.monotonic()
            record = self.executor.new_record(item)
            token = id(record)
            with self._lock:
                lane.running[token] = (item, record, begun)
            await self._execute(item, record, begun)
            with self._lock:
                # Given up by the watcher (and logged as timed out) unless it is still ours.
                if lane.dead or lane.running.pop(token, None) is None:
                    if token in lane.replaced:
                        lane.replaced.discard(token)
                        return "replaced"
                    lane.given_up.discard(token)
                    continue
                self.executor.finish(item, record)
                self._write(record)
        return "done"

    def _write(self, record: dict[str, Any]) -> None:
        self.log.append(record)
        self.outcome.account(record)
        if self.on_record is not None:
            self.on_record(record, self.outcome)

    async def run_item(self, item: WorkItem) -> dict[str, Any]:
        """Runs one item with the executor, the timeout and the error rules, without logging it.

        What a remote backend's worker calls for each item it was sent.
        """
        begun = time.monotonic()
        record = self.executor.new_record(item)
        await self._execute(item, record, begun)
        self.executor.finish(item, record)
        return record

    def _timed_out(self, record: dict[str, Any]) -> None:
        record["success"] = False
        record["error"] = f"Run timed out after {self.item_timeout:g}s"

    async def _execute(self, item: WorkItem, record: dict[str, Any], begun: float) -> None:
        # Code that ignores the cancellation holds its worker; on a lane the watcher then gives the item
        # up and starts another worker (_replace), so the deadline costs no task of its own per item.
        timeout = self.item_timeout
        try:
            await within(self.executor.execute(item, record, self.control), timeout)
        except (TimeoutError, asyncio.TimeoutError):  # distinct classes before Python 3.11
            self._timed_out(record)
        except Exception as exc:  # one bad item must not end the session; it is recorded with its type
            record["success"] = False
            record["error"] = record.get("error") or f"{type(exc).__name__}: {exc}"
        duration = time.monotonic() - begun
        if timeout is not None and duration > timeout and record.get("error") is None:
            self._timed_out(record)  # it swallowed the cancellation and returned late
        record["duration_ms"] = duration * 1000.0

    @contextlib.contextmanager
    def _signals(self, everything: asyncio.Future[Any]) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        installed: list[int] = []

        def on_signal(signum: int) -> None:
            # First signal: keep what finished, cancel what is in flight (a resume re-runs it).
            self.outcome.interrupted = True
            self.outcome.signal = signum
            everything.cancel()
            for number in installed:
                loop.remove_signal_handler(number)

        if self.handle_signals:
            for number in (signal.SIGINT, signal.SIGTERM):
                # Not the main thread, or no signal support: KeyboardInterrupt still ends the run.
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.add_signal_handler(number, on_signal, number)
                    installed.append(number)
        try:
            yield
        finally:
            for number in installed:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(number)
