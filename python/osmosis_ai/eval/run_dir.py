"""The run directory of ``osmosis eval run``: its name, its lock, its results log, the files users read.

``<output root>/<run name>/`` holds ``manifest.json`` (the input lock, :mod:`osmosis_ai.eval.run_manifest`),
``results.jsonl`` (the run engine's log, the resume authority), ``logs.txt`` and ``rollout_trials/`` (see
:mod:`osmosis_ai.eval.run_files`) and, refreshed from the log at the end of every invocation (each file
renamed into place whole), ``index.jsonl`` (one line per work item, latest attempt wins, sorted by row then
run; ``summary.jsonl`` is a byte-identical copy), ``progress.json``, ``metrics.json``, ``trajectories/`` and
``artifacts/``. The same ``--name`` resumes; ``--fresh`` renames the old directory to
``<name>.archive-<UTC stamp>`` (never deleted). A lock under ``<root>/.locks/`` (outside the run directory,
so the rename cannot drop it) keeps two invocations off one run.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import secrets
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from osmosis_ai import _core
from osmosis_ai.errors import ResultsLogError, RunError

if TYPE_CHECKING:
    from osmosis_ai.runs.log import ResultsLog

__all__ = ["RunDirectory", "default_run_name", "validate_run_name"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# An index line's fields in order: the core's list, which its own writer of the lines reads too.
INDEX_KEYS = tuple(_core.EVAL_RUN_INDEX_KEYS)


def validate_run_name(name: str) -> str:
    """A run name is one path segment of at most 96 characters: letters, digits, ``. _ -``."""
    if not name or len(name) > 96 or name == ".locks" or not _NAME.match(name):
        raise RunError(
            f"Invalid run name {name!r}: use 1-96 letters, digits, '.', '_' or '-', starting with a letter or digit."
        )
    return name


def _stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def default_run_name(config_path: Path) -> str:
    """``<config stem>-<UTC stamp>-<8 random hex>`` (a one-off run; pass ``--name`` to be able to resume)."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "-", config_path.stem).strip("-._") or "eval"
    return f"{stem[:60]}-{_stamp()}-{secrets.token_hex(4)}"


@dataclass
class Resumed:
    """What a reopened log already holds."""

    log: ResultsLog
    carried: int
    retried: int


class RunDirectory:
    """One run's directory under ``root``; see the module docstring."""

    def __init__(self, root: Path, name: str) -> None:
        self.root = root
        self.name = validate_run_name(name)
        self.path = root / name
        self.log_path = self.path / "results.jsonl"
        self.manifest: dict[str, Any] = {}
        self._lock: Any = None

    def lock(self) -> None:
        """Takes the run's lock, or fails saying another invocation holds it."""
        import fcntl

        locks = self.root / ".locks"
        locks.mkdir(parents=True, exist_ok=True)
        path = locks / f"{self.name}.lock"
        handle = path.open("a")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.close()
            raise RunError(
                f"Another `osmosis eval run` already holds {path}; wait for it or use a different {{name}}.",
                fields=("name",),
            ) from exc
        self._lock = handle

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def archive(self) -> Path | None:
        """Renames an existing run directory out of the way (``--fresh``); returns the new path."""
        if not self.path.exists():
            return None
        base = self.root / f"{self.name}.archive-{_stamp()}"
        target, n = base, 1
        while target.exists():
            n += 1
            target = Path(f"{base}-{n}")
        self.path.rename(target)
        return target

    def open_log(
        self,
        inputs: Mapping[str, Any],
        provenance: Mapping[str, Any],
        dataset: Path,
        *,
        retry_failed: bool,
    ) -> Resumed:
        """Creates the manifest and the results log, or reopens both (same input lock) with what they hold."""
        from osmosis_ai.eval.run_manifest import open_manifest
        from osmosis_ai.runs.log import ResultsLog, dataset_fingerprint, iter_runs

        (self.path / "rollout_trials").mkdir(parents=True, exist_ok=True)
        self.manifest = open_manifest(self.path, self.name, inputs, provenance)
        fingerprint = dataset_fingerprint(dataset)
        if not self.log_path.exists():
            log = ResultsLog.create(self.log_path, inputs, kind="eval-run", dataset=fingerprint)
            return Resumed(log, 0, 0)
        try:
            log = ResultsLog.resume(self.log_path, inputs, kind="eval-run", dataset=fingerprint)
        except ResultsLogError as exc:
            raise ResultsLogError(
                f"{exc.template} (run '{self.name}': pass {{fresh}} to archive it and start over)",
                fields=(*exc.fields, "fresh"),
            ) from exc
        retried = 0
        if retry_failed:
            latest = {}
            for record in iter_runs(self.log_path):
                key = (
                    record["row_index"],
                    record["row_key"],
                    record["run_index"],
                    record.get("model_tag") or "",
                )
                latest[key] = record.get("status")
            for key, status in latest.items():
                if status in ("failed", "skipped"):
                    log.done.discard(key)
                    retried += 1
        return Resumed(log, len(log.done), retried)

    def latest_records(self, runs_per_row: int | None = None) -> Iterator[dict[str, Any]]:
        """The latest record per (row, run), in row then run order (what ``index.jsonl`` holds), read from
        the log one at a time; ``runs_per_row`` (the run's ``n``) keeps their offsets in 8 bytes a run."""
        from osmosis_ai.runs.log import iter_latest_runs

        return iter_latest_runs(self.log_path, runs_per_row)

    def earlier_eval_run(self) -> dict[str, Any]:
        """``metrics.json``'s ``eval_run`` as an earlier invocation of this run left it (``{}`` if none)."""
        try:
            earlier = orjson.loads((self.path / "metrics.json").read_bytes()).get("eval_run")
        except (OSError, orjson.JSONDecodeError, AttributeError):
            return {}
        same = isinstance(earlier, dict) and earlier.get("id") == self.manifest.get("local_run_id")
        return earlier if same else {}

    def write_outputs(
        self,
        runs_per_row: int | None,
        resumed_ids: Collection[str],
        on_record: Callable[[dict[str, Any]], None],
    ) -> None:
        """Lays out trajectories and artifacts and writes ``index.jsonl`` / ``summary.jsonl`` from the latest
        record of each item (:meth:`latest_records`), a record at a time (``on_record`` sees each, with its
        ``trajectory_filename``: the fields :data:`osmosis_ai.atif.EvalRunItems` reads); renamed into
        place once whole."""
        from osmosis_ai._files import fsync_dir
        from osmosis_ai.eval.run_files import LogSource, project_items

        model = (self.manifest.get("inputs") or {}).get("model_path")
        names = ("index.jsonl", "summary.jsonl")
        handles = [(self.path / f".{name}.tmp").open("wb") for name in names]
        try:
            source = LogSource(self.log_path, runs_per_row)
            items = project_items(self.path, source, resumed_ids, model_name=model, index_line=index_line)
            # Lines go out joined, _INDEX_BATCH at a time: a buffered write per line and file cost more than
            # the rest of this loop.
            batch: list[bytes] = []
            for record, line in items:
                on_record(record)
                batch.append(line)
                if len(batch) == _INDEX_BATCH:
                    _write_all(handles, batch)
            _write_all(handles, batch)
            for handle in handles:
                handle.flush()
                os.fsync(handle.fileno())
        finally:
            for handle in handles:
                handle.close()
        for name in names:
            os.replace(self.path / f".{name}.tmp", self.path / name)
        fsync_dir(self.path)

    def write_files(self, files: Mapping[str, Any]) -> None:
        """Writes each ``{name: payload}`` as JSON, renamed into place."""
        from osmosis_ai._files import write_json_atomic

        for name, payload in files.items():
            write_json_atomic(self.path / name, payload)


_INDEX_BATCH = 512  # index lines written at once (~120 KiB)


def _write_all(handles: Sequence[BinaryIO], lines: list[bytes]) -> None:
    """Writes ``lines`` joined to every handle, and empties the list."""
    data = b"".join(lines)
    lines.clear()
    for handle in handles:
        handle.write(data)


# json.dumps(row, allow_nan=False) without a new encoder per line (dumps builds one for any non-default option).
_INDEX_JSON = json.JSONEncoder(allow_nan=False)
_INT_TEXT, _FLOAT_TEXT = int.__repr__, float.__repr__  # what json.dumps writes for them


def index_line(record: Mapping[str, Any], resumed: bool) -> bytes:
    """A record's ``index.jsonl`` line (``resumed``: a result an earlier invocation finished); the core
    writes most (:data:`osmosis_ai.atif.EvalRunItems`), this one what it leaves to Python."""
    return _index_line(_index_row(record, resumed))


def _index_line(row: Mapping[str, Any]) -> bytes:
    """``json.dumps(row, allow_nan=False)`` and a newline, as bytes: standard separators (``", "`` and
    ``": "``) and ASCII escapes, as the established files have them (line tools match).

    An index row holds strings, integers, finite floats and booleans under plain ASCII keys: those are
    written here, a third of the encoder's cost once per item; any other value goes to the encoder.
    """
    parts = []
    for key, value in row.items():
        kind = type(value)
        if kind is str:
            text = encode_basestring_ascii(value)
        elif kind is int:
            text = _INT_TEXT(value)
        elif kind is float and math.isfinite(value):
            text = _FLOAT_TEXT(value)
        elif kind is bool:
            text = "true" if value else "false"
        else:
            return (_INDEX_JSON.encode(row) + "\n").encode()
        parts.append(f'"{key}": {text}')
    return ("{" + ", ".join(parts) + "}\n").encode()


def _index_row(record: Mapping[str, Any], resumed: bool) -> dict[str, Any]:
    row = {key: value for key in INDEX_KEYS if (value := record.get(key)) is not None}
    if resumed:
        row["resumed"] = True
    return row


def rollout_ids(records: Iterator[Mapping[str, Any]] | list[dict[str, Any]]) -> set[str]:
    """The rollout ids of records (to mark which results an invocation carried over)."""
    return {r["rollout_id"] for r in records if r.get("rollout_id")}
