"""One keep-alive connection of the direct transport (:mod:`.http1`): an asyncio BufferedProtocol that
parses the answer to the request in flight as its bytes arrive.

Why a Protocol and not StreamReader/StreamWriter: a stream costs a reader, a writer, a waiter future per
``readuntil``/``readexactly``, a ``drain`` and their coroutines per request, and parsing the head into a
header dict, for what is one write and (almost always) one read. Here a request is one ``transport.write``
and one future; ``buffer_updated`` finds the head, takes the framing (``Content-Length``, ``chunked`` or
the body up to EOF) straight from its bytes, and resolves the future when the body is complete. The usual
answer, head and whole body in one read, costs one search, the head's parse and two copies (head, body).

Why Buffered: the event loop reads into the connection's own buffer (``recv_into``). A plain Protocol is
handed a new bytes object per read, which the loop allocates at its maximum read size (256 KiB) and shrinks:
on Linux that allocation is a fresh memory mapping each time, several times the cost of the read itself.
"""

from __future__ import annotations

import asyncio
import contextlib

from osmosis_ai._http_head import response_framing

__all__ = ["Connection", "HttpResponse", "StaleConnection", "persists", "split_head"]

# The longest answer head (and chunk-size or trailer line) accepted before the answer is called broken.
MAX_HEAD_BYTES = 1024 * 1024
# A connection's read buffer to begin with (it doubles for a larger answer, and is renewed after one).
_READ_SIZE = 32 * 1024

_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _TRAILER, _TO_EOF = range(6)


class StaleConnection(ConnectionError):
    """A pooled connection was closed by the server before it answered."""


class HttpResponse:
    """Status, lower-cased headers and the whole body."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def __repr__(self) -> str:
        return f"HttpResponse(status={self.status}, headers={self.headers!r}, body={self.body[:80]!r})"


def split_head(head: bytes) -> tuple[list[str], dict[str, str]]:
    """The start line's space-separated parts (at most three) and the lower-cased headers of a message head."""
    lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return lines[0].split(" ", 2), headers


def persists(version: str, connection: str) -> bool:
    """Whether a message's connection stays open: HTTP/1.1 unless ``Connection: close``; 1.0 only if asked."""
    connection = connection.lower()
    return (version == "HTTP/1.1" and connection != "close") or connection == "keep-alive"


def _framing(head: bytes) -> tuple[int, dict[str, str], int | None, bool, bool]:
    """Status, headers, Content-Length (None if absent), chunked, keep-alive of an answer head."""
    framing = response_framing(head)  # the plain form, read by the core as read_framing reads it
    return read_framing(head) if framing is None else framing


def read_framing(head: bytes) -> tuple[int, dict[str, str], int | None, bool, bool]:
    """:func:`_framing` in Python: any head, the error of one that is not an answer's."""
    start, headers = split_head(head)
    try:
        status = int(start[1])
    except (IndexError, ValueError):
        raise ConnectionError(f"not an HTTP response: {start[0][:80]!r}") from None
    length = headers.get("content-length")
    chunked = headers.get("transfer-encoding", "").lower() == "chunked"
    keep = persists(start[0], headers.get("connection", ""))
    return status, headers, None if length is None else int(length), chunked, keep


class Connection(asyncio.BufferedProtocol):
    """One connection; :meth:`send` writes a request and returns the future of its answer.

    Attributes:
        transport: The transport (replaced when TLS starts inside a proxy tunnel).
        closed: The server ended the connection (or it broke, or bytes came that nobody asked for).
        reusable: The last answer allows another request on this connection, and nothing follows it.
        head: The last answer's head, without its blank line.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reusable = False
        self._gone = False  # connection_lost has run
        self._lost: asyncio.Future[None] | None = None
        self._waiter: asyncio.Future[HttpResponse] | None = None
        # Bytes received and not yet parsed are _buffer[_start:_end]; a search for a line end resumes at _scan.
        self._buffer = bytearray(_READ_SIZE)
        self._view = memoryview(self._buffer)
        self._start = self._end = self._scan = 0
        self._state = _HEAD
        self._remaining = 0  # bytes of the body (or of the current chunk) still to come
        self._chunks: list[bytes] = []
        self._status = 0
        self._headers: dict[str, str] = {}
        self.head = b""
        self._keep = False
        self._fresh = True  # a new connection: its failure is never a stale pooled one
        self._answered = False  # a byte of the answer in flight arrived
        self._head_only = False  # the answer to CONNECT: a head, the tunnel after it

    def send(self, request: bytes, *, fresh: bool, head_only: bool = False) -> asyncio.Future[HttpResponse]:
        """Writes ``request``; the future resolves to its answer or fails with the reason there is none.

        ``head_only``: the answer has no body (CONNECT); whatever follows it stays unread.
        """
        waiter = self._waiter = self._loop.create_future()
        self._fresh = fresh
        self._answered = False
        self._head_only = head_only
        self.reusable = False
        if self.closed:  # ended before the request went out
            self._waiter = None
            waiter.set_exception(
                ConnectionResetError("the server closed the connection without an answer")
                if fresh
                else StaleConnection("pooled connection closed by the server")
            )
        else:
            self.transport.write(request)  # type: ignore[union-attr]
        return waiter

    @property
    def unread(self) -> int:
        """Bytes received past the last answer."""
        return self._end - self._start

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._end == len(self._buffer):
            self._make_room()
        return self._view[self._end :]

    def _make_room(self) -> None:
        """Moves the unparsed bytes to the front of the buffer, in a larger one if they fill half of it."""
        kept = self._end - self._start
        size = len(self._buffer) * 2 if kept * 2 > len(self._buffer) else len(self._buffer)
        buffer = bytearray(size)
        buffer[:kept] = self._view[self._start : self._end]
        self._buffer, self._view = buffer, memoryview(buffer)
        self._scan -= self._start
        self._start, self._end = 0, kept

    def buffer_updated(self, nbytes: int) -> None:
        self._end += nbytes
        waiter = self._waiter
        if waiter is None or waiter.done():  # nothing asked, or the asker left: the connection is spent
            self.close()
            return
        self._answered = True
        try:
            self._advance()
        except Exception as exc:  # a broken answer: the caller gets the reason, the connection goes
            self._fail(exc)

    def _line(self, marker: bytes) -> bytes | None:
        """The bytes before the next ``marker`` (consumed with it), or None until it arrives."""
        at = self._buffer.find(marker, self._scan, self._end)
        if at < 0:
            if self._end - self._start > MAX_HEAD_BYTES:
                raise ConnectionError(f"an answer head or line longer than {MAX_HEAD_BYTES} bytes")
            self._scan = max(self._start, self._end - len(marker) + 1)
            return None
        line = bytes(self._view[self._start : at])
        self._start = self._scan = at + len(marker)
        return line

    def _take(self, count: int, framing: int = 0) -> bytes | None:
        """The next ``count`` bytes (consumed with ``framing`` bytes after them), or None until they arrive."""
        if self._end - self._start < count + framing:
            return None
        data = bytes(self._view[self._start : self._start + count])
        self._start = self._scan = self._start + count + framing
        return data

    def _advance(self) -> None:
        while self._waiter is not None:
            state = self._state
            if state == _HEAD:
                head = self._line(b"\r\n\r\n")
                if head is None:
                    return
                self._begin(head)
            elif state == _LENGTH:
                body = self._take(self._remaining)
                if body is None:
                    return
                self._finish(body)
            elif state == _CHUNK_SIZE:
                line = self._line(b"\r\n")
                if line is None:
                    return
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size < 0:  # would move the parse backwards over bytes already read, forever
                    raise ConnectionError(f"a negative chunk size in the answer: {line[:80]!r}")
                self._state, self._remaining = (_CHUNK_DATA, size) if size else (_TRAILER, 0)
            elif state == _CHUNK_DATA:
                chunk = self._take(self._remaining, 2)  # a chunk ends with CRLF
                if chunk is None:
                    return
                self._chunks.append(chunk)
                self._state = _CHUNK_SIZE
            elif state == _TRAILER:
                line = self._line(b"\r\n")
                if line is None:
                    return
                if not line:
                    self._finish(b"".join(self._chunks))
            else:  # _TO_EOF: the body is everything until the server closes
                return

    def _begin(self, head: bytes) -> None:
        status, headers, length, chunked, keep = _framing(head)
        if 100 <= status < 200 and status != 101:
            return  # an interim answer (100 Continue): the real one follows
        self._status, self._headers, self._keep, self.head = status, headers, keep, head
        if self._head_only:
            self._state, self._remaining = _LENGTH, 0
        elif chunked:
            self._state = _CHUNK_SIZE
            self._chunks = []
        elif length is not None:
            if length < 0:
                raise ValueError(f"a negative Content-Length: {length}")
            self._state, self._remaining = _LENGTH, length
        elif keep:  # a keep-alive message with neither length nor chunks has no body
            self._state, self._remaining = _LENGTH, 0
        else:
            self._state = _TO_EOF

    def _finish(self, body: bytes) -> None:
        waiter, self._waiter = self._waiter, None
        self._state = _HEAD
        self._chunks = []
        self.reusable = self._keep and self._start == self._end and not self.closed
        if self._start == self._end:
            self._start = self._end = self._scan = 0
            if len(self._buffer) > _READ_SIZE:  # a large answer's buffer is not kept for small ones
                self._buffer = bytearray(_READ_SIZE)
                self._view = memoryview(self._buffer)
        waiter.set_result(HttpResponse(self._status, self._headers, body))  # type: ignore[union-attr]

    def _fail(self, error: BaseException) -> None:
        waiter, self._waiter = self._waiter, None
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)

    def eof_received(self) -> None:
        self.closed = True  # the transport closes itself; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._gone = True
        self.reusable = False
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(None)
        waiter, self._waiter = self._waiter, None
        if waiter is None or waiter.done():
            return
        if self._state == _TO_EOF and exc is None:
            waiter.set_result(
                HttpResponse(self._status, self._headers, bytes(self._view[self._start : self._end]))
            )
            return
        error: BaseException
        if not self._answered and not self._fresh:
            error = StaleConnection("pooled connection closed by the server")
        elif isinstance(exc, OSError):
            error = exc
        elif self._state == _HEAD:
            error = ConnectionResetError("the server closed the connection without an answer")
        else:
            partial = bytes(self._view[self._start : self._end])
            error = asyncio.IncompleteReadError(partial, self._remaining or None)
        if exc is not None and error is not exc:
            error.__cause__ = exc
        waiter.set_exception(error)

    def close(self) -> None:
        """Closes the connection (the answer in flight, if any, is abandoned)."""
        self.closed = True
        self.reusable = False
        if self.transport is not None:
            # A loop already closed (an interrupted run's) has released the socket with it.
            with contextlib.suppress(RuntimeError):
                self.transport.close()

    async def wait_closed(self) -> None:
        """Closes the connection and waits until the transport has let go of its socket."""
        self.close()
        if self.transport is None or self._gone:
            return
        if self._lost is None:
            self._lost = self._loop.create_future()
        await self._lost
