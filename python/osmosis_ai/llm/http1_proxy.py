"""Connections of the direct transport (:mod:`.http1`) through a forward proxy.

Plain http: one connection to the proxy, which receives absolute-form requests (the pool writes them).
https: a ``CONNECT host:port`` tunnel, then TLS with the target inside it (``loop.start_tls`` on the same
connection), its certificate checked against the target's name. An ``https://`` proxy is itself reached
over TLS; tunnelling TLS inside that needs Python 3.11+.
"""

from __future__ import annotations

import asyncio
import ssl
import sys

from osmosis_ai.llm.http1_connection import Connection
from osmosis_ai.llm.network import ProxyURL

__all__ = ["ProxyRefused", "connect_request", "open_via_proxy"]


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


async def _tunnel(proxy: ProxyURL, host: str, port: int, connection: Connection) -> None:
    """``CONNECT host:port`` on ``connection`` (open to the proxy), checked: the tunnel is then open."""
    try:
        await connection.send(connect_request(proxy, host, port), fresh=True, head_only=True)
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        raise ProxyRefused(f"the proxy {proxy.shown} gave no answer to CONNECT ({exc})") from exc
    _check_answer(connection.head, proxy, host, port)
    if connection.unread:  # the target speaks only after our TLS hello; bytes here mean a confused proxy
        raise ProxyRefused(f"the proxy {proxy.shown} sent data before the tunnel was used")


async def open_via_proxy(
    proxy: ProxyURL,
    host: str,
    port: int,
    target_ssl: ssl.SSLContext | None,
    proxy_ssl: ssl.SSLContext | None,
    connection: Connection,
) -> None:
    """Connects ``connection`` to ``host:port`` through ``proxy`` (``target_ssl`` set: an https target, so a
    tunnel); on failure the caller closes ``connection``.

    Raises:
        ProxyRefused: The proxy refused the tunnel, or is of a kind this transport cannot use.
        OSError: The proxy could not be reached, or TLS with it or the target failed.
    """
    if proxy.scheme not in ("http", "https"):
        raise ProxyRefused(
            f"{proxy.variable}={proxy.shown}: the direct transport goes through http:// and https:// proxies "
            f"only; set HTTPS_PROXY/HTTP_PROXY to one, or add {host} to NO_PROXY"
        )
    if target_ssl is not None and proxy_ssl is not None and sys.version_info < (3, 11):
        raise ProxyRefused(
            f"an https:// proxy ({proxy.variable}) for https targets needs Python 3.11 or newer; "
            "use an http:// proxy URL"
        )
    loop = asyncio.get_running_loop()
    await loop.create_connection(lambda: connection, proxy.host, proxy.port, ssl=proxy_ssl)
    if target_ssl is None:
        return
    await _tunnel(proxy, host, port, connection)
    assert connection.transport is not None  # made by create_connection above
    tls = await loop.start_tls(connection.transport, connection, target_ssl, server_hostname=host)
    if tls is None:  # only when the loop closes meanwhile
        raise ConnectionResetError("the event loop closed during the TLS handshake")
    connection.connection_made(tls)
