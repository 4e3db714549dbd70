"""The OpenAI Agents SDK integration end to end: a workflow written with it runs under `osmosis eval run`."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

# find_spec, not importorskip: importing the SDK here would put its top-level package name in
# sys.modules for the whole session (openai-agents is called `agents`, a name user projects use too).
if importlib.util.find_spec("agents") is None:
    pytest.skip("needs the openai-agents extra", allow_module_level=True)

from tests.eval.test_eval_run import index, osmosis_run
from tests.eval_run_workspace import calc_rows, make_workspace

MAIN = """
from agents import Runner

from osmosis_ai.rollout import AgentWorkflow, Grader
from osmosis_ai.rollout.integrations.agents.openai_agents import OsmosisAgent, OsmosisMemorySession


class AgentsWorkflow(AgentWorkflow):
    async def run(self, ctx):
        system = next((m["content"] for m in ctx.prompt if m["role"] == "system"), None)
        agent = OsmosisAgent(name="calc", instructions=system)
        session = OsmosisMemorySession()  # registers itself: the sample comes from it
        await Runner.run(agent, ctx.prompt[-1]["content"], session=session)
        return None


class CalcGrader(Grader):
    async def grade(self, ctx):
        answer = (ctx.sample.messages[-1].get("content") or "").strip()
        ctx.set_reward(1.0 if answer == ctx.label else 0.0)
"""


def test_openai_agents_workflow_runs_through_the_bridge(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4", "usage": {"prompt_tokens": 5, "completion_tokens": 1}}})
    ws = make_workspace(tmp_path / "ws", calc_rows(4))
    (ws / "rollouts/calc/main.py").write_text(MAIN)
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    assert [r["reward"] for r in index(ws)] == [1.0, 0.0, 1.0, 0.0]
    assert envelope["resource"]["metrics"]["tokens_used"] == 4 * 6
    sent = server.requests()
    assert len(sent) == 4
    assert sent[0]["messages"][0] == {"role": "system", "content": "Answer with a number."}
    assert sent[0]["messages"][-1]["content"].startswith("What is 2+2?")
