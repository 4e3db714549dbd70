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
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from osmosis_ai._core import Blake2b, blake2b_hexdigest
from osmosis_ai._files import orjson_dumps
from osmosis_ai.errors import ResultsLogError
from osmosis_ai.redact import redact_bytes
from osmosis_ai.runs.log_read import (
    LogContents,
    _records,
    iter_latest_runs,
    iter_runs,
    latest_run_lines,
    latest_run_starts,
    line_number_at,
    open_runs,
    parse_run_line,
    read_log,
    run_record_at,
)
from osmosis_ai.stats import RESULTS_LOG_FORMATS, log_index_base, rebase_indices

# The readers live in runs/log_read.py; their names stay importable from here, where callers found them.
__all__ = [
    "LOG_FORMAT",
    "LOG_FORMATS",
    "LogContents",
    "ResultsLog",
    "RunKey",
    "dataset_fingerprint",
    "iter_latest_runs",
    "iter_runs",
    "latest_run_lines",
    "latest_run_starts",
    "line_number_at",
    "open_runs",
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
    # paid only by a row that has one (the same bytes, so the same key, either way). The digest is
    # hashlib.blake2b(encoded, digest_size=12).hexdigest(), from the core's SIMD BLAKE2b in half the time.
    return blake2b_hexdigest(orjson_dumps(row, orjson.OPT_SORT_KEYS), 12)


def _describe_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    keys = sorted(set(old) | set(new))
    diffs = [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]
    return "; ".join(diffs)


def dataset_fingerprint(path: Path) -> dict[str, Any]:
    """What identifies a dataset file's content: its absolute path (a log read from another directory
    still finds it), size and a BLAKE2b digest of its bytes."""
    digest = Blake2b(16)  # hashlib.blake2b(digest_size=16)'s digest, in half the time
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
        self._opened = (time.perf_counter_ns(), time.process_time_ns())
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
        # Milliseconds to 3 decimals from whole microseconds: k / 1000 is the float nearest k thousandths,
        # without round()'s decimal conversion (two of them were 1 us a line). A half microsecond rounds up;
        # round(ms, 3) of float seconds sent it either way, by the float's noise.
        invocation_ms = (time.perf_counter_ns() - wall + 500) // 1000 / 1000
        cpu_ms = (time.process_time_ns() - cpu + 500) // 1000 / 1000
        if (
            type(record) is dict
            and not self.index_base
            # unstamped: three lookups (a set operation with the record's keys walks all of them)
            and "invocation" not in record
            and "invocation_ms" not in record
            and "invocation_cpu_ms" not in record
        ):
            # The bytes of {**record, **stamp} from one encoding of the record itself, the stamp put in
            # for it and taken out again: no copy of the record, no second encoding and join (1 us a line).
            try:
                record["invocation"] = self.invocation
                record["invocation_ms"] = invocation_ms
                record["invocation_cpu_ms"] = cpu_ms
                line = _encoded(record)
            finally:  # the caller's record as it was, even when Ctrl+C lands between these lines
                record.pop("invocation", None)
                record.pop("invocation_ms", None)
                record.pop("invocation_cpu_ms", None)
            self._emit(line)
            return
        stamp = {"invocation": self.invocation, "invocation_ms": invocation_ms, "invocation_cpu_ms": cpu_ms}
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
