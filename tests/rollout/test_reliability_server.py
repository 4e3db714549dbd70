"""`osmosis serve` refuses what it should (issue #22 item 5): a real server process, raw sockets."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

from tests.fixtures.rollout_harness import ServerProcess, rollout_body

LIMITS = {
    "OSMOSIS_ROLLOUT_SERVER_MAX_REQUEST_BODY_BYTES": "4096",
    "OSMOSIS_ROLLOUT_SERVER_BODY_READ_TIMEOUT_SECONDS": "1",
    "OSMOSIS_ROLLOUT_SERVER_MAX_CONCURRENT_ROLLOUTS": "1",
    "OSMOSIS_ROLLOUT_SERVER_MAX_QUEUED_ROLLOUTS": "1",
    "OSMOSIS_ROLLOUT_SERVER_SHUTDOWN_GRACE_SECONDS": "0",
}


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(env=LIMITS).start()
    yield proc
    proc.close()


def _raw(server: ServerProcess, head: str, body: bytes = b"") -> bytes:
    """Sends a request by hand and reads the answer (the socket timeout is a hang guard)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


def _head(server: ServerProcess, extra: str) -> str:
    return (
        f"POST /v1/rollout/init HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server.api_key}\r\n"
        f"Content-Type: application/json\r\n{extra}"
    )


def test_a_declared_huge_body_is_refused_before_it_is_read(server) -> None:
    answer = _raw(server, _head(server, "Content-Length: 10000000000\r\n"), b"{")
    assert answer.startswith(b"HTTP/1.1 413"), answer


def test_a_chunked_body_over_the_limit_is_refused(server) -> None:
    chunk = b"x" * 5000
    body = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n0\r\n\r\n"
    answer = _raw(server, _head(server, "Transfer-Encoding: chunked\r\n"), body)
    assert answer.startswith(b"HTTP/1.1 413"), answer


def test_a_body_that_stops_arriving_gets_408(server) -> None:
    answer = _raw(server, _head(server, "Content-Length: 100\r\n"), b'{"rollout_id": ')
    assert answer.startswith(b"HTTP/1.1 408"), answer


def test_an_unauthenticated_huge_body_is_refused_without_reading_it(server) -> None:
    head = "POST /v1/rollout/init HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000000\r\n"
    assert _raw(server, head, b"{").startswith(b"HTTP/1.1 401")


def test_queued_rollouts_are_capped_with_429_and_retry_after(server, trainer) -> None:
    headers = server.headers()
    slow = {"sleep": 30}
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
        running = client.post("/v1/rollout/init", json=rollout_body(trainer, "r-running", metadata=slow))
        queued = client.post("/v1/rollout/init", json=rollout_body(trainer, "r-queued", metadata=slow))
        refused = client.post("/v1/rollout/init", json=rollout_body(trainer, "r-refused", metadata=slow))
        again = client.post("/v1/rollout/init", json=rollout_body(trainer, "r-queued", metadata=slow))
    assert (running.status_code, queued.status_code) == (202, 202)
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
    assert "retry later" in json.loads(refused.content)["detail"]
    assert again.status_code == 202  # a repeat of an accepted rollout is answered, not refused
