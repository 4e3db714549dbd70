"""`RolloutContext.chat_completions`: in `osmosis eval run` the LLM layer in-process, elsewhere the URL over HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.llm.bridge import LLMBridge
from osmosis_ai.llm.providers import resolve_endpoint
from osmosis_ai.llm.retry import ProviderCallError
from osmosis_ai.llm.transport import make_transport
from osmosis_ai.rollout.context import RolloutContext
from tests.eval.test_eval_run import index, osmosis_run
from tests.eval_run_workspace import calc_rows, make_workspace

CONTEXT_MAIN = """
from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, get_rollout_context


class CalcWorkflow(AgentWorkflow):
    async def run(self, ctx):
        reply = await get_rollout_context().chat_completions({"model": "calc", "messages": ctx.prompt})
        return AgentWorkflowOutput(messages=[*ctx.prompt, reply["choices"][0]["message"]])


class CalcGrader(Grader):
    async def grade(self, ctx):
        ctx.set_reward(1.0 if ctx.sample.messages[-1]["content"] == ctx.label else 0.0)
"""


def test_eval_run_answers_the_context_client_in_process(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4", "usage": {"prompt_tokens": 5, "completion_tokens": 2}}})
    ws = make_workspace(tmp_path / "ws", calc_rows(4))
    (ws / "rollouts/calc/main.py").write_text(CONTEXT_MAIN)
    code, _, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    assert [r["reward"] for r in index(ws)] == [1.0, 0.0, 1.0, 0.0]
    assert [r["tokens"] for r in index(ws)] == [7] * 4  # counted per rollout, as through the bridge
    sent = server.requests()
    assert len(sent) == 4 and sent[0]["messages"][-1]["content"].startswith("What is 2+2?")


def test_a_provider_failure_in_process_is_a_classified_item_and_stops_the_run(
    tmp_path: Path, scripted: Any
) -> None:
    server = scripted({"default": {"status": 401, "body": {"error": {"message": "bad key"}}}})
    ws = make_workspace(tmp_path / "ws", calc_rows(30))
    (ws / "rollouts/calc/main.py").write_text(CONTEXT_MAIN)
    code, envelope, _ = osmosis_run(ws, server)
    assert code == 1 and envelope["status"] == "partial"  # stopped early: every call would fail the same
    assert all(r["status"] == "failed" and r["error_type"] == "agent_error" for r in index(ws))
    assert len(index(ws)) < 30


def test_outside_eval_run_the_context_posts_to_its_url(scripted: Any) -> None:
    server = scripted({"default": {"content": "hi", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}})

    async def main() -> dict[str, Any]:
        context = RolloutContext(chat_completions_url=server.base_url, api_key="sk-x", rollout_id="r1")
        return await context.chat_completions(
            {"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 0}
        )

    reply = asyncio.run(main())
    assert reply["choices"][0]["message"]["content"] == "hi"
    assert server.requests()[0]["temperature"] == 0 and server.requests()[0]["model"] == "m"


def test_the_bridge_route_and_the_in_process_call_count_the_same(scripted: Any) -> None:
    server = scripted({"default": {"content": "ok", "usage": {"prompt_tokens": 3, "completion_tokens": 4}}})

    async def main() -> tuple[int, int]:
        import aiohttp

        transport = make_transport(resolve_endpoint("m", base_url=server.base_url, api_key="sk-local"))
        async with LLMBridge(transport) as bridge, aiohttp.ClientSession() as session:
            body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
            await bridge.chat_in_process("a", body)
            headers = {"Authorization": f"Bearer {bridge.token}"}
            async with session.post(
                bridge.url_for("b") + "/chat/completions", json=body, headers=headers
            ) as r:
                assert r.status == 200 and (await r.json())["choices"][0]["message"]["content"] == "ok"
            async with session.post(
                bridge.url_for("b") + "/chat/completions", json={"x": 1}, headers=headers
            ) as r:
                assert r.status == 400
        await transport.aclose()
        return bridge.take_tokens("a"), bridge.take_tokens("b")

    assert asyncio.run(main()) == (7, 7)


def test_in_process_errors_are_the_llm_layers(scripted: Any) -> None:
    server = scripted({"default": {"status": 404, "body": {"error": {"message": "no such model"}}}})

    async def main() -> None:
        transport = make_transport(resolve_endpoint("m", base_url=server.base_url, api_key="sk-local"))
        bridge = LLMBridge(transport)
        try:
            with pytest.raises(ProviderCallError):
                await bridge.chat_in_process("a", {"model": "m", "messages": []})
        finally:
            await transport.aclose()

    asyncio.run(main())


def test_rollout_ids_are_32_hex_and_never_repeat_across_a_fork() -> None:
    import os
    import re

    from osmosis_ai.eval.workflow_executor import new_rollout_id

    ids = {new_rollout_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports its next id and leaves at once
        os.write(write, new_rollout_id().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.waitpid(pid, 0)
    assert child not in ids and child[:16] != next(iter(ids))[:16]
