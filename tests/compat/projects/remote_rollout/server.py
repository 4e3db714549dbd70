"""A remote-rollout project shaped like the documented example: a calculator agent loop for `osmosis serve`.

Written for these tests; it uses the import lines, file layout and module attribute (`server:agent_loop`)
that the established documentation tells users to write.
"""

from __future__ import annotations

import os

from rewards import compute_reward
from tools import TOOL_SCHEMAS, run_tool_calls

from osmosis_ai.rollout import (
    RolloutAgentLoop,
    RolloutContext,
    RolloutRequest,
    RolloutResult,
    create_app,
)


def last_assistant_text(messages: list[dict]) -> str:
    for message in reversed(messages):
        if message.get("role") == "assistant" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


class CalculatorLoop(RolloutAgentLoop):
    name = "calculator"

    def get_tools(self, request: RolloutRequest):
        return TOOL_SCHEMAS

    async def run(self, ctx: RolloutContext) -> RolloutResult:
        messages = list(ctx.request.messages)
        finish_reason = "max_turns"
        for turn in range(ctx.request.max_turns):
            ctx.log_event("turn", turn=turn, messages=len(messages))
            reply = await ctx.chat(messages, **ctx.request.completion_params)
            messages.append(reply.message)
            if not reply.has_tool_calls:
                finish_reason = reply.finish_reason or "stop"
                break
            results, latency_ms = await run_tool_calls(reply.tool_calls)
            for _ in reply.tool_calls:
                ctx.record_tool_call(latency_ms=latency_ms / len(reply.tool_calls))
            messages.extend(results)
        truth = ctx.request.metadata.get("ground_truth")
        reward = compute_reward(last_assistant_text(messages), truth) if truth else None
        return ctx.complete(messages, finish_reason=finish_reason, reward=reward)


agent_loop = CalculatorLoop()
app = create_app(agent_loop, debug_dir=os.getenv("ROLLOUT_DEBUG_DIR"))
