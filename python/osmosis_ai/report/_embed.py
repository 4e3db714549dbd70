"""Data a page carries: JSON lines, gzip-compressed into a temporary file as they come, then written into
the page as base64 (the browser decompresses it natively with ``DecompressionStream``).

Nothing here holds the whole data in memory: lines are compressed as they are added and the page is
written from the temporary file in chunks.
"""

from __future__ import annotations

import base64
import json
import tempfile
import zlib
from collections.abc import Iterator
from typing import IO, Any

import orjson

__all__ = ["DEFAULT_MAX_DATA_MB", "CompressedLines", "json_line"]

#: Runs are embedded while the page's compressed data stays under this many MiB (the page is about 4/3
#: of it: base64). Past it, `osmosis report` says which runs it left out; `osmosis view` shows them all.
DEFAULT_MAX_DATA_MB = 32
_CHUNK = 3 * (1 << 18)  # a multiple of 3: base64 of consecutive chunks concatenates cleanly
# The compressor holds input before it writes; a sync flush every this many raw bytes keeps the size known.
_FLUSH_EVERY = 1 << 20
_CHUNK_RAW = 1 << 18
_FIRST_RATIO = 0.35  # compressed / raw before anything was flushed (JSON of model outputs: about 1/3)


def json_line(value: Any) -> bytes:
    """One JSON line (orjson; the standard library for what orjson refuses, e.g. integers past 64 bits)."""
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):
        text = json.dumps(value, default=str, ensure_ascii=False, allow_nan=False, skipkeys=True)
        return text.encode("utf-8", "replace") + b"\n"


class CompressedLines:
    """JSON lines compressed into a temporary file, refusing lines once ``budget`` compressed bytes are used.

    Args:
        budget: Compressed bytes allowed (None: no limit).
    """

    def __init__(self, budget: int | None = None) -> None:
        self.budget = budget
        self.lines = 0
        self.raw_bytes = 0
        self.full = False
        # Closed by base64_chunks or close: it lives as long as this object, not one block.
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="osmosis-page-")  # noqa: SIM115
        self._compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip container
        self._written = 0
        self._pending = 0  # raw bytes given to the compressor since its last flush
        self._flushed_raw = 0
        self._buffer: list[bytes] = []
        self._buffered = 0

    def add(self, value: Any) -> bool:
        """Adds one line; False (and nothing added) once the budget is used up."""
        if self.full:
            return False
        line = json_line(value)
        if self.budget is not None and self.estimate(len(line)) > self.budget:
            self.full = True
            return False
        # Lines are compressed in chunks: one compress call per short line cost more than the deflate.
        self._buffer.append(line)
        self._buffered += len(line)
        if self._buffered >= _CHUNK_RAW:
            self._compress()
        if self._pending >= _FLUSH_EVERY:
            self._write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
            self._flushed_raw += self._pending
            self._pending = 0
        self.lines += 1
        self.raw_bytes += len(line)
        return True

    def _compress(self) -> None:
        self._write(self._compressor.compress(b"".join(self._buffer)))
        self._pending += self._buffered
        self._buffer.clear()
        self._buffered = 0

    def estimate(self, more: int = 0) -> float:
        """Compressed bytes once ``more`` raw bytes are added (input not yet written at the ratio so far)."""
        ratio = self._written / self._flushed_raw if self._flushed_raw else _FIRST_RATIO
        return self._written + (self._pending + self._buffered + more) * ratio

    def _write(self, out: bytes) -> None:
        if out:
            self._file.write(out)
            self._written += len(out)

    @property
    def written(self) -> int:
        """Compressed bytes so far (the compressor may still hold a few KiB)."""
        return self._written

    def finish(self) -> int:
        """Ends the stream; returns its compressed size in bytes."""
        self._compress()
        tail = self._compressor.flush()
        self._file.write(tail)
        self._written += len(tail)
        self._file.seek(0)
        return self._written

    def base64_chunks(self) -> Iterator[bytes]:
        """The compressed stream as base64, in chunks (call after :meth:`finish`); closes the file."""
        try:
            while chunk := self._file.read(_CHUNK):
                yield base64.b64encode(chunk)
        finally:
            self._file.close()

    def close(self) -> None:
        self._file.close()
