"""The OpenAI Agents SDK inside a 0.3 rollout: the model calls go to the rollout's chat-completions URL (under
``osmosis eval run``: answered in this process, no HTTP hop) and the conversation becomes the rollout's sample.

``OsmosisRolloutModel`` is the SDK's chat-completions model pointed at the ambient rollout context (URL,
key); ``OsmosisMemorySession`` keeps the conversation in memory and registers itself as the rollout's
:class:`~osmosis_ai.rollout.SampleSource`; ``OsmosisAgent`` is an ``Agent`` whose model defaults to
``OsmosisRolloutModel``. Create them inside ``AgentWorkflow.run`` (where the rollout context exists) and
return ``None`` from the workflow: the sample then comes from the session.

Trace export to OpenAI is turned off when this module loads: a rollout's key is not an OpenAI key, and a
training run must not ship its conversations anywhere but the rollout's own endpoint.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

try:
    from agents import Agent, set_tracing_disabled
    from agents.memory import SessionABC
    from agents.models.chatcmpl_converter import Converter
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from openai import AsyncOpenAI
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "The OpenAI Agents integration needs the openai-agents package: pip install 'osmosis-ai[openai-agents]'"
    ) from exc

from osmosis_ai.rollout.context import RolloutContext, SampleSource, get_rollout_context
from osmosis_ai.rollout.integrations.agents._in_process import (
    client_arguments,
    in_process_http_client,
    rollout_for_client,
)
from osmosis_ai.rollout.sample import RolloutSample

__all__ = ["OsmosisAgent", "OsmosisMemorySession", "OsmosisRolloutModel"]

set_tracing_disabled(True)


class OsmosisRolloutModel(OpenAIChatCompletionsModel):
    """The Agents SDK's chat-completions model, sending to the rollout context's URL with its key.

    Args:
        model: The model name sent in requests (the rollout's endpoint decides the real model).
        context: The rollout context; default the ambient one.
    """

    def __init__(self, model: str = "default", *, context: RolloutContext | None = None) -> None:
        ctx = rollout_for_client(context)
        # Under eval run: no HTTP hop to the bridge.
        client = AsyncOpenAI(**client_arguments(ctx), http_client=in_process_http_client(ctx))
        super().__init__(model=model, openai_client=client)


class OsmosisMemorySession(SessionABC, SampleSource):
    """An in-memory Agents SDK session that is also the rollout's sample source.

    Args:
        session_id: The session id (default: the rollout id, else a random one).
        register: Register as the ambient rollout context's sample source (one per rollout).
    """

    def __init__(self, session_id: str | None = None, *, register: bool = True) -> None:
        ambient = get_rollout_context()
        self.session_id = session_id or (ambient.rollout_id if ambient else None) or uuid.uuid4().hex
        self.session_settings = None
        self._items: list[Any] = []
        if register and ambient is not None:
            ambient.set_sample_source(self)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return list(self._items if limit is None else self._items[-limit:] if limit > 0 else [])

    async def add_items(self, items: list[Any]) -> None:
        self._items.extend(items)

    async def pop_item(self) -> Any:
        return self._items.pop() if self._items else None

    async def clear_session(self) -> None:
        self._items.clear()

    async def get_sample(self) -> RolloutSample:
        """The conversation so far, as chat-completions messages."""
        messages = [dict(m) for m in Converter.items_to_messages(list(self._items))]
        return RolloutSample(messages=messages)


@dataclass
class OsmosisAgent(Agent):
    """An Agents SDK ``Agent`` whose model defaults to :class:`OsmosisRolloutModel` (the rollout's endpoint)."""

    def __post_init__(self) -> None:
        if self.model is None:
            self.model = OsmosisRolloutModel()
        super().__post_init__()
