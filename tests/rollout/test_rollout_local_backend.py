"""LocalBackend's slots and callbacks: rollouts past the limit wait, `health()` counts them, and each
callback (plain or a coroutine function) has run when `execute` returns."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from osmosis_ai.rollout import AgentWorkflow, ExecutionRequest, Grader, LocalBackend


def _backend(limit: int | None, gate: asyncio.Event, started: list[str]) -> LocalBackend:
    class Gated(AgentWorkflow):
        async def run(self, ctx: Any) -> Any:
            started.append(ctx.prompt[0]["content"])
            await gate.wait()
            return [*ctx.prompt, {"role": "assistant", "content": "4"}]

    class Exact(Grader):
        async def grade(self, ctx: Any) -> None:
            ctx.set_reward(1.0 if ctx.sample.messages[-1]["content"] == ctx.label else 0.0)

    return LocalBackend(workflow=Gated, grader=Exact, artifact_root=False, max_concurrent=limit)


def _request(i: int) -> ExecutionRequest:
    return ExecutionRequest(id=f"r{i}", prompt=[{"role": "user", "content": f"q{i}"}], label="4")


@pytest.mark.parametrize(("limit", "rollouts"), [(2, 5), (None, 3)])
def test_rollouts_beyond_the_limit_wait_and_health_counts_them(limit: int | None, rollouts: int) -> None:
    async def main() -> None:
        gate, started = asyncio.Event(), []
        backend = _backend(limit, gate, started)
        done: dict[str, list[Any]] = {}

        async def graded(result: Any) -> None:  # a coroutine function: awaited before execute returns
            await asyncio.sleep(0)
            done.setdefault("graded", []).append(result.sample.reward)

        runs = [
            asyncio.ensure_future(
                backend.execute(_request(i), done.setdefault("workflow", []).append, graded)
            )
            for i in range(rollouts)
        ]
        running = min(limit or rollouts, rollouts)
        while len(started) < running:  # each started rollout says so; the loop runs them in turn
            await asyncio.sleep(0)
        for _ in range(3):  # a waiting rollout gets no slot however often the loop turns
            await asyncio.sleep(0)
        assert len(started) == running
        assert backend.health()["concurrency"] == {
            "max_concurrent": limit, "queued": rollouts - running, "running": running,
        }  # fmt: skip
        gate.set()
        await asyncio.gather(*runs)
        assert sorted(started) == sorted(f"q{i}" for i in range(rollouts))
        assert len(done["workflow"]) == rollouts and done["graded"] == [1.0] * rollouts
        assert backend.health()["concurrency"] == {"max_concurrent": limit, "queued": 0, "running": 0}

    asyncio.run(main())


def test_a_workflow_that_fails_frees_its_slot() -> None:
    class Boom(AgentWorkflow):
        async def run(self, ctx: Any) -> Any:
            raise RuntimeError("boom")

    backend = LocalBackend(workflow=Boom, artifact_root=False, max_concurrent=None)
    results: list[Any] = []
    asyncio.run(backend.execute(_request(0), results.append, results.append))
    assert [r.status.value for r in results] == ["failure", "failure"]
    assert backend.health()["concurrency"]["running"] == 0
