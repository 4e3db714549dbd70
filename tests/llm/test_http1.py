"""The direct transport's HTTP/1.1 client against a raw server process: bodies, keep-alive, stale connections."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from osmosis_ai.llm.http1 import ConnectFailed, Http1Pool

SERVER = Path(__file__).parent.parent / "servers" / "raw_http.py"


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


def posts(base: str, path: str, count: int) -> list[int]:
    async def main() -> list[int]:
        pool = Http1Pool(base, limit=1)
        try:
            answers = []
            for _ in range(count):
                response = await pool.post(path, b"{}", timeout=5)
                assert response.status == 200
                answers.append(json.loads(response.body)["n"])
                await asyncio.sleep(0.3 if "idle" in path else 0)
            return answers
        finally:
            await pool.aclose()

    return asyncio.run(main())


@pytest.mark.parametrize("mode", ["keep", "chunked", "close", "http10"])
def test_every_body_framing_reads_whole_answers(base: str, mode: str) -> None:
    answers = posts(base, f"/{mode}/x", 3)
    assert len(answers) == 3 and answers == sorted(set(answers))


def test_a_connection_the_server_closed_while_idle_is_replaced(base: str) -> None:
    # The server closes each kept-alive connection 0.2 s after answering; we wait 0.3 s between posts.
    assert len(posts(base, "/idle-close/x", 3)) == 3


def test_nothing_listening_is_a_connect_failure() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    async def main() -> None:
        await Http1Pool(f"http://127.0.0.1:{port}").post("/", b"{}", timeout=5)

    with pytest.raises(ConnectFailed, match="cannot connect"):
        asyncio.run(main())
