"""The append-only results log: one JSON line per finished run, flushed as it is written.

The first line is a header holding the config fingerprint. A crash or Ctrl+C loses at most the runs in
flight; ``--resume LOG`` reads the log back, refuses a log written under a different config, and skips the
runs it already holds (keyed on row content, run index and model tag, so an edited dataset row is re-run).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from osmosis_ai.errors import CLIError

__all__ = ["LOG_FORMAT", "ResultsLog", "RunKey", "iter_runs", "read_log", "row_key"]

LOG_FORMAT = "osmosis-eval-log/1"

RunKey = tuple[str, int, str]
"""(row_key, run_index, model_tag): what identifies a finished run across resumes."""


def row_key(row: Mapping[str, Any]) -> str:
    """A stable digest of a dataset row's content (key order does not matter).

    Example:
        >>> row_key({"a": 1, "b": 2}) == row_key({"b": 2, "a": 1})
        True
    """
    encoded = orjson.dumps(row, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    return hashlib.blake2b(encoded, digest_size=12).hexdigest()


@dataclass
class LogContents:
    """What a results log holds: its header and its run records, in file order."""

    header: dict[str, Any]
    runs: list[dict[str, Any]]
    valid_bytes: int


def _records(path: Path) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line number, byte offset after the line, record) for every complete line, streamed.

    Every record is written with its newline in one call, so a final line without a newline is the write a
    crash interrupted: it is not yielded (that run is simply re-run). Any other bad line is an error; so is
    a first line that is not a log header.
    """
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return
            offset += len(raw)
            if not raw.strip():
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise CLIError(f"{path}:{number}: results log line is not valid JSON ({exc})") from exc
            if number == 1 and (not isinstance(record, dict) or record.get("format") != LOG_FORMAT):
                raise CLIError(
                    f"{path}:{number}: not an osmosis results log (expected a '{LOG_FORMAT}' header)"
                )
            yield number, offset, record


def iter_runs(path: Path) -> Iterator[dict[str, Any]]:
    """The run records of a results log, one at a time (memory does not grow with the log)."""
    for number, _, record in _records(path):
        if number > 1:
            yield record


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
        raise CLIError(f"{path}: the results log has no header line")
    return LogContents(header=header, runs=runs, valid_bytes=valid)


def _describe_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    keys = sorted(set(old) | set(new))
    diffs = [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]
    return "; ".join(diffs)


class ResultsLog:
    """An open results log. Use :meth:`create` for a new run and :meth:`resume` to continue one."""

    def __init__(self, path: Path, handle: Any, done: dict[RunKey, dict[str, Any]]) -> None:
        self.path = path
        self._handle = handle
        self.done = done

    @classmethod
    def create(cls, path: Path, config: Mapping[str, Any]) -> ResultsLog:
        """Starts a new log at ``path`` (refusing to overwrite an existing one) with ``config`` as header."""
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = path.open("xb")
        except FileExistsError as exc:
            raise CLIError(
                f"Results log {path} already exists: pass --resume {path} to continue it, "
                "or choose another --log path"
            ) from exc
        log = cls(path, handle, {})
        log._write({"format": LOG_FORMAT, "config": dict(config)})
        return log

    @classmethod
    def resume(cls, path: Path, config: Mapping[str, Any]) -> ResultsLog:
        """Reopens ``path`` for appending after checking it was written under the same ``config``."""
        if not path.is_file():
            raise CLIError(f"Cannot resume: results log {path} does not exist")
        contents = read_log(path)
        old_config = contents.header.get("config", {})
        if old_config != dict(config):
            raise CLIError(
                f"Cannot resume {path}: it was written with a different config "
                f"({_describe_difference(old_config, config)}). Start a new log instead of mixing results."
            )
        done = {(r["row_key"], int(r["run_index"]), r.get("model_tag") or ""): r for r in contents.runs}
        handle = path.open("r+b")
        handle.truncate(contents.valid_bytes)  # drop a torn final line before appending
        handle.seek(contents.valid_bytes)
        return cls(path, handle, done)

    def _write(self, record: Mapping[str, Any]) -> None:
        self._handle.write(orjson.dumps(record, default=str, option=orjson.OPT_NON_STR_KEYS) + b"\n")
        self._handle.flush()

    def append(self, record: Mapping[str, Any]) -> None:
        """Writes one finished run and flushes it to the OS before returning."""
        self._write(record)

    def runs(self) -> Iterator[dict[str, Any]]:
        """Every run record in the file (including those of earlier sessions)."""
        self._handle.flush()
        yield from read_log(self.path).runs

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()

    def __enter__(self) -> ResultsLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
