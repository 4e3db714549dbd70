"""Load: rounds of rollouts through `osmosis serve` with 64 in flight, loopback only, bounded in time.

A scaled-down run of tests/fixtures/rollout_load.py (the full figures: ``python -m
tests.fixtures.rollout_load --rollouts 1000 --in-flight 64 --rounds 5``). Asserts that nothing is lost or
duplicated and prints the server's overhead per rollout (end-to-end time from init sent to callback
received, minus the agent's own run time the server reports), its CPU time per rollout and peak memory.
"""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from tests.fixtures.rollout_harness import ServerProcess
from tests.fixtures.rollout_load import run_load

ROLLOUTS = 250
IN_FLIGHT = 64
ROUNDS = 2
# Longer than httpx keeps an idle connection by default (5 s), the client the lost rollouts used.
CLIENT_IDLE_SECONDS = 6.0


def test_rollouts_under_load_none_lost_none_duplicated(capsys: pytest.CaptureFixture[str]) -> None:
    report = asyncio.run(asyncio.wait_for(run_load(ROLLOUTS, IN_FLIGHT, ROUNDS), 600))

    assert not report.init_errors, report.summary()
    assert not report.lost and not report.duplicated, report.summary()
    assert not report.agent_reruns, "an agent ran twice or not at all"
    assert not report.not_completed, report.summary()
    assert report.health["active_rollouts"] == 0
    assert report.health["completed_rollouts"] == ROLLOUTS * ROUNDS
    assert report.server_exit == 143  # stopped by SIGTERM after draining, as every command (128 + 15)
    with capsys.disabled():
        print(f"\n{report.summary()}")


def _request(sock: socket.socket, api_key: str | None) -> bytes:
    """One GET on an open connection; returns the whole response (head and body)."""
    sock.sendall(
        f"GET /platform/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {api_key}\r\n\r\n".encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(65536)
        if not chunk:
            return answer
        answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def test_an_idle_connection_outlives_the_clients_keep_alive() -> None:
    # The lost rollouts: the server closed a connection idle for 5 s while the client, which keeps idle
    # connections as long, sent its next init on it (a read error on the client's side).
    server = ServerProcess().start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            assert _request(sock, server.api_key).startswith(b"HTTP/1.1 200")
            time.sleep(CLIENT_IDLE_SECONDS)
            assert _request(sock, server.api_key).startswith(b"HTTP/1.1 200")
    finally:
        server.close()
