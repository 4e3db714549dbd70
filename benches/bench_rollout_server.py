"""The rollout client's traffic to TrainGate: one pooled HTTP client shared by all rollouts (what the server
does) against a fresh client per rollout (the established server's way), same run, same loopback trainer.

Each round runs 64 rollouts, 16 at a time; a rollout is one completion call plus the completion callback.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from benchutil import compare, scaled
from osmosis_ai.rollout import OsmosisLLMClient
from osmosis_ai.rollout.client import create_http_client
from osmosis_ai.rollout.config import RolloutSettings

ROOT = pathlib.Path(__file__).resolve().parent.parent
ROLLOUTS = 64
CONCURRENT = 16
SETTINGS = RolloutSettings()


@pytest.fixture(scope="module")
def trainer_url() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fixtures.rollout_harness"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    url = json.loads(proc.stdout.readline())["url"]
    # Drain the trainer's event lines so its pipe never fills.
    drain = subprocess.Popen(["cat"], stdin=proc.stdout, stdout=subprocess.DEVNULL)
    yield url
    proc.stdin.close()
    proc.wait(timeout=30)
    drain.wait(timeout=30)


async def one_rollout(url: str, index: int, http: httpx.AsyncClient | None) -> None:
    llm = OsmosisLLMClient(url, f"bench-{index}", settings=SETTINGS, http_client=http)
    try:
        reply = await llm.chat_completions([{"role": "user", "content": "hello"}])
        await llm.complete_rollout("COMPLETED", [reply.message])
    finally:
        await llm.close()


async def rounds(url: str, shared: bool) -> None:
    slots = asyncio.Semaphore(CONCURRENT)
    http = create_http_client(SETTINGS) if shared else None

    async def limited(index: int) -> None:
        async with slots:
            await one_rollout(url, index, http)

    try:
        await asyncio.gather(*(limited(i) for i in range(ROLLOUTS)))
    finally:
        if http is not None:
            await http.aclose()


def test_rollout_client_baseline_client_per_rollout(benchmark, trainer_url: str) -> None:
    compare(
        benchmark,
        "rollout client",
        "baseline",
        lambda: asyncio.run(rounds(trainer_url, False)),
        rounds=scaled(8, 3),
    )


def test_rollout_client_shared_pool(benchmark, trainer_url: str) -> None:
    compare(
        benchmark,
        "rollout client",
        "shared pool",
        lambda: asyncio.run(rounds(trainer_url, True)),
        rounds=scaled(8, 3),
    )
