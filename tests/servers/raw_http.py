"""A raw HTTP/1.x server for transport tests (stdlib sockets, run as a subprocess).

Answers every request by the first path segment: ``/chunked/...`` sends the JSON body in chunks,
``/close/...`` answers with ``Connection: close``, ``/http10/...`` answers as HTTP/1.0 without a length,
``/idle-close/...`` answers keep-alive and then closes the connection 0.2 s later (as servers with short
idle timeouts do). Every answer's body is ``{"n": <request count>}``. Prints ``READY <port>``.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time

COUNT = 0
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


def _serve(conn: socket.socket) -> None:
    global COUNT
    buffer = b""
    with conn:
        while True:
            request = _read_request(conn, buffer)
            if request is None:
                return
            path, buffer = request
            with LOCK:
                COUNT += 1
                body = json.dumps({"n": COUNT}).encode()
            mode = path.strip("/").split("/")[0]
            if mode == "chunked":
                half = len(body) // 2
                chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:]))
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
            elif mode == "close":
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
                    % (len(body), body)
                )
                return
            elif mode == "http10":
                conn.sendall(b"HTTP/1.0 200 OK\r\n\r\n" + body)
                return
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                if mode == "idle-close":
                    time.sleep(0.2)
                    return


def main() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    print(f"READY {server.getsockname()[1]}", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
