"""The Strands Agents integration end to end: a workflow written with it runs under `osmosis eval run`."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

# find_spec, not importorskip: importing the SDK here would put its top-level package name in
# sys.modules for the whole session (openai-agents is called `agents`, a name user projects use too).
if importlib.util.find_spec("strands") is None:
    pytest.skip("needs the strands extra", allow_module_level=True)

from tests.eval.test_eval_run import index, osmosis_run
from tests.eval_run_workspace import calc_rows, make_workspace

MAIN = """
from osmosis_ai.rollout import AgentWorkflow, Grader
from osmosis_ai.rollout.integrations.agents.strands import OsmosisStrandsAgent


class StrandsWorkflow(AgentWorkflow):
    async def run(self, ctx):
        system = next((m["content"] for m in ctx.prompt if m["role"] == "system"), None)
        agent = OsmosisStrandsAgent(system_prompt=system)  # registers itself: the sample comes from it
        await agent.invoke_async(ctx.prompt[-1]["content"])
        return None


class CalcGrader(Grader):
    async def grade(self, ctx):
        answer = (ctx.sample.messages[-1].get("content") or "").strip()
        ctx.set_reward(1.0 if answer == ctx.label else 0.0)
"""


def test_strands_workflow_runs_through_the_bridge(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4", "usage": {"prompt_tokens": 5, "completion_tokens": 1}}})
    ws = make_workspace(tmp_path / "ws", calc_rows(4))
    (ws / "rollouts/calc/main.py").write_text(MAIN)
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    assert [r["reward"] for r in index(ws)] == [1.0, 0.0, 1.0, 0.0]
    assert envelope["resource"]["metrics"]["tokens_used"] == 4 * 6
    sent = server.requests()
    assert len(sent) == 4 and "stream" not in sent[0]  # the bridge asked the model without streaming
    assert sent[0]["messages"][0]["role"] == "system"


def test_strands_messages_convert_to_chat_form() -> None:
    from osmosis_ai.rollout.integrations.agents.strands import strands_to_chat_messages

    messages = [
        {"role": "user", "content": [{"text": "2+2?"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 2, "b": 2}}}],
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "4"}]}}],
        },
        {"role": "assistant", "content": [{"text": "4"}]},
    ]
    chat = strands_to_chat_messages(messages)
    assert chat[1]["tool_calls"][0]["function"] == {"name": "add", "arguments": '{"a":2,"b":2}'}
    assert chat[2] == {"role": "tool", "tool_call_id": "t1", "content": "4"}
    assert chat[3] == {"role": "assistant", "content": "4"}
