"""The one append-only results log of every command on the run engine, flushed per finished item.

Schema ``osmosis-results/1`` (JSON lines):

* line 1, the header: ``{"format": "osmosis-results/1", "kind": "eval" | "test" | "rubric",
  "config": {...what makes results comparable...}, "dataset": {"path", "size", "fingerprint"} | null,
  "created_at", "osmosis_version", "index_base": 0, "planned": {"rows", "runs"}}`` (``planned``: the rows
  and runs the invocation that created the log set out to do, so a log cut short by Ctrl+C still says what
  never ran; logs without it count only the rows they hold);
* then one record per finished item: ``row_key`` (digest of the row's content), ``row_index`` and
  ``run_index`` (both from 0 in every kind; a rubric log of earlier versions, without ``index_base``,
  counted from 1 and reads shifted to 0, and a resume appends to it in its own numbering),
  ``model_tag`` (``""`` unless a baseline model is compared), ``success``, ``scores``
  (``{name: float}``; only real scores, never a stand-in for an error), ``error``, ``duration_ms``, plus
  the command's own fields (eval: ``eval_errors``, ``tokens``, ``tool_calls``...; rubric: ``status``,
  ``explanation``, ``raw_score``, ``attempts``...), and the stamp of the invocation that wrote it:
  ``invocation`` (0 for the one that created the log, one more per resume), ``invocation_ms`` (wall time
  since that invocation opened the log) and ``invocation_cpu_ms`` (the process's CPU time since then). The
  result model adds the invocations up for the wall time and CPU across resumes; records of logs written
  before the stamp existed have none, and those numbers are then unknown (never guessed).

A crash or Ctrl+C loses at most the items in flight. ``--resume LOG`` reads the log back, refuses it when
the config or the dataset file changed (with what changed), and skips the items it already holds, keyed
on (row position, row content, run index, model tag). The process appending to a log holds an exclusive
lock on it (``flock``, released by the kernel however the process ends): a second one is refused, naming
the holder's pid, instead of running every remaining item a second time. Logs of the earlier eval-only format ``osmosis-eval-log/1`` are
read and resumed too.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import os
import re
import time
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from osmosis_ai._files import orjson_dumps
from osmosis_ai.errors import ResultsLogError
from osmosis_ai.redact import redact_bytes
from osmosis_ai.stats import RESULTS_LOG_FORMATS, log_index_base, rebase_indices
from osmosis_ai.stats._results import latest_run_offsets, log_record_fields

__all__ = [
    "LOG_FORMAT",
    "LOG_FORMATS",
    "ResultsLog",
    "RunKey",
    "dataset_fingerprint",
    "iter_latest_runs",
    "iter_runs",
    "latest_run_lines",
    "latest_run_starts",
    "line_number_at",
    "parse_run_line",
    "read_log",
    "recorded_dataset",
    "row_key",
    "run_record_at",
]

# Every header format the readers accept, in one place (the Rust results reader's list); the last is written.
LOG_FORMATS = RESULTS_LOG_FORMATS
LOG_FORMAT = LOG_FORMATS[-1]

RunKey = tuple[int, str, int, str]
"""(row_index, row_key, run_index, model_tag): what identifies a finished item across resumes.

The row's position and its content both: a dataset that repeats a row has two rows, not one.
"""


def row_key(row: Mapping[str, Any]) -> str:
    """A stable digest of a dataset row's content (key order does not matter).

    Example:
        >>> row_key({"a": 1, "b": 2}) == row_key({"b": 2, "a": 1})
        True
    """
    # orjson_dumps: keys that are not strings written as OPT_NON_STR_KEYS writes them, that option's cost
    # paid only by a row that has one (the same bytes, so the same key, either way).
    encoded = orjson_dumps(row, orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(encoded, digest_size=12).hexdigest()


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
    if not isinstance(header, dict) or header.get("format") not in LOG_FORMATS:
        raise ResultsLogError(f"{path}:1: not an osmosis results log (expected a '{LOG_FORMAT}' header)")
    return log_index_base(header)


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
    for number, record in log_record_fields(path, fields):
        if number == 1:
            base = _header_base(path, _parsed(path, number, record))
            continue
        if type(record) is bytes:  # not one JSON object: read as the full reader reads it
            record = _parsed(path, number, record)
        yield rebase_indices(record, base) if base else record


class _Starts:
    """Where the latest line of each (row, run) starts: 8 bytes per run in a flat array indexed by
    ``row * runs_per_row + run`` when every run index is below ``runs_per_row``, else a dict."""

    def __init__(self, runs_per_row: int | None) -> None:
        self._per_row = runs_per_row or 0
        self._flat: array[int] | None = array("q") if self._per_row > 0 else None
        self._keyed: dict[int, int] = {}

    def set(self, row: int, run: int, start: int) -> None:
        flat = self._flat
        if flat is not None and row >= 0 and 0 <= run < self._per_row:
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
    found = latest_run_offsets(path)
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


def _describe_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    keys = sorted(set(old) | set(new))
    diffs = [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]
    return "; ".join(diffs)


def dataset_fingerprint(path: Path) -> dict[str, Any]:
    """What identifies a dataset file's content: its absolute path (a log read from another directory
    still finds it), size and a BLAKE2b digest of its bytes."""
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"path": os.path.abspath(path), "size": path.stat().st_size, "fingerprint": digest.hexdigest()}


def recorded_dataset(header: Mapping[str, Any], results_path: str | os.PathLike[str]) -> Path | None:
    """The dataset file a results file names (a log header's ``dataset.path``, a rubric ``-o`` JSON's
    ``data_path``), or None when it names none.

    Logs of earlier versions hold the path as given, relative to the directory they were run from: it is
    taken from the current directory when it is there, else from the results file's directory.
    """
    dataset = header.get("dataset")
    name = dataset.get("path") if isinstance(dataset, Mapping) else None
    name = name or header.get("data_path")
    if not isinstance(name, str) or not name:
        return None
    path = Path(name).expanduser()
    if path.is_absolute() or path.exists():
        return path
    beside = Path(os.path.abspath(results_path)).parent / path
    return beside if beside.exists() else path


def _holder(path: Path) -> int | None:
    """The pid holding a ``flock`` on ``path`` (Linux ``/proc/locks``; None where it cannot be told)."""
    try:
        st = path.stat()
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device and fields[4].isdigit():
            return int(fields[4])
    return None


def _lock(path: Path, handle: Any) -> None:
    """Takes the exclusive append lock of a log, or refuses naming the process that holds it."""
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        pid = _holder(path)
        who = f"another process (pid {pid})" if pid is not None else "another process"
        raise ResultsLogError(
            f"Results log {path} is being appended to by {who}: wait for it to finish or stop it. "
            "Two processes appending to one log would run every remaining item twice."
        ) from None


def _unstamped(record: dict[str, Any]) -> bool:
    # Three lookups: a set operation with the record's keys walks all of them (0.4 us a line).
    return "invocation" not in record and "invocation_ms" not in record and "invocation_cpu_ms" not in record


def _encoded(value: Any) -> bytes:
    """One log line: ``value``'s JSON and a newline."""
    return orjson_dumps(value, orjson.OPT_APPEND_NEWLINE)


def _key_of(record: Mapping[str, Any]) -> RunKey:
    return (
        int(record["row_index"]),
        record["row_key"],
        int(record["run_index"]),
        record.get("model_tag") or "",
    )


class ResultsLog:
    """An open results log. Use :meth:`create` for a new run and :meth:`resume` to continue one.

    ``done`` holds the keys of the items already in the log (never the records: a resumed log of a
    million items costs a set of keys, not the records).
    """

    def __init__(
        self, path: Path, handle: BinaryIO, done: set[RunKey], invocation: int = 0, index_base: int = 0
    ) -> None:
        self.path = path
        self._handle = handle
        self._fd = handle.fileno()
        self.done = done
        # The stamp every record gets (see the module docstring): which invocation, and its clocks.
        self.invocation = invocation
        self._opened = (time.perf_counter(), time.process_time())
        # What the file counts rows and runs from (1 in a rubric log of earlier versions): items are
        # numbered from 0 here and written in the file's own numbering, so one file never mixes two.
        self.index_base = index_base
        # Set by resume: the line number of an incomplete final line it dropped (the command reports it).
        self.dropped_line: int | None = None

    @classmethod
    def create(
        cls,
        path: Path,
        config: Mapping[str, Any],
        *,
        kind: str = "eval",
        dataset: Mapping[str, Any] | None = None,
        planned: Mapping[str, int] | None = None,
    ) -> ResultsLog:
        """Starts a new log at ``path`` (refusing to overwrite an existing one) with its header;
        ``planned`` is ``{"rows": ..., "runs": ...}`` when the session knows what it sets out to do."""
        from osmosis_ai._version import __version__

        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = path.open("xb")
        except FileExistsError as exc:
            raise ResultsLogError(
                f"Results log {path} already exists: pass {{resume_path}} {path} to continue it, "
                "or choose another {log_path} path",
                fields=("resume_path", "log_path"),
            ) from exc
        _lock(path, handle)
        log = cls(path, handle, set())
        log._write(
            {
                "format": LOG_FORMAT,
                "kind": kind,
                "config": dict(config),
                "dataset": dict(dataset) if dataset is not None else None,
                "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
                "osmosis_version": __version__,
                "index_base": 0,
                **({"planned": dict(planned)} if planned else {}),
            }
        )
        return log

    @classmethod
    def resume(
        cls,
        path: Path,
        config: Mapping[str, Any],
        *,
        kind: str = "eval",
        dataset: Mapping[str, Any] | None = None,
    ) -> ResultsLog:
        """Reopens ``path`` for appending after checking it was written for the same config and dataset."""
        if not path.is_file():
            raise ResultsLogError(f"Cannot resume: results log {path} does not exist")
        handle = path.open("r+b")
        _lock(path, handle)  # before reading: what another process is appending is not read half-way
        try:
            return cls._reopen(path, handle, config, kind, dataset)
        except BaseException:
            handle.close()
            raise

    @classmethod
    def _reopen(
        cls,
        path: Path,
        handle: Any,
        config: Mapping[str, Any],
        kind: str,
        dataset: Mapping[str, Any] | None,
    ) -> ResultsLog:
        header: dict[str, Any] = {}
        done: set[RunKey] = set()
        valid = lines = 0
        invocation = 1  # a resume is never the invocation that created the log
        for number, offset, record in _records(path):
            valid, lines = offset, number
            if number == 1:
                header = record
            else:
                done.add(_key_of(record))
                # Records without a stamp were written by one earlier invocation (or several: unknown).
                invocation = max(invocation, int(record.get("invocation") or 0) + 1)
        if not header:
            raise ResultsLogError(f"{path}: the results log has no header line")
        _check_resumable(path, header, config, kind, dataset)
        torn = handle.seek(0, os.SEEK_END) > valid
        handle.truncate(valid)  # drop a torn final line before appending
        handle.seek(valid)
        log = cls(path, handle, done, invocation, log_index_base(header))
        log.dropped_line = lines + 1 if torn else None
        return log

    def _write(self, record: Mapping[str, Any]) -> None:
        self._emit(_encoded(record))

    def _emit(self, line: bytes) -> None:
        # An error message may quote a key or a URL with credentials; the log must not.
        line = redact_bytes(line)
        # Straight to the file in one write (the handle's buffer stays empty): a line is on disk, whole,
        # when this returns, and only a crash inside a write can leave a torn last line.
        written = os.write(self._fd, line)
        while written < len(line):  # a short write (a signal, a full disk): the rest, or the error
            written += os.write(self._fd, memoryview(line)[written:])

    def append(self, record: Mapping[str, Any]) -> None:
        """Writes one finished item, stamped with its invocation, and flushes it to the OS before returning."""
        wall, cpu = self._opened
        stamp = {
            "invocation": self.invocation,
            "invocation_ms": round((time.perf_counter() - wall) * 1000.0, 3),
            "invocation_cpu_ms": round((time.process_time() - cpu) * 1000.0, 3),
        }
        if type(record) is dict and record and not self.index_base and _unstamped(record):
            # The stamp's members appended to the record's text: the bytes of {**record, **stamp}
            # without copying the record into a new dict first.
            self._emit(b"".join((_encoded(record)[:-2], b",", _encoded(stamp)[1:])))
            return
        stamped = {**record, **stamp}
        self._write(rebase_indices(stamped, -self.index_base) if self.index_base else stamped)

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()

    def __enter__(self) -> ResultsLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_resumable(
    path: Path,
    header: Mapping[str, Any],
    config: Mapping[str, Any],
    kind: str,
    dataset: Mapping[str, Any] | None,
) -> None:
    logged_kind = header.get("kind", "eval")
    if logged_kind != kind:
        raise ResultsLogError(f"Cannot resume {path}: it is a '{logged_kind}' log, not a '{kind}' one.")
    old_config = header.get("config", {})
    if header.get("format") != LOG_FORMAT:
        # A log of the earlier format lacks the newer keys: compare what it recorded.
        config = {k: v for k, v in config.items() if k in old_config}
    if old_config != dict(config):
        raise ResultsLogError(
            f"Cannot resume {path}: it was written with a different config "
            f"({_describe_difference(old_config, config)}). Start a new log instead of mixing results."
        )
    old = header.get("dataset")
    if old and dataset and old.get("fingerprint") != dataset.get("fingerprint"):
        raise ResultsLogError(
            f"Cannot resume {path}: the dataset changed since the log was started ({old.get('path')}: "
            f"{old.get('size')} bytes, fingerprint {old.get('fingerprint')}; now {dataset.get('path')}: "
            f"{dataset.get('size')} bytes, fingerprint {dataset.get('fingerprint')}). "
            "Start a new log instead of mixing results."
        )
