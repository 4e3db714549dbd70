"""A 0.3-style workspace written by us, for `osmosis eval run` tests and the bench.

The workflow posts the prompt to the rollout context's chat-completions URL (the run's LLM bridge) with
httpx, as user code would; the grader compares the reply with ``ground_truth``. Rows whose metadata names
a ``mode`` make the workflow or grader misbehave in one of the ways users' code does.
"""

from __future__ import annotations

import json
from pathlib import Path

MAIN = """
import asyncio
import math

import httpx

from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, get_rollout_context

_CLIENT = None


def _client():
    global _CLIENT
    if _CLIENT is None:
        _CLIENT = httpx.AsyncClient(timeout=30.0)
    return _CLIENT


class CalcWorkflow(AgentWorkflow):
    async def run(self, ctx):
        mode = (ctx.metadata or {}).get("mode")
        if mode == "wrong_type":
            return 42
        if mode == "hang":
            await asyncio.Event().wait()  # never set: only the run's deadline ends it
        if mode == "raise":
            raise RuntimeError("workflow exploded")
        if mode == "raise_lines":
            raise RuntimeError("workflow exploded\\nsee the second line")
        if mode == "artifact":
            (ctx.artifacts_dir / "note.txt").write_text("kept")
        if mode == "url":
            (ctx.artifacts_dir / "url.txt").write_text(get_rollout_context().chat_completions_url)
        if mode == "log_key":
            import logging
            logging.getLogger("calc").warning("bridge key %s", get_rollout_context().api_key)
        if mode == "no_trajectory":  # a sample whose trajectory is turned off (trajectory_messages=None)
            from osmosis_ai.rollout import RolloutSample, SampleSource

            class Kept(SampleSource):
                async def get_sample(self):
                    reply = {"role": "assistant", "content": "4"}
                    return RolloutSample(messages=[*ctx.prompt, reply], trajectory_messages=None)

            get_rollout_context().set_sample_source(Kept())
            return None
        if mode == "log_secret":
            import logging, os
            logging.getLogger("calc").warning("calling with %s", os.environ.get("CALC_TOKEN"))
        rollout = get_rollout_context()
        response = await _client().post(
            rollout.chat_completions_url + "/chat/completions",
            headers={"Authorization": f"Bearer {rollout.api_key}"},
            json={"model": "calc", "messages": ctx.prompt, "temperature": 0},
        )
        response.raise_for_status()
        reply = response.json()["choices"][0]["message"]
        return AgentWorkflowOutput(messages=[*ctx.prompt, reply], metrics={"turns": 1.0})


class CalcGrader(Grader):
    async def grade(self, ctx):
        mode = (ctx.metadata or {}).get("mode")
        if mode == "no_reward":
            return 1.0
        if mode == "nan":
            ctx.set_reward(math.nan)
            return
        if mode == "grader_raise":
            raise KeyError("grader exploded")
        answer = (ctx.sample.messages[-1].get("content") or "").strip()
        ctx.set_reward(1.0 if answer == ctx.label else 0.0)
"""

# A 0.2 agent loop as the entrypoint, with its scorer beside it (``--eval-fn rollouts/calc/main.py:exact``).
LOOP_MAIN = """
from osmosis_ai import osmosis_reward
from osmosis_ai.rollout import RolloutAgentLoop


class CalcLoop(RolloutAgentLoop):
    name = "calc-loop"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        reply = await ctx.chat(ctx.request.messages)
        return ctx.complete([*ctx.request.messages, reply.message])


agent_loop = CalcLoop()


@osmosis_reward
def exact(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    return float(solution_str.strip() == ground_truth)
"""


EVAL_TOML = """[experiment]
rollout = "calc"
entrypoint = "main.py"
model_path = "openai/calc-model"
dataset = "calc-dataset"

[evaluation]
n = {n}
batch_size = 4
pass_threshold = 1.0
agent_workflow_timeout_s = {agent_timeout}
grader_timeout_s = 5

[secrets]
required = []
"""


def make_workspace(root: Path, rows: list[dict], *, n: int = 1, agent_timeout: float = 30) -> Path:
    """Writes the workspace under ``root`` with ``rows`` as ``data/calc.jsonl``; returns ``root``."""
    for folder in ("rollouts/calc", "configs/eval", "configs/training", "data"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "rollouts/calc/main.py").write_text(MAIN, encoding="utf-8")
    (root / "configs/eval/calc.toml").write_text(
        EVAL_TOML.format(n=n, agent_timeout=agent_timeout), encoding="utf-8"
    )
    with (root / "data/calc.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return root


def calc_rows(count: int) -> list[dict]:
    """Rows alternating between a right ("4") and a wrong ("5") ground truth for the reply "4"."""
    return [
        {
            "user_prompt": f"What is 2+2? (#{i})",
            "system_prompt": "Answer with a number.",
            "ground_truth": "4" if i % 2 == 0 else "5",
        }
        for i in range(count)
    ]
