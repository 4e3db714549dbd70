"""`osmosis serve` cannot be locked out by slow or unauthenticated clients (issue #32 item 1).

A real server process on 127.0.0.1 and raw sockets. Nothing here is timed: each test asserts what the server
did (answered, closed, refused to read) while the slow sockets were open, with generous hang guards.
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from osmosis_ai.rollout.server.connections import ConnectionGate, GateLimits
from tests.fixtures.rollout_harness import FakeTrainer, ServerProcess, rollout_body

SLOW_SOCKETS = 5000
# Long enough that /health is asked while the youngest slow sockets are certainly still open.
HEAD_TIMEOUT_S = 30
HANG_GUARD_S = HEAD_TIMEOUT_S + 120


@pytest.fixture
def files_for_sockets() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = SLOW_SOCKETS + 512
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"the hard limit of open files ({hard}) is below {wanted}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _slow_socket(port: int, source: str) -> socket.socket:
    """A connection that sends half a request head and then nothing."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(30)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    sock.setblocking(False)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """True once the server closed it (EOF, a reset, or its 408 followed by EOF)."""
    try:
        while chunk := sock.recv(65536):
            assert chunk.startswith(b"HTTP/1.1 408") or not chunk.startswith(b"HTTP/"), chunk
        return True
    except BlockingIOError:
        return False
    except ConnectionError:
        return True


def _open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_five_thousand_slow_sockets_do_not_lock_out_health_or_inits(
    trainer: FakeTrainer, files_for_sockets: None
) -> None:
    server = ServerProcess(env={"OSMOSIS_ROLLOUT_SERVER_HEAD_TIMEOUT_SECONDS": str(HEAD_TIMEOUT_S)}).start()
    assert server.proc is not None
    # Most from four other loopback addresses, some from the address the real clients use.
    sources = ["127.0.0.1"] + [f"127.0.0.{i}" for i in range(2, 6)]
    slow: list[socket.socket] = []
    try:
        for i in range(SLOW_SOCKETS):
            slow.append(_slow_socket(server.port, sources[i % len(sources)]))
        health = httpx.get(f"{server.url}/health", timeout=30)
        init = httpx.post(
            f"{server.url}/v1/rollout/init",
            json=rollout_body(trainer, "slow-clients-init"),
            headers=server.headers(),
            timeout=30,
        )
        still_open = [s for s in slow[-100:] if not _closed_by_server(s)]
        held = _open_files(server.proc.pid)
        assert health.status_code == 200, health.text
        assert init.status_code == 202, init.text
        assert still_open, "the youngest slow sockets should still be inside their head deadline"
        # Untrusted connections are bounded (1024 in all by default), whatever the number of sockets.
        assert held < 1024 + 200, f"the server holds {held} descriptors"
        assert trainer.wait_for_callback("slow-clients-init")["status"] == "COMPLETED"
        # Every slow socket is closed by the server: to make room, or at its head deadline.
        selector = selectors.DefaultSelector()
        open_ones = {s for s in slow if not _closed_by_server(s)}
        for sock in open_ones:
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + HANG_GUARD_S
        while open_ones and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=5):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if _closed_by_server(sock):
                    selector.unregister(sock)
                    open_ones.discard(sock)
        assert not open_ones, f"{len(open_ones)} slow sockets were never closed by the server"
    finally:
        for sock in slow:
            with contextlib.suppress(OSError):
                sock.close()
        server.close()


def test_a_refused_request_is_closed_without_reading_its_body() -> None:
    server = ServerProcess().start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            head = b"POST /v1/rollout/init HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n"
            sock.sendall(head + b"Content-Length: 10000000000\r\n\r\n")
            answer = sock.recv(65536)
            assert answer.startswith(b"HTTP/1.1 401"), answer
            # The server closes at once: sending the body fails long before 1 GiB has gone out
            # (a server that read and discarded it took every byte).
            sent = 0
            with pytest.raises(OSError):
                while sent < 1024**3:
                    sent += sock.send(b"x" * (1 << 20))
            assert sent < 1024**3
    finally:
        server.close()


def test_a_body_trickling_in_gets_408_at_its_deadline() -> None:
    server = ServerProcess(env={"OSMOSIS_ROLLOUT_SERVER_BODY_READ_TIMEOUT_SECONDS": "2"}).start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            head = (
                "POST /v1/rollout/init HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Authorization: Bearer {server.api_key}\r\nContent-Length: 100000\r\n\r\n"
            )
            sock.sendall(head.encode())
            sock.setblocking(False)
            answer = b""
            # One byte every 0.1 s keeps a per-chunk timeout of 2 s from ever firing; the whole-body
            # deadline answers while the body is still trickling (100,000 bytes would take hours).
            for _ in range(3000):
                with contextlib.suppress(BlockingIOError):
                    answer += sock.recv(65536)
                if answer:
                    break
                with contextlib.suppress(BlockingIOError):
                    sock.send(b" ")
                time.sleep(0.1)  # the client's pace, not a wait for the server
            assert answer.startswith(b"HTTP/1.1 408"), answer
    finally:
        server.close()


class _Conn:
    def __init__(self) -> None:
        self.closed = False

    def close_slow(self) -> None:
        self.closed = True


def test_the_gate_makes_room_from_the_oldest_untrusted_connection() -> None:
    limits = GateLimits(10.0, max_connections=6, max_untrusted=4, max_untrusted_per_address=2)
    gate = ConnectionGate(limits, lambda scope: "open")
    a1, a2, a3, b1, b2, c1 = (_Conn() for _ in range(6))
    for conn, address in ((a1, "a"), (a2, "a"), (a3, "a")):
        assert gate.admit(conn, address)
    assert (a1.closed, a2.closed, a3.closed) == (True, False, False)  # per address: its oldest goes
    for conn, address in ((b1, "b"), (b2, "b"), (c1, "c")):
        assert gate.admit(conn, address)
    assert a2.closed and not a3.closed  # four untrusted in all: the oldest of all goes
    trusted = [_Conn() for _ in range(6)]
    for conn in trusted:
        assert gate.admit(conn, "t")
        gate.trust(conn)
    # Every slot taken by trusted connections: a newcomer is refused, and no trusted one is closed.
    assert not gate.admit(_Conn(), "d")
    assert not any(conn.closed for conn in trusted)
    assert all(conn.closed for conn in (a3, b1, b2, c1))
