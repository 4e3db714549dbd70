"""The eval executor's checks per item: tool definitions are checked once, and again whenever they change."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from osmosis_ai.eval.llm_client import ExternalLLMClient
from osmosis_ai.eval.runner import AgentExecutor
from osmosis_ai.llm.transport import Reply
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop
from osmosis_ai.runs.engine import RunEngine
from osmosis_ai.runs.work import MemorySink, WorkItem

TOOL = {"type": "function", "function": {"name": "add", "description": "Adds.", "parameters": {}}}


class _Agent(RolloutAgentLoop):
    """Returns the same tool list object every time; row 2 breaks it in place, row 4 mends it."""

    name = "tools"

    def __init__(self) -> None:
        self.tools = [dict(TOOL, function=dict(TOOL["function"]))]

    def get_tools(self, request: Any) -> list[dict[str, Any]]:
        row = request.metadata["row_index"]
        if row == 2:
            self.tools[0]["function"]["name"] = ""
        elif row == 4:
            self.tools[0]["function"]["name"] = "add"
        return self.tools

    async def run(self, ctx: Any) -> Any:
        return ctx.complete(list(ctx.request.messages))


def test_tools_are_checked_again_when_the_same_list_changes() -> None:
    executor = AgentExecutor(_Agent(), [], lambda tag: ExternalLLMClient(transport=None))
    sink = MemorySink()
    engine = RunEngine(executor, sink, concurrency=1, item_timeout=5, handle_signals=False)
    row = {"ground_truth": "1", "user_prompt": "1?", "system_prompt": "s"}
    items = [WorkItem(i, row, f"k{i}", 0) for i in range(6)]
    asyncio.run(engine.run(items))
    by_row = {r["row_index"]: r for r in sink.records}
    assert [by_row[i]["success"] for i in range(6)] == [True, True, False, False, True, True]
    assert by_row[2]["error"].startswith("Tool validation error: invalid tool definition")


class _NumberAgent(RolloutAgentLoop):
    """Equal tool lists that send different bytes: ``1`` on even rows, ``1.0`` on odd ones."""

    name = "numbers"

    def get_tools(self, request: Any) -> list[dict[str, Any]]:
        minimum = 1 if request.metadata["row_index"] % 2 == 0 else 1.0
        parameters = {"type": "object", "properties": {"n": {"type": "number", "minimum": minimum}}}
        return [
            {
                "type": "function",
                "function": {"name": "add", "description": "Adds.", "parameters": parameters},
            }
        ]

    async def run(self, ctx: Any) -> Any:
        await ctx.llm.chat_completions(list(ctx.request.messages))
        return ctx.complete(list(ctx.request.messages))


class _Recording:
    """A transport that answers at once and keeps the tool definitions each call was given, as JSON."""

    loop_safe = True

    def __init__(self) -> None:
        self.sent: dict[int, bytes] = {}

    async def complete(self, messages: Any, tools: Any, params: Any) -> Reply:
        self.sent[len(self.sent)] = orjson.dumps(tools)
        return Reply(
            {"role": "assistant", "content": "2"}, {"prompt_tokens": 1, "completion_tokens": 1}, "stop"
        )


def test_an_equal_tool_list_still_sends_its_own_definitions() -> None:
    # 1 == 1.0: the check may be skipped for an equal list, but the request must carry the agent's numbers.
    transport = _Recording()
    executor = AgentExecutor(_NumberAgent(), [], lambda tag: ExternalLLMClient(transport=transport))
    engine = RunEngine(executor, MemorySink(), concurrency=1, item_timeout=5, handle_signals=False)
    row = {"ground_truth": "1", "user_prompt": "1?", "system_prompt": "s"}
    asyncio.run(engine.run([WorkItem(i, row, f"k{i}", 0) for i in range(4)]))
    assert [b'"minimum":1.0' in transport.sent[i] for i in range(4)] == [False, True, False, True]
    assert all(b'"minimum":1' in sent for sent in transport.sent.values())


def test_a_client_carries_calls_home_only_for_a_transport_bound_to_its_loop() -> None:
    """A loop-safe transport is called from whichever loop the agent runs on (no home looked up); any
    other is called on the loop that made the client, also from an agent on a loop of its own."""
    from osmosis_ai.loop_thread import LoopThread

    class _Transport:
        def __init__(self, loop_safe: bool) -> None:
            self.loop_safe = loop_safe
            self.loops: list[asyncio.AbstractEventLoop] = []

        async def complete(self, messages: Any, tools: Any, params: Any) -> Reply:
            self.loops.append(asyncio.get_running_loop())
            usage = {"prompt_tokens": 1, "completion_tokens": 2}
            return Reply({"role": "assistant", "content": "ok"}, usage, "stop")

    async def main() -> None:
        here = asyncio.get_running_loop()
        safe, bound = _Transport(True), _Transport(False)
        clients = ExternalLLMClient(safe), ExternalLLMClient(bound)
        assert clients[0]._home is None and clients[1]._home is here
        host = LoopThread("elsewhere")
        try:
            for client in clients:
                reply = await asyncio.wrap_future(host.submit(client.chat_completions([])))
                assert reply.message["content"] == "ok" and client.counts == (1, 1, 2)
        finally:
            host.stop()
        assert safe.loops == [host.loop] and bound.loops == [here]

    asyncio.run(main())


def test_offered_tools_are_copies_of_dicts_and_dumps_of_schemas() -> None:
    """A plain dict is offered as a copy of itself, a tool schema as its dump without nulls, and a mapping
    of another type as a dict of it."""
    from types import MappingProxyType

    from osmosis_ai.rollout.schemas import OpenAIFunctionToolSchema

    class _Transport:
        loop_safe = True

    schema = OpenAIFunctionToolSchema(type="function", function={"name": "add", "description": "Adds."})
    client = ExternalLLMClient(_Transport())  # type: ignore[arg-type]
    client.set_tools([TOOL, schema, MappingProxyType({"type": "function"})])
    assert client._tools == [
        TOOL,
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Adds.",
                "parameters": {"type": "object", "properties": {}, "required": []},
                "strict": False,
            },
        },
        {"type": "function"},
    ]
    assert client._tools[0] is not TOOL and type(client._tools[2]) is dict
    client.set_tools([])
    assert client._tools is None
