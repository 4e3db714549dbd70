"""Connections of the direct transport (:mod:`.http1`) through a forward proxy.

Plain http: one connection to the proxy, which receives absolute-form requests (the pool writes them).
https: a ``CONNECT host:port`` tunnel, then TLS with the target inside it, its certificate checked
against the target's name. An ``https://`` proxy is itself reached over TLS; tunnelling TLS inside that
needs ``StreamWriter.start_tls`` (Python 3.11+).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl

from osmosis_ai.llm.network import ProxyURL

__all__ = ["ProxyRefused", "connect_request", "open_via_proxy"]

_MAX_HEAD = 64 * 1024


class ProxyRefused(ConnectionError):
    """The proxy answered the ``CONNECT`` with something other than 2xx (407: credentials wanted)."""


def connect_request(proxy: ProxyURL, host: str, port: int) -> bytes:
    """The ``CONNECT`` request for ``host:port`` (IPv6 literals bracketed), with the proxy's credentials."""
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
    if proxy.authorization:
        lines.append(f"Proxy-Authorization: {proxy.authorization}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _check_answer(head: bytes, proxy: ProxyURL, host: str, port: int) -> None:
    status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = status_line.split(" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    if 200 <= status < 300:
        return
    hint = ""
    if status == 407:
        hint = "; the proxy wants credentials: put them in the proxy URL (http://user:password@host:port)"
    raise ProxyRefused(
        f"the proxy {proxy.shown} ({proxy.variable}) refused CONNECT {host}:{port}: "
        f"{status_line.strip()[:120] or 'no answer'}{hint}"
    )


async def _tunnel_socket(proxy: ProxyURL, host: str, port: int) -> socket.socket:
    """A socket connected to the proxy and tunnelled to ``host:port`` (no TLS yet)."""
    loop = asyncio.get_running_loop()
    last: OSError | None = None
    for family, kind, proto, _, address in await loop.getaddrinfo(
        proxy.host, proxy.port, type=socket.SOCK_STREAM
    ):
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, address)
            break
        except OSError as exc:
            sock.close()
            last = exc
    else:
        raise last or OSError(f"cannot resolve {proxy.host}")
    try:
        await loop.sock_sendall(sock, connect_request(proxy, host, port))
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = await loop.sock_recv(sock, 4096)
            if not chunk or len(head) > _MAX_HEAD:
                raise ProxyRefused(f"the proxy {proxy.shown} closed the connection during CONNECT")
            head += chunk
        head, _, early = head.partition(b"\r\n\r\n")
        _check_answer(head, proxy, host, port)
        if early:  # the target speaks only after our TLS hello; bytes here mean a confused proxy
            raise ProxyRefused(f"the proxy {proxy.shown} sent data before the tunnel was used")
    except BaseException:
        sock.close()
        raise
    return sock


async def _tunnel_over_tls(
    proxy: ProxyURL, host: str, port: int, target_ssl: ssl.SSLContext, proxy_ssl: ssl.SSLContext, limit: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port, ssl=proxy_ssl, limit=limit)
    try:
        if not hasattr(writer, "start_tls"):
            raise ProxyRefused(
                f"an https:// proxy ({proxy.variable}) for https targets needs Python 3.11 or newer; "
                "use an http:// proxy URL"
            )
        writer.write(connect_request(proxy, host, port))
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        _check_answer(head, proxy, host, port)
        await writer.start_tls(target_ssl, server_hostname=host)
    except BaseException:
        with contextlib.suppress(RuntimeError):
            writer.close()
        raise
    return reader, writer


async def open_via_proxy(
    proxy: ProxyURL,
    host: str,
    port: int,
    target_ssl: ssl.SSLContext | None,
    proxy_ssl: ssl.SSLContext | None,
    *,
    limit: int,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams to ``host:port`` through ``proxy`` (``target_ssl`` set: an https target, so a tunnel).

    Raises:
        ProxyRefused: The proxy refused the tunnel, or is of a kind this transport cannot use.
        OSError: The proxy could not be reached, or TLS with it or the target failed.
    """
    if proxy.scheme not in ("http", "https"):
        raise ProxyRefused(
            f"{proxy.variable}={proxy.shown}: the direct transport goes through http:// and https:// proxies "
            f"only; set HTTPS_PROXY/HTTP_PROXY to one, or add {host} to NO_PROXY"
        )
    if target_ssl is None:
        return await asyncio.open_connection(proxy.host, proxy.port, ssl=proxy_ssl, limit=limit)
    if proxy_ssl is not None:
        return await _tunnel_over_tls(proxy, host, port, target_ssl, proxy_ssl, limit)
    sock = await _tunnel_socket(proxy, host, port)
    try:
        return await asyncio.open_connection(sock=sock, ssl=target_ssl, server_hostname=host, limit=limit)
    except BaseException:
        sock.close()
        raise
