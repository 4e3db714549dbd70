"""The search of ``osmosis view`` over every run's texts, without holding the runs.

While the log is read once, each run's texts (:func:`~osmosis_ai.report._rows.run_texts`, lower case)
are compressed in chunks into a temporary file (about a tenth of the log); a search decompresses the
chunks one at a time and finds the text in them, instead of parsing the whole log again. Memory holds
one chunk, whatever the log's size.
"""

from __future__ import annotations

import tempfile
import zlib
from array import array
from typing import Any

from osmosis_ai.report._rows import run_texts

__all__ = ["RunTextIndex"]

_CHUNK = 1 << 20
# Entry: START row-index END text (SEP text)*, in UTF-8, where these bytes never occur: no text or needle
# holds them, and a match of UTF-8 bytes is a match of characters (UTF-8 is self-synchronising).
_START, _END, _SEP = b"\xff", b"\xfe", b"\xfd"


def _utf8(text: str) -> bytes:
    # Lone surrogates (a tolerant read keeps none, but a needle may) are encoded, not lost.
    return text.lower().encode("utf-8", "surrogatepass")


class RunTextIndex:
    """Every run's texts by row, compressed into a temporary file; :meth:`rows_with` finds the rows."""

    def __init__(self, chunk_bytes: int = _CHUNK) -> None:
        self._chunk = chunk_bytes
        # Open for the life of the index (the server's): it is unlinked already, and closed with the index.
        self._file = tempfile.TemporaryFile()  # noqa: SIM115
        self._spans = array("q")  # offset, length of each compressed chunk
        self._pending: list[bytes] = []
        self._size = 0

    def add(self, row: int, record: dict[str, Any]) -> bool:
        """Takes one run's texts (a sink of :func:`~osmosis_ai.report._run.scan_file`: always True)."""
        entry = _START + str(row).encode() + _END + _SEP.join(_utf8(t) for t in run_texts(record) if t)
        self._pending.append(entry)
        self._size += len(entry)
        if self._size >= self._chunk:
            self._flush()
        return True

    def _flush(self) -> None:
        if not self._pending:
            return
        data = zlib.compress(b"".join(self._pending), 1)
        self._spans.extend((self._file.tell(), len(data)))
        self._file.write(data)
        self._pending, self._size = [], 0

    def finish(self) -> None:
        """Writes what is left; call once the log has been read."""
        self._flush()

    def rows_with(self, needle: str) -> set[int]:
        """Rows with a run whose texts hold ``needle`` (lower case, as the page sends it)."""
        wanted = _utf8(needle)
        found: set[int] = set()
        for i in range(0, len(self._spans), 2):
            self._file.seek(self._spans[i])
            data = zlib.decompress(self._file.read(self._spans[i + 1]))
            at = data.find(wanted)
            while at >= 0:
                start = data.rfind(_START, 0, at)
                head = data.index(_END, start)
                if at > head:  # in the texts, not in the row number
                    found.add(int(data[start + 1 : head]))
                    following = data.find(_START, at)  # the rest of this entry is already found
                    at = -1 if following < 0 else data.find(wanted, following)
                else:
                    at = data.find(wanted, head + 1)
        return found

    def close(self) -> None:
        self._file.close()
