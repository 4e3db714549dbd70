"""A small HTTP/1.1 server on 127.0.0.1 for the LLM bridge: keep-alive, whole bodies in and out.

Why not aiohttp.web: the bridge answers one route with a JSON body per request, thousands of times a
second, inside ``osmosis eval run``. A general-purpose web framework cost more CPU per request than the
rest of the item, and its import alone was 40% of the command's start-up. This server does only what a
chat-completions client needs: ``Content-Length`` and ``chunked`` request bodies (``Expect:
100-continue`` answered), keep-alive, a body size limit, and a whole reply per request. It shares the
message parsing of :mod:`osmosis_ai.llm.http1` (the client).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus

import orjson

from osmosis_ai.llm.http1 import BodyTooLarge, keeps_alive, read_body, split_head

__all__ = ["Http1Server", "HttpReply", "HttpRequest"]

_MAX_HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class HttpRequest:
    """One request: method, path (query string included), lower-cased headers and the whole body."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class HttpReply:
    """One whole reply. ``json_error`` builds the ``{"error": {"message", "type"}}`` shape OpenAI clients read.

    ``headers`` are sent as given (after Content-Type and Content-Length), e.g. a Content-Security-Policy.
    """

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def json_error(cls, status: int, message: str, kind: str) -> HttpReply:
        return cls(status, orjson.dumps({"error": {"message": message, "type": kind}}))


Handler = Callable[[HttpRequest], Awaitable[HttpReply]]


class Http1Server:
    """Serves ``handler`` on ``host`` (an ephemeral port unless ``port`` is given) until :meth:`aclose`.

    Args:
        handler: Called once per request; its exceptions become a 500 reply (the connection stays usable).
        max_body: Larger request bodies are refused with 413 and the connection is closed.

    Example:
        >>> async def hello(request):  # doctest: +SKIP
        ...     return HttpReply(200, b'{"ok": true}')
        >>> server = await Http1Server(hello).start()  # doctest: +SKIP
        >>> server.port  # doctest: +SKIP
        41234
    """

    def __init__(
        self, handler: Handler, *, host: str = "127.0.0.1", port: int = 0, max_body: int = 64 * 1024 * 1024
    ) -> None:
        self.handler = handler
        self.host = host
        self.port = port
        self.max_body = max_body
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.StreamWriter] = set()

    async def start(self) -> Http1Server:
        self._server = await asyncio.start_server(
            self._serve_connection, self.host, self.port, limit=_MAX_HEAD_BYTES
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def aclose(self) -> None:
        if self._server is None:
            return
        self._server.close()
        # Idle keep-alive connections would otherwise outlive the server (and its event loop).
        for writer in list(self._connections):
            writer.close()
        await self._server.wait_closed()
        self._server = None

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away mid-request: nothing to answer
        finally:
            self._connections.discard(writer)
            writer.close()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answers one request; False when the connection is to be closed."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # closed between requests: the normal end of a keep-alive connection
        except asyncio.LimitOverrunError:
            await _send(writer, HttpReply.json_error(431, "request head too large", "invalid_request_error"))
            return False
        start, headers = split_head(head)
        if len(start) != 3 or not start[2].startswith("HTTP/1."):
            await _send(writer, HttpReply.json_error(400, "not an HTTP/1.x request", "invalid_request_error"))
            return False
        method, path, version = start
        keep = keeps_alive(version, headers)
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        try:
            body = await read_body(reader, headers, keep=True, limit=self.max_body)
        except BodyTooLarge as exc:
            await _send(writer, HttpReply.json_error(413, str(exc), "invalid_request_error"))
            return False
        except (ValueError, asyncio.LimitOverrunError):  # malformed: a bad length, an endless chunk-size line
            await _send(writer, HttpReply.json_error(400, "malformed request body", "invalid_request_error"))
            return False
        try:
            reply = await self.handler(HttpRequest(method, path, headers, body))
        except Exception as exc:  # a bug of the handler must not take the connection's other requests down
            reply = HttpReply.json_error(500, f"{type(exc).__name__}: {exc}", "server_error")
        await _send(writer, reply, keep)
        return keep


async def _send(writer: asyncio.StreamWriter, reply: HttpReply, keep: bool = False) -> None:
    try:
        reason = HTTPStatus(reply.status).phrase
    except ValueError:
        reason = "Unknown"
    close = "" if keep else "Connection: close\r\n"
    extra = "".join(f"{name}: {value}\r\n" for name, value in reply.headers)
    head = (
        f"HTTP/1.1 {reply.status} {reason}\r\nContent-Type: {reply.content_type}\r\n"
        f"Content-Length: {len(reply.body)}\r\n{extra}{close}\r\n"
    )
    writer.write(head.encode("latin-1") + reply.body)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
