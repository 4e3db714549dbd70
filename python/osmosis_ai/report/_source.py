"""The records of a results file, streamed for a page: the Rust reader, and a tolerant fallback per line.

A results log is read in batches by the Rust JSONL reader (:func:`osmosis_ai.datasets.iter_batches`),
so memory holds one batch, not the log. A line the strict reader refuses (a lone surrogate escape such
as ``"\\ud800"``, bytes that are not UTF-8) is still a record a page must show: that one line is decoded
leniently here (bad characters become U+FFFD) and the Rust reader resumes after it. The ``-o`` JSON
layouts are one document each and are read whole.
"""

from __future__ import annotations

import json
import os
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.errors import DatasetParseError, StatsError
from osmosis_ai.runs.log import line_number_at
from osmosis_ai.stats import log_index_base, rebase_indices

__all__ = [
    "LogSource",
    "Record",
    "line_offsets",
    "open_source",
    "read_line_at",
    "replace_in_texts",
    "tolerant_loads",
]

_BATCH = 512
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Record:
    """One run record and where it is: ``position`` counts the file's non-blank lines from 0."""

    position: int
    data: dict[str, Any]


@dataclass
class LogSource:
    """A results file opened for a page: its layout, header, and a way to stream its run records.

    Attributes:
        path: The file.
        layout: ``"log"``, ``"records"``, ``"eval-json"`` or ``"rubric-json"``.
        header: The log header (``{}`` without one); for ``-o`` JSON, the document minus its rows.
        skipped_tail: True when the last line was cut off (a crash mid-write) and is left out.
        lenient_lines: How many lines the tolerant decoder read (invalid UTF-8, lone surrogates).
    """

    path: str
    layout: str
    header: dict[str, Any]
    skipped_tail: bool = False
    lenient_lines: int = 0
    # What the log's row and run indices count from (1 in rubric logs of earlier versions): subtracted,
    # so every file reads numbered from 0, as the result model reads it.
    index_base: int = 0
    _offsets: array[int] | None = field(default=None, repr=False)

    def records(self) -> Iterator[Record]:
        """Every run record, in file order (a generator: the file is read as it is consumed)."""
        if self.layout in ("eval-json", "rubric-json"):
            yield from _document_records(self.path)
            return
        if not self.index_base:
            yield from self._log_records()
            return
        for record in self._log_records():
            yield Record(record.position, rebase_indices(record.data, self.index_base))

    def _log_records(self) -> Iterator[Record]:
        from osmosis_ai.datasets import iter_batches

        position = 0
        first = self.layout == "log"
        while True:
            try:
                for batch in iter_batches(self.path, contract="any", offset=position, batch_size=_BATCH):
                    for data in batch:
                        if first:
                            first = False
                        elif isinstance(data, dict):
                            yield Record(position, data)
                        position += 1
                return
            except DatasetParseError as exc:
                if exc.row is None or exc.row < position:
                    raise
                position = exc.row
            lenient = self._lenient(position)
            if lenient is not None:
                if first:
                    first = False
                else:
                    yield Record(position, lenient)
            position += 1

    def _lenient(self, position: int) -> dict[str, Any] | None:
        """The record at ``position`` decoded leniently; None for a cut-off last line (noted)."""
        if self._offsets is None:
            self._offsets = line_offsets(self.path)
        offset = self._offsets[position]
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            raw = handle.readline()
        try:
            data = tolerant_loads(raw)
        except ValueError as exc:
            if position == len(self._offsets) - 1 and not raw.endswith(b"\n"):
                self.skipped_tail = True
                return None
            number = line_number_at(self.path, offset)
            raise StatsError(
                f"{self.path}:{number}: not a results record ({exc}); the line is not JSON", field="line"
            ) from None
        self.lenient_lines += 1
        return data if isinstance(data, dict) else None


def tolerant_loads(raw: bytes) -> Any:
    """JSON from bytes that may hold invalid UTF-8 or lone surrogate escapes (each becomes U+FFFD)."""
    return _clean(json.loads(raw.decode("utf-8", "replace")))


def replace_in_texts(value: Any, pattern: re.Pattern[str]) -> Any:
    """``value`` (JSON data) with every match of ``pattern`` in its strings and keys replaced by U+FFFD."""
    if isinstance(value, str):
        return pattern.sub("\ufffd", value)
    if isinstance(value, dict):
        return {replace_in_texts(k, pattern): replace_in_texts(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_in_texts(v, pattern) for v in value]
    return value


def _clean(value: Any) -> Any:
    return replace_in_texts(value, _LONE_SURROGATE)


def line_offsets(path: str) -> array[int]:
    """The byte offset of every non-blank line (no parsing: one pass that only finds newlines)."""
    offsets = array("q")
    at = 0
    with open(path, "rb") as handle:
        for raw in handle:
            if raw.strip():
                offsets.append(at)
            at += len(raw)
    return offsets


def read_line_at(path: str, offset: int) -> dict[str, Any]:
    """The record on the line starting at ``offset`` (strict JSON first, the tolerant decoder after)."""
    import orjson

    with open(path, "rb") as handle:
        handle.seek(offset)
        raw = handle.readline()
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = tolerant_loads(raw)
    return data if isinstance(data, dict) else {}


def _first_line(path: str) -> bytes:
    with open(path, "rb") as handle:
        for raw in handle:
            if raw.strip():
                return raw
    return b""


def _document_records(path: str) -> Iterator[Record]:
    from osmosis_ai.stats._frame import _document_runs

    with open(path, "rb") as handle:
        doc = json.loads(handle.read().decode("utf-8", "replace"))
    keys = _record_keys(doc)
    for position, run in enumerate(_document_runs(doc)):
        key = next(keys, None)
        yield Record(position, _clean({"row_key": key, **run} if key else run))


def _record_keys(doc: dict[str, Any]) -> Iterator[str | None]:
    """The content key of each run's record in a rubric ``-o`` JSON (from its verbatim ``input_record``,
    as a rubric log keys it), in the order of :func:`_document_runs`: its rows are then found in the
    dataset by content, whichever records the rubric selected."""
    from osmosis_ai.runs.log import row_key

    for record in doc.get("records") or []:
        source = record.get("input_record") if isinstance(record, dict) else None
        key = row_key(source) if isinstance(source, dict) else None
        for _ in record.get("runs") or []:
            yield key


def open_source(path: str | os.PathLike[str]) -> LogSource:
    """Opens a results file: finds its layout and reads its header (the rest is read on demand).

    Raises:
        FileNotFoundError: The file does not exist.
        StatsError: The file is not a results file.
    """
    name = os.fspath(path)
    first = _first_line(name)
    try:
        head = tolerant_loads(first) if first else None
    except ValueError:
        head = None
    if isinstance(head, dict) and "format" in head:
        return LogSource(name, "log", head, index_base=log_index_base(head))
    if head is None and first:
        # A pretty-printed -o JSON: its first line is not JSON on its own.
        return _document_source(name)
    if (isinstance(head, dict) and "row_index" in head) or not first:
        return LogSource(name, "records", {})
    return _document_source(name)


def _document_source(name: str) -> LogSource:
    with open(name, "rb") as handle:
        try:
            doc = json.loads(handle.read().decode("utf-8", "replace"))
        except ValueError as exc:
            raise StatsError(f"{name}: not a results log or results JSON ({exc})", field="line") from None
    if not isinstance(doc, dict):
        raise StatsError(f"{name}: not a results log or results JSON (a JSON {type(doc).__name__})")
    rubric = "rubric_id" in doc or "records" in doc
    header = {k: v for k, v in doc.items() if k not in ("rows", "records")}
    return LogSource(name, "rubric-json" if rubric else "eval-json", _clean(header))
