"""One keep-alive connection of the direct transport (:mod:`.http1`): an asyncio Protocol that parses the
answer to the request in flight as its bytes arrive.

Why a Protocol and not StreamReader/StreamWriter: a stream costs a reader, a writer, a waiter future per
``readuntil``/``readexactly``, a ``drain`` and their coroutines per request, and parsing the head into a
header dict, for what is one write and (almost always) one read. Here a request is one ``transport.write``
and one future; ``data_received`` finds the head, takes the framing (``Content-Length``, ``chunked`` or
the body up to EOF) straight from its bytes, and resolves the future when the body is complete. The usual
answer, head and whole body in one read, costs one search and one slice. The header dict is only built when
someone reads :attr:`HttpResponse.headers` (the transport does so for error answers only).
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["Connection", "HttpResponse", "StaleConnection", "persists", "split_head"]

# The longest answer head (and chunk-size or trailer line) accepted before the answer is called broken.
MAX_HEAD_BYTES = 1024 * 1024

_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _TRAILER, _TO_EOF = range(6)


class StaleConnection(ConnectionError):
    """A pooled connection was closed by the server before it answered."""


class HttpResponse:
    """Status, lower-cased headers and the whole body.

    Attributes:
        status: The status code.
        headers: Header names (lower-cased) to values, parsed from ``head`` on first use.
        body: The whole body (chunks joined).
        head: The head as received, without its blank line.
    """

    __slots__ = ("_headers", "body", "head", "status")

    def __init__(self, status: int, headers: dict[str, str] | None, body: bytes, head: bytes = b"") -> None:
        self.status = status
        self._headers = headers
        self.body = body
        self.head = head

    @property
    def headers(self) -> dict[str, str]:
        if self._headers is None:
            self._headers = split_head(self.head)[1]
        return self._headers

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


_LENGTH_MARKER, _CODING_MARKER = b"\r\ncontent-length:", b"\r\ntransfer-encoding:"
_CONNECTION_MARKER = b"\r\nconnection:"


def _field(lower_head: bytes, marker: bytes) -> str | None:
    """The value of the last header ``marker`` (``b"\\r\\nname:"``) names in a lower-cased head."""
    at = lower_head.rfind(marker)
    if at < 0:
        return None
    end = lower_head.find(b"\r\n", at + 2)
    return lower_head[at + len(marker) : end if end >= 0 else None].strip().decode("latin-1")


def _framing(head: bytes) -> tuple[int, int | None, bool, bool]:
    """Status, Content-Length (None if absent), chunked, keep-alive of an answer head (no blank line)."""
    line_end = head.find(b"\r\n")
    start = (head if line_end < 0 else head[:line_end]).decode("latin-1").split(" ", 2)
    try:
        status = int(start[1])
    except (IndexError, ValueError):
        raise ConnectionError(f"not an HTTP response: {start[0][:80]!r}") from None
    lower = head.lower()
    if b" :" in lower or b"\t:" in lower:  # a name padded before its colon: the tolerant parse
        headers = split_head(head)[1]
        length, coding = headers.get("content-length"), headers.get("transfer-encoding")
        connection = headers.get("connection")
    else:  # three searches instead of a dict of every header
        length = _field(lower, _LENGTH_MARKER)
        coding = _field(lower, _CODING_MARKER)
        connection = _field(lower, _CONNECTION_MARKER)
    chunked = coding is not None and coding.lower() == "chunked"
    keep = persists(start[0], connection or "")
    return status, None if length is None else int(length), chunked, keep


class Connection(asyncio.Protocol):
    """One connection; :meth:`send` writes a request and returns the future of its answer.

    Attributes:
        transport: The transport (replaced when TLS starts inside a proxy tunnel).
        closed: The server ended the connection (or it broke, or bytes came that nobody asked for).
        reusable: The last answer allows another request on this connection, and nothing follows it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reusable = False
        self._gone = False  # connection_lost has run
        self._lost: asyncio.Future[None] | None = None
        self._waiter: asyncio.Future[HttpResponse] | None = None
        self._buffer = bytearray()
        self._state = _HEAD
        self._remaining = 0  # bytes of the body (or of the current chunk) still to come
        self._chunks: list[bytes] = []
        self._status = 0
        self._head = b""
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
        return len(self._buffer)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():  # nothing asked, or the asker left: the connection is spent
            self.close()
            return
        self._answered = True
        try:
            if self._state == _HEAD and not self._buffer:
                end = data.find(b"\r\n\r\n")
                if end >= 0:
                    self._start(data[:end])
                    data = data[end + 4 :]
                    if self._state == _LENGTH and len(data) == self._remaining:
                        self._finish(data)  # the usual answer: head and whole body in one read
                        return
            self._buffer += data
            self._advance()
        except Exception as exc:  # a broken answer: the caller gets the reason, the connection goes
            self._fail(exc)

    def _start(self, head: bytes) -> None:
        status, length, chunked, keep = _framing(head)
        if 100 <= status < 200 and status != 101:
            return  # an interim answer (100 Continue): the real one follows
        self._status, self._head, self._keep = status, head, keep
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

    def _advance(self) -> None:
        buffer = self._buffer
        while self._waiter is not None:
            state = self._state
            if state in (_HEAD, _CHUNK_SIZE, _TRAILER):
                end = buffer.find(b"\r\n\r\n" if state == _HEAD else b"\r\n")
                if end < 0:
                    if len(buffer) > MAX_HEAD_BYTES:
                        raise ConnectionError(f"an answer line or head longer than {MAX_HEAD_BYTES} bytes")
                    return
                line = bytes(buffer[:end])
                del buffer[: end + (4 if state == _HEAD else 2)]
                if state == _HEAD:
                    self._start(line)
                elif state == _TRAILER:
                    if not line:
                        self._finish(b"".join(self._chunks))
                else:
                    size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                    self._state, self._remaining = (_CHUNK_DATA, size) if size else (_TRAILER, 0)
            elif state in (_LENGTH, _CHUNK_DATA):
                framing = 2 if state == _CHUNK_DATA else 0  # a chunk ends with CRLF
                if len(buffer) < self._remaining + framing:
                    return
                data = bytes(buffer[: self._remaining])
                del buffer[: self._remaining + framing]
                if state == _LENGTH:
                    self._finish(data)
                else:
                    self._chunks.append(data)
                    self._state = _CHUNK_SIZE
            else:  # _TO_EOF: the body is everything until the server closes
                return

    def _finish(self, body: bytes) -> None:
        waiter, self._waiter = self._waiter, None
        self._state = _HEAD
        self._chunks = []
        self.reusable = self._keep and not self._buffer and not self.closed
        waiter.set_result(HttpResponse(self._status, None, body, self._head))  # type: ignore[union-attr]

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
            waiter.set_result(HttpResponse(self._status, None, bytes(self._buffer), self._head))
            return
        error: BaseException
        if not self._answered and not self._fresh:
            error = StaleConnection("pooled connection closed by the server")
        elif isinstance(exc, OSError):
            error = exc
        elif self._state == _HEAD:
            error = ConnectionResetError("the server closed the connection without an answer")
        else:
            error = asyncio.IncompleteReadError(bytes(self._buffer), self._remaining or None)
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
