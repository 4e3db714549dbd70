"""Strands Agents inside a 0.3 rollout: the model calls go to the rollout's chat-completions URL (under
``osmosis eval run``: answered in this process, no HTTP hop) and the conversation becomes the rollout's sample.

``OsmosisRolloutModel`` is Strands' OpenAI-compatible model pointed at the ambient rollout context (URL,
key); ``OsmosisStrandsAgent`` is a Strands ``Agent`` using it by default that registers itself as the
rollout's :class:`~osmosis_ai.rollout.SampleSource`. Create the agent inside ``AgentWorkflow.run`` and
return ``None`` from the workflow: the sample is the agent's conversation, in chat-completions form.
"""

from __future__ import annotations

from typing import Any

import orjson

try:
    from strands import Agent
    from strands.models.openai import OpenAIModel
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "The Strands integration needs strands-agents: pip install 'osmosis-ai[strands]'"
    ) from exc

from osmosis_ai.rollout.context import RolloutContext, SampleSource, get_rollout_context
from osmosis_ai.rollout.integrations.agents._in_process import (
    client_arguments,
    in_process_http_client,
    rollout_for_client,
)
from osmosis_ai.rollout.sample import RolloutSample

__all__ = ["OsmosisRolloutModel", "OsmosisStrandsAgent", "strands_to_chat_messages"]


class OsmosisRolloutModel(OpenAIModel):
    """Strands' OpenAI-compatible model, sending to the rollout context's URL with its key.

    Args:
        model_id: The model name sent in requests (the rollout's endpoint decides the real model).
        context: The rollout context; default the ambient one.
        **config: Further Strands OpenAI model settings (``params={"temperature": 0}``, ...).
    """

    def __init__(
        self, model_id: str = "default", *, context: RolloutContext | None = None, **config: Any
    ) -> None:
        ctx = rollout_for_client(context)
        client_args = client_arguments(ctx)
        http_client = in_process_http_client(ctx)
        if http_client is None:
            super().__init__(client_args=client_args, model_id=model_id, **config)
            return
        # Under eval run: one client answered in this process (no HTTP hop to the bridge, no socket to close).
        from openai import AsyncOpenAI

        client = AsyncOpenAI(**client_args, http_client=http_client)
        super().__init__(client=client, model_id=model_id, **config)


def _text(blocks: list[dict[str, Any]]) -> str:
    return "".join(block["text"] for block in blocks if "text" in block)


def strands_to_chat_messages(
    messages: list[dict[str, Any]], system_prompt: str | None = None
) -> list[dict[str, Any]]:
    """Strands messages (content blocks: text, toolUse, toolResult) as chat-completions messages.

    Example:
        >>> strands_to_chat_messages([{"role": "user", "content": [{"text": "hi"}]}], "Be brief.")
        [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'hi'}]
    """
    out: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
    for message in messages:
        blocks = list(message.get("content") or [])
        for block in blocks:
            if "toolResult" in block:
                result = block["toolResult"]
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": result.get("toolUseId"),
                        "content": _text(result.get("content") or []),
                    }
                )
        calls = [
            {
                "id": block["toolUse"].get("toolUseId"),
                "type": "function",
                "function": {
                    "name": block["toolUse"].get("name"),
                    "arguments": orjson.dumps(block["toolUse"].get("input") or {}).decode(),
                },
            }
            for block in blocks
            if "toolUse" in block
        ]
        text = _text(blocks)
        if text or calls or not any("toolResult" in block for block in blocks):
            chat: dict[str, Any] = {"role": message["role"], "content": text}
            if calls:
                chat["tool_calls"] = calls
            out.append(chat)
    return out


class OsmosisStrandsAgent(Agent, SampleSource):
    """A Strands ``Agent`` on the rollout's endpoint that is also the rollout's sample source.

    Takes Strands' ``Agent`` arguments; ``model`` defaults to :class:`OsmosisRolloutModel` and
    ``callback_handler`` to None (Strands' default prints the stream to stdout, which would mix into the
    CLI's output). ``register=False`` skips registering as the sample source.
    """

    def __init__(self, *args: Any, model: Any = None, register: bool = True, **kwargs: Any) -> None:
        kwargs.setdefault("callback_handler", None)
        super().__init__(*args, model=model if model is not None else OsmosisRolloutModel(), **kwargs)
        ambient = get_rollout_context()
        if register and ambient is not None:
            ambient.set_sample_source(self)

    async def get_sample(self) -> RolloutSample:
        """The agent's conversation so far, as chat-completions messages."""
        system = self.system_prompt if isinstance(self.system_prompt, str) else None
        return RolloutSample(messages=strands_to_chat_messages(list(self.messages), system))
