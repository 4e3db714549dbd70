"""Reading a results log back (:mod:`osmosis_ai.runs.log` writes it): whole, streamed, only chosen fields,
or only the latest line of each (row, run); run records numbered from 0 whatever the log counts from.

Every record is written with its newline in one call, so a final line without a newline is the write a
crash interrupted: readers skip it (that run is simply re-run). Any other bad line is an error naming its
file and line.
"""

from __future__ import annotations

import itertools
import os
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from osmosis_ai.errors import ResultsLogError
from osmosis_ai.stats import RESULTS_LOG_FORMATS, log_index_base, rebase_indices
from osmosis_ai.stats._results import latest_run_offsets, log_record_fields

__all__ = [
    "LogContents",
    "iter_latest_runs",
    "iter_runs",
    "latest_run_lines",
    "latest_run_starts",
    "line_number_at",
    "numbered_from_0",
    "open_runs",
    "parse_run_line",
    "read_log",
    "run_record_at",
]


@dataclass
class LogContents:
    """What a results log holds: its header and its run records, in file order."""

    header: dict[str, Any]
    runs: list[dict[str, Any]]
    valid_bytes: int


# The head of a run record as the engine writes it (orjson: no spaces, these keys first, in this order).
_HEAD = re.compile(rb'\{"row_key":"[^"\\]*","row_index":(-?[0-9]{1,18}),"run_index":(-?[0-9]{1,18}),')


def _records(path: Path, *, keys_only: bool = False) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line number, byte offset after the line, record) for every complete line, streamed; run records
    numbered from 0 whatever the log counts from (:func:`~osmosis_ai.stats.log_index_base`).

    Every record is written with its newline in one call, so a final line without a newline is the write a
    crash interrupted: it is not yielded (that run is simply re-run). Any other bad line is an error; so is
    a first line that is not a log header. ``keys_only``: a run record the engine wrote is read no further
    than its head, and only its ``row_index`` and ``run_index`` are given (the rest of such a line is
    not checked: a reader that wants it parses it whole).
    """
    base = 0
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return
            offset += len(raw)
            if raw.isspace():  # a blank line (isspace stops at the first other byte; strip copies the line)
                continue
            head = _HEAD.match(raw) if keys_only and number > 1 else None
            record: Any
            if head is not None:
                record = {"row_index": int(head[1]), "run_index": int(head[2])}
            else:
                record = _parsed(path, number, raw)
            if number == 1:
                base = _header_base(path, record)
            elif base:
                record = rebase_indices(record, base)
            yield number, offset, record


def _parsed(path: Path, number: int, raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ResultsLogError(f"{path}:{number}: results log line is not valid JSON ({exc})") from exc


def _header_base(path: Path, header: Any) -> int:
    """What the log whose line 1 is ``header`` counts from; raises when it is no results log header."""
    if not isinstance(header, dict) or header.get("format") not in RESULTS_LOG_FORMATS:
        raise ResultsLogError(
            f"{path}:1: not an osmosis results log (expected a '{RESULTS_LOG_FORMATS[-1]}' header)"
        )
    return log_index_base(header)


def numbered_from_0(path: Path) -> bool:
    """Whether the log at ``path`` starts with a results log header and counts its indices from 0: the
    logs the core's writers of ``-o`` files read (any other log is read the Python way)."""
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        header = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return (
        isinstance(header, dict)
        and header.get("format") in RESULTS_LOG_FORMATS
        and not log_index_base(header)
    )


def open_runs(path: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """A results log's header and its run records, in one pass: the header is the pass's first line (read
    now), the runs follow as the iterator is read (memory does not grow with the log).

    Raises:
        ResultsLogError: The file is not a results log (no header line).
    """
    records = _records(path)
    first = next(records, None)
    if first is None:
        raise ResultsLogError(f"{path}:1: not an osmosis results log")
    return first[2], (record for _, _, record in records)


def iter_runs(path: Path, fields: tuple[str, ...] | None = None) -> Iterator[dict[str, Any]]:
    """The run records of a results log, one at a time (memory does not grow with the log).

    ``fields``: only these top-level fields of each record (those it has), read in Rust without building
    the rest (a record's conversation is most of it); errors and numbering as without.
    """
    if fields is None:
        for number, _, record in _records(path):
            if number > 1:
                yield record
        return
    base = 0
    wanted = frozenset(fields)
    for number, record in log_record_fields(path, fields):
        if number == 1:
            base = _header_base(path, _parsed(path, number, record))
            continue
        if type(record) is bytes:  # not one JSON object (or a `-0` in it): read as the full reader reads it
            record = _parsed(path, number, record)
            if type(record) is dict:  # the chosen fields only, in the line's order, as the core gives them
                record = {key: value for key, value in record.items() if key in wanted}
        yield rebase_indices(record, base) if base else record


class _Starts:
    """Where the latest line of each (row, run) starts: 8 bytes per run in a flat array indexed by
    ``row * runs_per_row + run`` when every run index is below ``runs_per_row``, else a dict."""

    def __init__(self, runs_per_row: int | None) -> None:
        self._per_row = runs_per_row or 0
        self._flat: array[int] | None = array("q") if self._per_row > 0 else None
        self._keyed: dict[int, int] = {}
        self._lines = 0

    def set(self, row: int, run: int, start: int) -> None:
        self._lines += 1
        flat = self._flat
        # A slot far past the lines read so far (a hand-numbered log) would size the array by it, as the
        # core's pass bounds it too.
        bound = (self._lines + 1024) * 2 * self._per_row
        if flat is not None and row >= 0 and 0 <= run < self._per_row and row * self._per_row + run < bound:
            slot = row * self._per_row + run
            if slot >= len(flat):
                flat.extend(itertools.repeat(-1, max(slot + 1, 2 * len(flat)) - len(flat)))
            flat[slot] = start
            return
        if flat is not None:  # a run outside the array's shape: keyed from now on
            self._flat = None
            for slot, offset in enumerate(flat):
                if offset >= 0:
                    earlier_row, earlier_run = divmod(slot, self._per_row)
                    self._keyed[earlier_row << 32 | earlier_run] = offset
        self._keyed[row << 32 | run] = start

    def ordered(self) -> Iterator[int]:
        """The offsets in (row, run) order."""
        if self._flat is not None:
            return (offset for offset in self._flat if offset >= 0)
        return (self._keyed[key] for key in sorted(self._keyed))


def iter_latest_runs(path: Path, runs_per_row: int | None = None) -> Iterator[dict[str, Any]]:
    """The latest record of each (row, run) of a results log, in row then run order, one at a time.

    A first pass keeps one byte offset per (row, run), not its record, reading no more of a line the engine
    wrote than its head; a second reads each latest line whole, so memory holds the offsets and one record
    whatever the size of the run. ``runs_per_row`` (the
    runs each row was given) lets the offsets take 8 bytes per run instead of a dict entry (~100 bytes).
    """
    base, lines = latest_run_lines(path, runs_per_row)
    for offset, raw in lines:
        yield parse_run_line(path, offset, raw, base)


def latest_run_lines(path: Path, runs_per_row: int | None = None) -> tuple[int, Iterator[tuple[int, bytes]]]:
    """What the log's indices count from, and ``(offset, line)`` of the latest line of each (row, run) as
    :func:`iter_latest_runs` orders them, unparsed (for a reader that parses them its own way, falling back
    to :func:`parse_run_line`). The first pass runs here, the second as the lines are taken."""
    base, starts = latest_run_starts(path, runs_per_row)
    return base, _lines_at(path, starts)


def latest_run_starts(path: Path, runs_per_row: int | None = None) -> tuple[int, Iterator[int]]:
    """What the log's indices count from, and where the latest line of each (row, run) starts, in row then
    run order (blank lines may come first): the first pass of :func:`iter_latest_runs`, in Rust for a log
    the engine wrote."""
    found = latest_run_offsets(path, runs_per_row)
    if found is not None:
        header, offsets = found
        base = _header_base(path, _parsed(path, 1, header))
        if not base:  # the core's offsets are those of the indices as written
            return base, iter(offsets)
    starts = _Starts(runs_per_row)
    base = start = 0
    for number, end, record in _records(path, keys_only=True):
        if number == 1:
            base = log_index_base(record)
        else:
            starts.set(int(record["row_index"]), int(record["run_index"]), start)
        start = end
    return base, starts.ordered()


def _lines_at(path: Path, offsets: Iterator[int]) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as handle:
        for offset in offsets:
            handle.seek(offset)
            raw = handle.readline()
            while raw and not raw.strip():  # blank lines before it (read past, as _records does)
                offset = handle.tell()
                raw = handle.readline()
            yield offset, raw


def run_record_at(path: Path, start: int, base: int) -> dict[str, Any]:
    """The record of the line at a start :func:`latest_run_starts` gave, counted from 0 (an error names
    its line)."""
    ((offset, raw),) = _lines_at(path, iter((start,)))
    return parse_run_line(path, offset, raw, base)


def parse_run_line(path: Path, offset: int, raw: bytes, base: int) -> dict[str, Any]:
    """The record of a line :func:`latest_run_lines` gave, counted from 0 (an error names its line)."""
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:  # the first pass read only its head
        number = line_number_at(path, offset)
        raise ResultsLogError(f"{path}:{number}: results log line is not valid JSON ({exc})") from exc
    return rebase_indices(record, base) if base else record


def line_number_at(path: str | os.PathLike[str], offset: int) -> int:
    """The 1-based line of a file that starts at byte ``offset`` (counted only when an error must name it;
    read a block at a time, so a line deep in a large log costs no memory)."""
    newlines = 0
    with open(path, "rb") as handle:
        while offset > 0:
            block = handle.read(min(offset, 1 << 20))
            if not block:
                break
            newlines += block.count(b"\n")
            offset -= len(block)
    return newlines + 1


def read_log(path: Path) -> LogContents:
    """Reads a whole results log: its header, its runs and where its valid part ends."""
    header: dict[str, Any] | None = None
    runs: list[dict[str, Any]] = []
    valid = 0
    for number, offset, record in _records(path):
        valid = offset
        if number == 1:
            header = record
        else:
            runs.append(record)
    if header is None:
        raise ResultsLogError(f"{path}: the results log has no header line")
    return LogContents(header=header, runs=runs, valid_bytes=valid)
