"""The direct transport's HTTP/1.1 client against a raw server process: bodies, keep-alive, stale connections,
answers split over many writes, the total timeout, the pool's connection limit."""

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


def exchange(base: str, paths: list[str], *, limit: int = 1, together: bool = False) -> list[dict]:
    """The answers (``{"n", "c"}``) to POSTs of ``paths`` through one pool, one after another or all at once."""

    async def post(pool: Http1Pool, path: str) -> dict:
        response = await pool.post(path, b"{}", timeout=10)
        assert response.status == 200, response
        return json.loads(response.body)

    async def main() -> list[dict]:
        pool = Http1Pool(base, limit=limit)
        try:
            if together:
                return list(await asyncio.gather(*(post(pool, path) for path in paths)))
            return [await post(pool, path) for path in paths]
        finally:
            await pool.aclose()

    return asyncio.run(main())


@pytest.mark.parametrize("mode", ["trickle", "trickle-chunked", "interim", "chunked"])
def test_answers_in_many_small_writes_are_read_whole_and_the_connection_goes_on(base: str, mode: str) -> None:
    # trickle-chunked: chunk extensions and trailers; interim: a 100 Continue before the answer.
    answers = exchange(base, [f"/{mode}/x"] * 3)
    assert [a["n"] for a in answers] == sorted({a["n"] for a in answers})
    assert len({a["c"] for a in answers}) == 1  # one kept-alive connection carried all three


def test_bytes_after_an_answer_retire_its_connection(base: str) -> None:
    answers = exchange(base, ["/extra/x"] * 2)
    assert answers[0]["c"] != answers[1]["c"]


def test_a_pooled_connection_dropped_before_answering_is_retried_once_on_a_new_one(base: str) -> None:
    # The server answers the first request of each connection and drops the connection on the second.
    answers = exchange(base, ["/drop-second/x"] * 3)
    assert len({a["c"] for a in answers}) == 3


def test_a_pooled_connection_the_server_closed_is_replaced(base: str) -> None:
    answers = exchange(base, ["/close-after/x", "/keep/x", "/keep/x"])
    assert answers[0]["c"] != answers[1]["c"] == answers[2]["c"]


def test_a_new_connection_closed_without_an_answer_is_an_error_not_a_retry(base: str) -> None:
    with pytest.raises(ConnectionError, match="without an answer"):
        exchange(base, ["/drop/x"])


def test_a_negative_chunk_size_is_a_broken_answer_not_a_parse_that_never_ends(base: str) -> None:
    with pytest.raises(ConnectionError, match="negative chunk size"):
        exchange(base, ["/negative-chunk/x"])


def test_the_total_timeout_ends_a_stalled_answer_and_its_connection(base: str) -> None:
    async def main() -> tuple[dict, dict]:
        pool = Http1Pool(base, limit=1)
        try:
            first = json.loads((await pool.post("/keep/x", b"{}", timeout=10)).body)
            with pytest.raises((TimeoutError, asyncio.TimeoutError)):  # distinct classes before 3.11
                await pool.post("/hold/x", b"{}", timeout=0.5)
            return first, json.loads((await pool.post("/keep/x", b"{}", timeout=10)).body)
        finally:
            await pool.aclose()

    first, after = asyncio.run(main())
    assert first["c"] != after["c"]  # the stalled connection was not given back to the pool


def test_the_pool_opens_at_most_limit_connections(base: str) -> None:
    answers = exchange(base, ["/keep/x"] * 12, limit=3, together=True)
    assert len(answers) == 12 and len({a["c"] for a in answers}) <= 3


def test_a_caller_cancelled_while_waiting_for_a_slot_leaves_no_slot_taken(base: str) -> None:
    # limit 1: the first request holds the slot until its timeout, two more wait; the first waiter is
    # cancelled. The slot goes to the second waiter, then to a request after them all.
    async def main() -> tuple[list[object], dict]:
        pool = Http1Pool(base, limit=1)
        try:
            held = asyncio.ensure_future(pool.post("/hold/x", b"{}", timeout=1))
            left = asyncio.ensure_future(pool.post("/keep/x", b"{}", timeout=10))
            served = asyncio.ensure_future(pool.post("/keep/x", b"{}", timeout=10))
            await asyncio.sleep(0)  # all three started: the first holds the slot, the others wait for it
            left.cancel()
            outcomes = await asyncio.gather(held, left, served, return_exceptions=True)
            after = await pool.post("/keep/x", b"{}", timeout=10)
            return [
                type(o) if isinstance(o, BaseException) else json.loads(o.body) for o in outcomes
            ], json.loads(after.body)
        finally:
            await pool.aclose()

    # A guard, not a timing assertion: a slot lost or never handed on would hang the test instead of failing.
    outcomes, after = asyncio.run(asyncio.wait_for(main(), 60))
    assert outcomes[0] in (TimeoutError, asyncio.TimeoutError)
    assert outcomes[1] is asyncio.CancelledError
    assert isinstance(outcomes[2], dict) and after["c"] == outcomes[2]["c"]  # one connection at a time


def test_a_caller_cancelled_just_after_it_was_handed_the_slot_hands_it_on(base: str) -> None:
    # limit 1: the first request holds the slot, two more wait. Stopping the first hands its slot to the
    # second in the first's next step; the second is cancelled right after that step, before it runs (a
    # callback queued behind the first's wake-up): the slot must go on to the third, not be lost.
    async def main() -> tuple[list[object], dict]:
        pool = Http1Pool(base, limit=1)
        try:
            await pool.post(
                "/keep/x", b"{}", timeout=10
            )  # an idle connection: the holder waits on its answer
            held = asyncio.ensure_future(pool.post("/hold/x", b"{}", timeout=600))
            handed = asyncio.ensure_future(pool.post("/keep/x", b"{}", timeout=10))
            served = asyncio.ensure_future(pool.post("/keep/x", b"{}", timeout=10))
            await asyncio.sleep(0)  # all three started: the first holds the slot, the others wait for it
            held.cancel()
            asyncio.get_running_loop().call_soon(handed.cancel)
            outcomes = await asyncio.gather(held, handed, served, return_exceptions=True)
            after = await pool.post("/keep/x", b"{}", timeout=10)
            return [type(o) if isinstance(o, BaseException) else json.loads(o.body) for o in outcomes], (
                json.loads(after.body)
            )
        finally:
            await pool.aclose()

    # A guard, not a timing assertion: a slot lost would hang the test instead of failing.
    outcomes, after = asyncio.run(asyncio.wait_for(main(), 60))
    assert outcomes[:2] == [asyncio.CancelledError, asyncio.CancelledError]
    assert isinstance(outcomes[2], dict) and "c" in after


def test_a_waiter_closed_without_a_cancellation_leaves_no_slot_taken(base: str) -> None:
    # A waiting coroutine closed outright (GeneratorExit: a task destroyed without being cancelled) must
    # give up its place in the queue, or the next freed slot goes to it and is lost.
    async def main() -> dict:
        pool = Http1Pool(base, limit=1)
        try:
            held = asyncio.ensure_future(pool.post("/keep/x", b"{}", timeout=10))
            await asyncio.sleep(0)  # it holds the slot
            waiter = pool.post("/keep/x", b"{}", timeout=10)
            waiter.send(None)  # driven by hand up to its wait for a slot
            waiter.close()
            await held
            return json.loads((await pool.post("/keep/x", b"{}", timeout=10)).body)
        finally:
            await pool.aclose()

    assert "c" in asyncio.run(asyncio.wait_for(main(), 60))


def test_nothing_listening_is_a_connect_failure() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    async def main() -> None:
        await Http1Pool(f"http://127.0.0.1:{port}").post("/", b"{}", timeout=5)

    with pytest.raises(ConnectFailed, match="cannot connect"):
        asyncio.run(main())
