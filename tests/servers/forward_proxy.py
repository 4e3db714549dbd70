"""A forward HTTP proxy for tests (stdlib asyncio, run as a subprocess on 127.0.0.1).

Plain http requests in absolute form (``POST http://host:port/path``) are forwarded; ``CONNECT host:port``
opens a tunnel for https. Every host name resolves to 127.0.0.1: tests name their servers
``model.proxytest`` and so on, names that only this proxy can reach, so a request that arrives went
through it. With ``--auth user:password`` a request without those credentials gets 407.

Every request the proxy received is listed by ``GET /_log`` sent to the proxy itself (origin form), as
``{"method", "host", "port", "path", "authorized"}``; the entry is written before the request is passed on.

Usage: ``python forward_proxy.py [--port 0] [--auth user:password] [--tls-cert F --tls-key F]``; prints
``READY <port>`` when listening.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import ssl
from typing import Any
from urllib.parse import urlsplit

LOG: list[dict[str, Any]] = []
_HOP_BY_HOP = {"proxy-authorization", "proxy-connection", "connection", "keep-alive", "transfer-encoding",
               "content-length", "te", "upgrade"}  # fmt: skip


def _parse_head(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
    return method, target, headers


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


async def _read_body(reader: asyncio.StreamReader, headers: list[tuple[str, str]], until_eof: bool) -> bytes:
    if (_header(headers, "transfer-encoding") or "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return body
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    length = _header(headers, "content-length")
    if length is not None:
        return await reader.readexactly(int(length))
    return await reader.read() if until_eof else b""


class Proxy:
    def __init__(self, auth: str | None) -> None:
        self.expected = None if auth is None else "Basic " + base64.b64encode(auth.encode()).decode()

    def authorized(self, headers: list[tuple[str, str]]) -> bool:
        return self.expected is None or _header(headers, "proxy-authorization") == self.expected

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                method, target, headers = _parse_head(head)
                if method == "CONNECT":
                    await self.tunnel(target, headers, reader, writer)
                    return
                if target.startswith("/"):
                    await self.control(target, writer)
                    continue
                await self.forward(method, target, headers, reader, writer)
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def control(self, target: str, writer: asyncio.StreamWriter) -> None:
        if target == "/_reset":
            LOG.clear()
        body = json.dumps(LOG).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(body), body))  # fmt: skip
        await writer.drain()

    def record(self, method: str, host: str, port: int, path: str, authorized: bool) -> None:
        LOG.append({"method": method, "host": host, "port": port, "path": path, "authorized": authorized})

    async def refuse(self, writer: asyncio.StreamWriter) -> None:
        body = b"proxy credentials required"
        writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip
        await writer.drain()

    async def tunnel(self, target: str, headers: list[tuple[str, str]], reader: Any, writer: Any) -> None:
        host, _, port = target.rpartition(":")
        ok = self.authorized(headers)
        self.record("CONNECT", host.strip("[]"), int(port), "", ok)
        if not ok:
            await self.refuse(writer)
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(Exception):
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def forward(self, method: str, target: str, headers: Any, reader: Any, writer: Any) -> None:
        parts = urlsplit(target)
        port = parts.port or 80
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        body = await _read_body(reader, headers, until_eof=False)
        ok = self.authorized(headers)
        self.record(method, parts.hostname or "", port, path, ok)
        if not ok:
            await self.refuse(writer)
            return
        kept = "".join(f"{k}: {v}\r\n" for k, v in headers if k.lower() not in _HOP_BY_HOP)
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        up_writer.write(f"{method} {path} HTTP/1.1\r\n{kept}Connection: close\r\nContent-Length: {len(body)}\r\n\r\n"
                        .encode("latin-1") + body)  # fmt: skip
        await up_writer.drain()
        status_line, _, rest = (await up_reader.readuntil(b"\r\n\r\n")).partition(b"\r\n")
        _, _, answer_headers = _parse_head(b"X / HTTP/1.1\r\n" + rest)
        answer = await _read_body(up_reader, answer_headers, until_eof=True)
        up_writer.close()
        kept = "".join(f"{k}: {v}\r\n" for k, v in answer_headers if k.lower() not in _HOP_BY_HOP)
        writer.write(status_line.replace(b"HTTP/1.0", b"HTTP/1.1") + b"\r\n" + kept.encode("latin-1")
                     + b"Content-Length: %d\r\n\r\n" % len(answer) + answer)  # fmt: skip
        await writer.drain()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--auth", help="user:password the proxy requires")
    parser.add_argument("--tls-cert", help="serve the proxy itself over TLS (an https:// proxy)")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    context = None
    if args.tls_cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.tls_cert, args.tls_key)
    server = await asyncio.start_server(Proxy(args.auth).handle, "127.0.0.1", args.port, ssl=context)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
