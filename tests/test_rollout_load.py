"""Load: 1,000 rollouts through `osmosis serve` with 64 in flight, loopback only, bounded in time.

Three processes, as in training: this test drives TrainGate's side (inits), a fake TrainGate answers
completions and receives callbacks in its own process, and `osmosis serve` runs the agent. Asserts that
nothing is lost or duplicated; prints the server's overhead per rollout (end-to-end time from init sent
to callback received, minus the agent's own run time the server reports) and its CPU time per rollout.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections import Counter
from typing import Any

import httpx
import pytest

from tests.fixtures.rollout_harness import FIXTURES, ServerProcess, cpu_seconds

ROLLOUTS = 1000
IN_FLIGHT = 64
TIME_LIMIT_SECONDS = 600


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def p50_p99(values: list[float]) -> str:
    return f"p50 {statistics.median(values):.1f} ms, p99 {percentile(values, 0.99):.1f} ms"


class Trainer:
    """The fake TrainGate subprocess and what it reported."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.callbacks: dict[str, list[dict[str, Any]]] = {}
        self.completions: Counter[str] = Counter()
        self.events: dict[str, asyncio.Event] = {}
        self.reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.fixtures.rollout_harness",
            cwd=FIXTURES.parent.parent,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        ready = json.loads(await asyncio.wait_for(self.proc.stdout.readline(), 60))
        self.url = ready["url"]
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        async for line in self.proc.stdout:
            record = json.loads(line)
            rollout_id = record["rollout_id"]
            if record["kind"] == "completion":
                self.completions[rollout_id] += 1
            else:
                self.callbacks.setdefault(rollout_id, []).append(record)
                self.events[rollout_id].set()

    async def stop(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            await asyncio.wait_for(self.proc.wait(), 30)
        if self.reader is not None:
            await asyncio.wait_for(self.reader, 30)


async def drive(server: ServerProcess, trainer: Trainer) -> dict[str, float]:
    slots = asyncio.Semaphore(IN_FLIGHT)
    sent: dict[str, float] = {}
    limits = httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT)
    async with httpx.AsyncClient(headers=server.headers(), limits=limits, timeout=60) as client:

        async def one(index: int) -> None:
            rollout_id = f"load-{index}"
            body = {
                "rollout_id": rollout_id,
                "server_url": trainer.url,
                "messages": [{"role": "user", "content": "hello"}],
                "completion_params": {"max_tokens": 16},
                "api_key": "trainer-secret",
            }
            async with slots:
                trainer.events[rollout_id] = asyncio.Event()
                sent[rollout_id] = time.monotonic()
                response = await client.post(f"{server.url}/v1/rollout/init", json=body)
                assert response.status_code == 202, response.text
                await asyncio.wait_for(trainer.events[rollout_id].wait(), 120)

        await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(ROLLOUTS))), TIME_LIMIT_SECONDS)
    return sent


async def run_load() -> tuple[Trainer, dict[str, float], float, float | None, dict[str, Any]]:
    trainer = Trainer()
    await trainer.start()
    server = ServerProcess(env={"OSMOSIS_ROLLOUT_SERVER_MAX_CONCURRENT_ROLLOUTS": str(IN_FLIGHT)})
    try:
        await asyncio.to_thread(server.start)
        assert server.proc is not None
        cpu_before = cpu_seconds(server.proc.pid)
        started = time.monotonic()
        sent = await drive(server, trainer)
        wall = time.monotonic() - started
        cpu_after = cpu_seconds(server.proc.pid)
        cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
        # The trainer logs a callback before its 200 reaches the server, so the last few records may
        # still be "reporting" for a moment: wait (bounded) for the server to settle.
        async with httpx.AsyncClient() as client:
            for _ in range(300):
                health = (await client.get(f"{server.url}/health")).json()
                if health["active_rollouts"] == 0:
                    break
                await asyncio.sleep(0.1)
    finally:
        code = await asyncio.to_thread(server.stop)
        server.close()
        await trainer.stop()
    assert code == 0
    return trainer, sent, wall, cpu, health


def test_thousand_rollouts_none_lost_none_duplicated(capsys: pytest.CaptureFixture[str]) -> None:
    trainer, sent, wall, cpu, health = asyncio.run(run_load())

    ids = {f"load-{i}" for i in range(ROLLOUTS)}
    assert set(trainer.callbacks) == ids
    assert all(len(trainer.callbacks[i]) == 1 for i in ids), "a rollout was reported twice"
    assert all(trainer.callbacks[i][0]["status"] == "COMPLETED" for i in ids)
    assert trainer.completions == dict.fromkeys(ids, 1), "an agent ran twice or not at all"
    assert health["active_rollouts"] == 0 and health["completed_rollouts"] == ROLLOUTS

    end_to_end = [(trainer.callbacks[i][0]["t"] - sent[i]) * 1000 for i in ids]
    overhead = [e - trainer.callbacks[i][0]["agent_ms"] for e, i in zip(end_to_end, ids, strict=True)]
    cpu_note = "n/a" if cpu is None else f"{cpu * 1000 / ROLLOUTS:.2f} ms"
    with capsys.disabled():
        print(
            f"\nrollout load: {ROLLOUTS} rollouts, {IN_FLIGHT} in flight, {wall:.1f} s "
            f"({ROLLOUTS / wall:.0f}/s); "
            f"server overhead {p50_p99(overhead)}; end-to-end {p50_p99(end_to_end)}; "
            f"server CPU per rollout {cpu_note}"
        )
