"""What the run engine works on and reports: work items (row x attempt x model) and the records they start
from, where finished records go (:class:`RecordSink`), what a session did (:class:`RunOutcome`), what an
executor may ask of the engine (:class:`RunControl`), the :class:`Executor` protocol a command implements,
and the stream of items a session runs (:func:`work_items`). The engine itself is
:mod:`osmosis_ai.runs.engine`.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from osmosis_ai.runs.log import RunKey, row_key
from osmosis_ai.stop_signals import exit_code_of

__all__ = [
    "Executor",
    "MemorySink",
    "RecordSink",
    "RunControl",
    "RunOutcome",
    "WorkItem",
    "new_item_record",
    "work_items",
]

_set_fields = object.__setattr__


@dataclass(frozen=True, init=False)
class WorkItem:
    """One attempt at one row, for one model (``model_tag`` is ``""`` unless a baseline is compared)."""

    row_index: int
    row: Mapping[str, Any]
    key: str
    run_index: int
    model_tag: str = ""

    def __init__(
        self, row_index: int, row: Mapping[str, Any], key: str, run_index: int, model_tag: str = ""
    ) -> None:
        # The fields in one step: a frozen dataclass's own __init__ sets each through object.__setattr__
        # (a third of a microsecond an item).
        _set_fields(
            self,
            "__dict__",
            {"row_index": row_index, "row": row, "key": key, "run_index": run_index, "model_tag": model_tag},
        )


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


class RecordSink(Protocol):
    """Where the engine writes each finished record: the results log
    (:class:`~osmosis_ai.runs.log.ResultsLog`) or a :class:`MemorySink`."""

    def append(self, record: dict[str, Any]) -> None: ...


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
        return exit_code_of(self.signal or signal.SIGINT)

    def interrupted_by(self, exc: KeyboardInterrupt) -> None:
        """A ``KeyboardInterrupt`` ended the session outside the engine's handlers (a second signal, or
        one before they were installed): SIGTERM raises one that carries its ``signum``."""
        self.interrupted = True
        self.signal = self.signal or getattr(exc, "signum", signal.SIGINT)

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
            sums = self.score_sums.get(name)
            if sums is None:
                sums = self.score_sums[name] = [0.0, 0]
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
