"""A raw HTTP/1.x server for transport tests (stdlib sockets, run as a subprocess).

Answers every request by the first path segment: ``/chunked/...`` sends the JSON body in chunks,
``/close/...`` answers with ``Connection: close``, ``/http10/...`` answers as HTTP/1.0 without a length,
``/idle-close/...`` answers keep-alive and then closes the connection 0.2 s later (as servers with short
idle timeouts do), ``/close-after/...`` answers keep-alive and closes at once. For the client's parser:
``/trickle/...`` sends the answer a few bytes per write, ``/trickle-chunked/...`` a chunked answer with
chunk extensions and trailers the same way, ``/interim/...`` a ``100 Continue`` before the answer,
``/extra/...`` the answer followed by bytes nobody asked for. For pooled connections: ``/drop-second/...``
answers the first request of a connection and closes the connection on the second without answering,
``/drop/...`` closes without answering at all, ``/hold/...`` sends the head and half the body, then nothing.
Every answer's body is ``{"n": <request count>, "c": <the connection's number>}``. Prints ``READY <port>``.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time

COUNT = 0
CONNECTIONS = 0
LOCK = threading.Lock()


def _read_request(conn: socket.socket, buffer: bytes) -> tuple[str, bytes] | None:
    while b"\r\n\r\n" not in buffer:
        data = conn.recv(65536)
        if not data:
            return None
        buffer += data
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    while len(rest) < length:
        rest += conn.recv(65536)
    return lines[0].split(" ")[1], rest[length:]


def _trickle(conn: socket.socket, data: bytes, size: int) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for start in range(0, len(data), size):
        conn.sendall(data[start : start + size])
        time.sleep(
            0.001
        )  # pacing, so the client's reads see the pieces apart (its result never depends on it)


def _chunked(body: bytes) -> bytes:
    half = len(body) // 2
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:]))
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"


def _answer(conn: socket.socket, mode: str, body: bytes, served: int) -> bool:
    """Sends the answer ``mode`` asks for; False when the connection is to be closed after it."""
    plain = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    if mode == "chunked":
        conn.sendall(_chunked(body))
    elif mode == "close":
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        return False
    elif mode == "http10":
        conn.sendall(b"HTTP/1.0 200 OK\r\n\r\n" + body)
        return False
    elif mode == "trickle":
        _trickle(
            conn, b"HTTP/1.1 200 OK\r\nServer: raw\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body), 7
        )
    elif mode == "trickle-chunked":
        pieces = b"".join(
            b"%x;ext=1\r\n%s\r\n" % (len(body[i : i + 5]), body[i : i + 5]) for i in range(0, len(body), 5)
        )
        head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n"
        _trickle(conn, head + pieces + b"0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n", 3)
    elif mode == "negative-chunk":
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n")
        return False
    elif mode == "interim":
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" + plain)
    elif mode == "extra":
        conn.sendall(plain + b"HTTP/1.1 408 Request Timeout\r\n\r\n")
    elif mode in ("drop", "drop-second") and (mode == "drop" or served > 1):
        return False
    elif mode == "hold":
        conn.sendall(plain[: len(plain) - len(body) // 2])
        conn.recv(1)  # until the client leaves
        return False
    else:
        conn.sendall(plain)
        if mode == "idle-close":
            time.sleep(0.2)
            return False
        return mode != "close-after"
    return True


def _serve(conn: socket.socket) -> None:
    global COUNT, CONNECTIONS
    buffer = b""
    served = 0
    with LOCK:
        CONNECTIONS += 1
        number = CONNECTIONS
    with conn:
        while True:
            request = _read_request(conn, buffer)
            if request is None:
                return
            path, buffer = request
            served += 1
            with LOCK:
                COUNT += 1
                body = json.dumps({"n": COUNT, "c": number}).encode()
            if not _answer(conn, path.strip("/").split("/")[0], body, served):
                return


def main() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    print(f"READY {server.getsockname()[1]}", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
