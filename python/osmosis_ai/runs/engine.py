"""Runs work items (row x attempt x model) with bounded concurrency, logging every finished item.

Rows stream in; ``concurrency`` workers take items from the row stream one at a time, so memory follows
the work in flight, not the dataset. Each finished item is appended to the results log before the next is counted. The command's
:class:`Executor` does the work of one item; the engine owns everything around it: skipping items a
resumed log holds, the per-item timeout, errors of the executor itself, early stop when the executor
reports a failure every further item would repeat, and the first Ctrl+C / SIGTERM (stop taking items,
cancel those in flight, return what finished; a second Ctrl+C interrupts at once).

Isolation (``isolate=True``, for user coroutines) runs the workers on watched lanes: see
:mod:`osmosis_ai.runs.lanes`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from osmosis_ai._deadline import within
from osmosis_ai.loop_thread import LoopThread
from osmosis_ai.runs.lanes import Alarm, Lane, watch
from osmosis_ai.runs.work import Executor, RecordSink, RunControl, RunOutcome, WorkItem

if TYPE_CHECKING:
    from osmosis_ai.runs.backends import Backend

__all__ = ["RunEngine"]


class RunEngine:
    """Drives an :class:`Executor` over work items; see the module docstring.

    Args:
        executor: The command's work per item; None when a backend runs the items (its workers hold theirs).
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
        executor: Executor | None,
        log: RecordSink,
        *,
        concurrency: int = 1,
        item_timeout: float | None = None,
        on_record: Callable[[dict[str, Any], RunOutcome], None] | None = None,
        handle_signals: bool = True,
        isolate: bool = False,
        backend: Backend | None = None,
    ) -> None:
        if executor is None and backend is None:
            raise ValueError("RunEngine needs an executor unless a backend runs the items")
        # None only with a backend, and then the engine never calls the executor.
        self.executor = cast(Executor, executor)
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
        self._alarm: Alarm | None = None
        # Guards the item stream, the lanes' running items and everything written (log, outcome, progress):
        # lanes run in other threads. Uncontended but for the watcher's look every lanes.TICK_S.
        self._lock = threading.Lock()

    async def run(self, items: Iterable[WorkItem]) -> RunOutcome:
        """Runs every item; returns when all are logged, the run stopped early, or a signal stopped it.

        Raises:
            Exception: Whatever the item iterator raised (a bad row), after every item before it is logged.
        """
        started = time.monotonic()
        self._items = iter(items)
        if self.isolate:
            main = asyncio.ensure_future(self._isolated())
        else:
            lane = Lane(self._lock)
            # Task.uncancel (3.11+) lets the alarm take its cancellation back; 3.10 keeps within().
            if self.item_timeout is not None and self.backend is None and sys.version_info >= (3, 11):
                self._alarm = Alarm(lane, self.item_timeout)
            main = asyncio.ensure_future(lane.run(self._worker, self.concurrency))
        with self._signals(main):
            try:
                await main
            except asyncio.CancelledError:
                if not self.outcome.interrupted:
                    raise
            finally:
                main.cancel()
                if self._alarm is not None:
                    self._alarm.close()
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
            host = LoopThread("osmosis-run")
            lane = Lane(self._lock, host)
            run = lane.run(self._worker, self.concurrency)
            finished = asyncio.wrap_future(host.submit(run, keep_home=True))
            try:
                if await watch(lane, finished, self.item_timeout, self._give_up):
                    return
                self.abandoned_lanes += 1
            finally:
                if lane.dead:
                    host.stop(wait=False)  # blocked: it winds down if it ever unblocks
                else:
                    finished.cancel()  # interrupted: its items in flight are not logged
                    host.stop()
                    with self._lock:
                        lane.dead = True

    def _give_up(self, lane: Lane, tokens: list[int] | None) -> None:
        """Logs ``lane``'s items ``tokens`` (None: all, and the lane is abandoned) as timed out."""
        with self._lock:
            for item, record, begun in lane.take_over(tokens):
                record = dict(record)  # the lane may still write into its own copy
                self._timed_out(record)
                record["duration_ms"] = (time.monotonic() - begun) * 1000.0
                self.executor.finish(item, record)
                self._write(record)

    def _take(self, lane: Lane) -> WorkItem | None:
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

    async def _worker(self, lane: Lane) -> str:
        alarm = self._alarm if lane.host is None else None
        task = asyncio.current_task() if alarm is not None else None
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
            if alarm is not None and task is not None:
                alarm.watch(token, task, begun)
                await self._execute(item, record, begun, (alarm, token, task))
            else:
                await self._execute(item, record, begun)
            with self._lock:
                # Given up by the watcher (and logged as timed out) unless it is still ours.
                fate = lane.end(token)
                if fate == "replaced":
                    return fate
                if fate == "given up":
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

    async def _execute(
        self,
        item: WorkItem,
        record: dict[str, Any],
        begun: float,
        watched: tuple[Alarm, int, asyncio.Task[Any]] | None = None,
    ) -> None:
        # Code that ignores the cancellation holds its worker; on a lane the watcher then gives the item
        # up and another worker takes that one's place (Lane.take_over), so the deadline costs no task of
        # its own per item. An item the alarm watches (``watched``: it, the item's token, the worker's task)
        # has no deadline of its own either.
        timeout = self.item_timeout
        try:
            if timeout is None:  # no deadline to hold: one coroutine frame less per item
                await self.executor.execute(item, record, self.control)
            elif watched is not None:
                alarm, token, task = watched
                try:
                    await self.executor.execute(item, record, self.control)
                except asyncio.CancelledError:
                    if alarm.end(token, task) is not True:
                        raise  # the caller's (Ctrl+C), not only the alarm's
                    raise TimeoutError from None
                except BaseException:
                    alarm.end(token, task)
                    raise
                else:  # also when it swallowed the alarm's cancellation: taken back all the same
                    alarm.end(token, task)
            else:
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
        installed: list[signal.Signals] = []

        # asyncio puts back SIG_DFL for SIGTERM when its handler goes: the process's own handler (the CLI's
        # Terminated, see stop_signals) is put back instead, so a second SIGTERM still ends with a message.
        previous: dict[signal.Signals, Any] = {}

        def on_signal(signum: int) -> None:
            # First signal: keep what finished, cancel what is in flight (a resume re-runs it).
            self.outcome.interrupted = True
            self.outcome.signal = signum
            everything.cancel()
            for number in installed:
                loop.remove_signal_handler(number)
            _restore(previous)

        if self.handle_signals:
            for number in (signal.SIGINT, signal.SIGTERM):
                # Not the main thread, or no signal support: KeyboardInterrupt still ends the run.
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    handler = signal.getsignal(number)
                    loop.add_signal_handler(number, on_signal, number)
                    installed.append(number)
                    if number == signal.SIGTERM:  # SIGINT: asyncio's default_int_handler, as before
                        previous[number] = handler
        try:
            yield
        finally:
            for number in installed:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(number)
            _restore(previous)


def _restore(handlers: dict[signal.Signals, Any]) -> None:
    """Puts back the handlers the engine's replaced (None: set outside Python, left as asyncio left it)."""
    for number, handler in handlers.items():
        if handler is not None:
            with contextlib.suppress(ValueError):
                signal.signal(number, handler)
    handlers.clear()
