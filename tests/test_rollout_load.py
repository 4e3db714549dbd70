"""Load: 1,000 rollouts through `osmosis serve` with 64 in flight, loopback only, bounded in time.

Asserts that nothing is lost or duplicated; prints the server's overhead per rollout (end-to-end time
from init sent to callback received, minus the agent's own run time the server reports).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

import httpx
import pytest

from tests.fixtures.rollout_harness import FakeTrainer, ServerProcess, rollout_body

ROLLOUTS = 1000
IN_FLIGHT = 64
TIME_LIMIT_SECONDS = 600


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def drive(server: ServerProcess, trainer: FakeTrainer) -> tuple[dict[str, float], dict[str, float]]:
    loop = asyncio.get_running_loop()
    events: dict[str, asyncio.Event] = {}
    sent: dict[str, float] = {}
    received: dict[str, float] = {}

    def arrived(rollout_id: str, at: float) -> None:
        received.setdefault(rollout_id, at)
        events[rollout_id].set()

    trainer.on_callback = lambda body: loop.call_soon_threadsafe(
        arrived, body["rollout_id"], time.perf_counter()
    )
    slots = asyncio.Semaphore(IN_FLIGHT)
    limits = httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT)
    async with httpx.AsyncClient(headers=server.headers(), limits=limits, timeout=60) as client:

        async def one(index: int) -> None:
            rollout_id = f"load-{index}"
            body = rollout_body(trainer, rollout_id, content="hello")
            async with slots:
                events[rollout_id] = asyncio.Event()
                sent[rollout_id] = time.perf_counter()
                response = await client.post(f"{server.url}/v1/rollout/init", json=body)
                assert response.status_code == 202, response.text
                await asyncio.wait_for(events[rollout_id].wait(), 120)

        await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(ROLLOUTS))), TIME_LIMIT_SECONDS)
    return sent, received


def test_thousand_rollouts_none_lost_none_duplicated(capsys: pytest.CaptureFixture[str]) -> None:
    trainer = FakeTrainer().start()
    server = ServerProcess(env={"OSMOSIS_ROLLOUT_SERVER_MAX_CONCURRENT_ROLLOUTS": str(IN_FLIGHT)}).start()
    try:
        started = time.perf_counter()
        sent, received = asyncio.run(drive(server, trainer))
        wall = time.perf_counter() - started
        health = httpx.get(f"{server.url}/health").json()
    finally:
        trainer.on_callback = None
        assert server.stop() == 0
        server.close()
        trainer.stop()

    ids = {f"load-{i}" for i in range(ROLLOUTS)}
    assert set(trainer.callbacks) == ids
    assert all(len(trainer.callbacks[i]) == 1 for i in ids), "a rollout was reported twice"
    assert all(trainer.callback_attempts[i] == 1 for i in ids)
    assert all(trainer.callbacks[i][0]["status"] == "COMPLETED" for i in ids)
    per_rollout: dict[str, int] = {}
    for completion in trainer.completions:
        per_rollout[completion["rollout_id"]] = per_rollout.get(completion["rollout_id"], 0) + 1
    assert per_rollout == dict.fromkeys(ids, 1), "an agent ran twice or not at all"
    assert health["active_rollouts"] == 0 and health["completed_rollouts"] == ROLLOUTS

    end_to_end = [(received[i] - sent[i]) * 1000 for i in ids]
    agent: list[Any] = [trainer.callbacks[i][0]["metrics"]["total_latency_ms"] for i in ids]
    overhead = [e - a for e, a in zip(end_to_end, agent, strict=True)]

    def p50_p99(values: list[float]) -> str:
        return f"p50 {statistics.median(values):.1f} ms, p99 {percentile(values, 0.99):.1f} ms"

    with capsys.disabled():
        print(
            f"\nrollout load: {ROLLOUTS} rollouts, {IN_FLIGHT} in flight, {wall:.1f} s "
            f"({ROLLOUTS / wall:.0f}/s); server overhead {p50_p99(overhead)}; "
            f"end-to-end {p50_p99(end_to_end)}"
        )
