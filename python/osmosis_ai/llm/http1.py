"""A small HTTP/1.1 client for JSON POSTs to model servers (and a GET of their status): pooled keep-alive
connections, each an asyncio Protocol (:mod:`.http1_connection`) that parses the answer as it arrives.

Why not aiohttp or httpx: a chat request to a local server is one POST with a JSON body and a JSON reply,
and at thousands of requests per second the general-purpose clients spend more CPU per request (request
and response objects, header multidicts, tracing hooks) than the rest of the eval harness together. This
client does only what that needs: ``Content-Length`` and ``chunked`` bodies, keep-alive, TLS for https, a
total timeout per request, and one transparent retry when a pooled connection turns out to have been closed
by the server while idle (before any byte of the answer arrived).

Proxies and certificate authorities are whatever :func:`~osmosis_ai.llm.network.network_settings` decides,
once per pool: plain http goes to the proxy in absolute form, https through a ``CONNECT`` tunnel
(:mod:`.http1_proxy`). Without a proxy a request is built and sent exactly as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import deque
from collections.abc import Awaitable
from urllib.parse import urlsplit

from osmosis_ai._deadline import within
from osmosis_ai.llm.http1_connection import Connection, HttpResponse, StaleConnection, persists, split_head
from osmosis_ai.llm.network import NetworkSettings, network_settings

__all__ = [
    "BodyTooLarge",
    "ConnectFailed",
    "Http1Pool",
    "HttpResponse",
    "StaleConnection",
    "keeps_alive",
    "read_body",
    "split_head",
]


class ConnectFailed(OSError):
    """No connection could be opened (nothing listening, DNS, TLS handshake)."""


class BodyTooLarge(ValueError):
    """A message body longer than the reader's limit."""


class Http1Pool:
    """Keep-alive connections to one origin, at most ``limit`` open at once.

    Example:
        >>> pool = Http1Pool("http://127.0.0.1:8000/v1", limit=8)  # doctest: +SKIP
        >>> response = await pool.post("/chat/completions", b"{}", timeout=30)  # doctest: +SKIP
    """

    def __init__(
        self,
        base_url: str,
        *,
        limit: int = 64,
        headers: dict[str, str] | None = None,
        network: NetworkSettings | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._prefix = parts.path.rstrip("/")
        default_port = self._port == (443 if self._tls else 80)
        host_header = self._host if default_port else f"{self._host}:{self._port}"
        if ":" in self._host and not default_port:  # an IPv6 literal needs its brackets back
            host_header = f"[{self._host}]:{self._port}"
        network = network if network is not None else network_settings()
        self._proxy = network.proxy_for(base_url)
        self._ssl: ssl.SSLContext | None = network.ssl_context() if self._tls else None
        proxy_tls = self._proxy is not None and self._proxy.scheme == "https"
        self._proxy_ssl: ssl.SSLContext | None = network.ssl_context() if proxy_tls else None
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        target = self._prefix
        if self._proxy is not None and not self._tls:  # forwarded: the request line names the whole URL
            target = f"http://{host_header}{self._prefix}"
            if self._proxy.authorization:
                extra = f"Proxy-Authorization: {self._proxy.authorization}\r\n{extra}"
        self._target = target.encode("latin-1")
        self._head = f"Host: {host_header}\r\n{extra}".encode("latin-1")
        # Per path, a POST's bytes up to its Content-Length value: the same for every request to it.
        self._post_heads: dict[str, bytes] = {}
        self._idle: deque[Connection] = deque()
        # The connection limit: free slots, and the callers waiting for one in order (a freed slot is handed
        # to the first of them). Not an asyncio.Semaphore: its acquire and release, two coroutines and a
        # generator per request, cost about a microsecond of every model call.
        self._free = limit if limit > 0 else None
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def _open(self, connect_timeout: float) -> Connection:
        where = f"{self._host}:{self._port}"
        loop = asyncio.get_running_loop()
        connection = Connection(loop)
        opening: Awaitable[object]
        if self._proxy is None:
            opening = loop.create_connection(lambda: connection, self._host, self._port, ssl=self._ssl)
        else:
            from osmosis_ai.llm.http1_proxy import open_via_proxy

            opening = open_via_proxy(
                self._proxy, self._host, self._port, self._ssl, self._proxy_ssl, connection
            )
            where += f" through the proxy {self._proxy.shown} ({self._proxy.variable})"
        try:
            await asyncio.wait_for(opening, connect_timeout)
        except (OSError, asyncio.TimeoutError, TimeoutError) as exc:
            connection.close()
            raise ConnectFailed(f"cannot connect to {where} ({exc or type(exc).__name__})") from exc
        return connection

    async def post(
        self, path: str, body: bytes, *, timeout: float, connect_timeout: float = 10.0
    ) -> HttpResponse:
        """POSTs ``body`` (JSON) to ``prefix + path``; raises OSError/TimeoutError subclasses on failure."""
        start = self._post_heads.get(path)
        if start is None:
            start = (
                b"POST " + self._target + path.encode("latin-1") + b" HTTP/1.1\r\n" + self._head
                + b"Content-Type: application/json\r\nContent-Length: "
            )  # fmt: skip
            if len(self._post_heads) < 16:  # a pool posts to one or two paths; a caller of many gets no cache
                self._post_heads[path] = start
        request = b"".join((start, str(len(body)).encode(), b"\r\n\r\n", body))
        free = self._free
        if free is None:
            return await within(self._exchange(request, connect_timeout), timeout)
        if free > 0:
            self._free = free - 1
        else:
            await self._slot()
        try:
            return await within(self._exchange(request, connect_timeout), timeout)
        finally:
            self._release()

    async def _slot(self) -> None:
        """Waits until a finished request hands its slot over (the wait is not under the request's timeout)."""
        handed = asyncio.get_running_loop().create_future()
        self._waiting.append(handed)
        try:
            await handed
        except BaseException:  # cancelled, or closed outright (a task destroyed): the place is given up
            if handed.done() and not handed.cancelled():  # the slot came first: the next waiter gets it
                self._release()
            else:
                handed.cancel()  # a cancelled future is one _release skips
            raise

    def _release(self) -> None:
        waiting = self._waiting
        while waiting:
            handed = waiting.popleft()
            if not handed.done():  # a cancelled waiter left its future done
                handed.set_result(None)
                return
        self._free += 1  # type: ignore[operator]

    async def get(self, path: str, *, timeout: float) -> HttpResponse:
        """GETs ``prefix + path`` (a server's status document); connecting counts against ``timeout``."""
        request = b"GET " + self._target + path.encode("latin-1") + b" HTTP/1.1\r\n" + self._head + b"\r\n"
        return await within(self._exchange(request, timeout), timeout)

    async def _exchange(self, request: bytes, connect_timeout: float) -> HttpResponse:
        idle = self._idle
        while True:
            fresh = not idle
            if fresh:
                connection = await self._open(connect_timeout)
            else:
                connection = idle.pop()
                if connection.closed:  # the server closed it while idle
                    connection.close()
                    continue
            keep = False
            try:
                response = await connection.send(request, fresh=fresh)
                keep = connection.reusable
                return response
            except StaleConnection:
                continue  # closed by the server before it read the request; nothing was processed: another
            finally:
                if keep:
                    idle.append(connection)
                else:
                    connection.close()

    async def aclose(self) -> None:
        while self._idle:
            connection = self._idle.pop()
            with contextlib.suppress(OSError, ssl.SSLError):  # already gone; nothing to release
                await connection.wait_closed()


def keeps_alive(version: str, headers: dict[str, str]) -> bool:
    """Whether the connection stays open after this message (HTTP/1.1 unless ``close``; 1.0 only if asked)."""
    return persists(version, headers.get("connection", ""))


async def read_body(
    reader: asyncio.StreamReader, headers: dict[str, str], keep: bool, limit: int | None = None
) -> bytes:
    """The body after a head: ``chunked``, ``Content-Length``, or up to EOF when the connection closes.

    Raises:
        BodyTooLarge: The body is longer than ``limit`` bytes (a server's guard; clients pass None).
    """
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks: list[bytes] = []
        total = 0
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, if any
                    pass
                return b"".join(chunks)
            total += size
            if limit is not None and total > limit:
                raise BodyTooLarge(f"the body exceeds {limit} bytes")
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = headers.get("content-length")
    if length is not None:
        if limit is not None and int(length) > limit:
            raise BodyTooLarge(f"the body exceeds {limit} bytes")
        return await reader.readexactly(int(length))
    if keep:
        return b""  # a keep-alive message with neither length nor chunks has no body
    return await reader.read()
