"""eval run's item: the workflow's model calls answered in process by the bridge."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from osmosis_ai.llm.bridge import LLMBridge, split_request
from osmosis_ai.llm.transport import Reply


class _Transport:
    """Answers every call at once with the last user message's first word, 5 + 2 tokens."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def complete(self, messages: Any, tools: Any = None, params: Any = None, **kw: Any) -> Reply:
        self.sent.append((messages, tools, params))
        message = {"role": "assistant", "content": messages[-1]["content"].split()[0]}
        usage = {"prompt_tokens": 5, "completion_tokens": 2}
        raw = {
            "choices": [{"index": 0, "message": dict(message), "finish_reason": "stop"}],
            "usage": {**usage},
        }
        return Reply(message, usage, "stop", raw)


@pytest.mark.parametrize(
    ("body", "params"),
    [
        ({"model": "m", "messages": []}, {}),
        ({"model": "m", "messages": [], "tools": [], "stream": True, "stream_options": {}}, {}),
        (
            {"model": "m", "messages": [], "temperature": 0, "stream_options": {"include_usage": True}},
            {"temperature": 0},
        ),
        (
            {"messages": [], "seed": 1, "stream": False, "tool_choice": "auto"},
            {"seed": 1, "tool_choice": "auto"},
        ),
    ],
)
def test_a_request_passes_on_every_key_the_transport_does_not_set(body: dict[str, Any], params: Any) -> None:
    messages, tools, passed = split_request(body)
    assert messages is body["messages"] and tools is body.get("tools") and passed == params


def test_each_in_process_call_keeps_its_own_counts_and_returns_the_replys_body() -> None:
    async def main() -> tuple[Any, Any, Any]:
        transport = _Transport()
        bridge = LLMBridge(transport)  # type: ignore[arg-type]
        bodies = [
            await bridge.chat_in_process("a", {"model": "m", "messages": [{"role": "user", "content": word}]})
            for word in ("x", "y")
        ]
        return bodies, bridge.take_calls("a"), transport.sent

    bodies, calls, sent = asyncio.run(main())
    assert [body["choices"][0]["message"]["content"] for body in bodies] == ["x", "y"]
    assert bodies[0]["usage"] == {"prompt_tokens": 5, "completion_tokens": 2}  # the wire body as it came
    assert calls == [{"prompt_tokens": 5, "completion_tokens": 2}] * 2 and calls[0] is not calls[1]
    assert [params for _, _, params in sent] == [{}, {}]
