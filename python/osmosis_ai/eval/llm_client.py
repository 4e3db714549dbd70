"""The LLM client local runs hand to agents (``ctx.llm``): one per run, all sharing one transport.

It counts calls, latency and tokens for the run's record; the transport does the sending and retrying.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Sequence
from typing import Any

from osmosis_ai.llm.transport import Reply, Transport
from osmosis_ai.loop_thread import home_loop
from osmosis_ai.rollout.agent_loop import CompletionsResult
from osmosis_ai.rollout.schemas import RolloutMetrics

__all__ = ["ExternalLLMClient"]


class ExternalLLMClient:
    """One run's LLM client: sends chats through a shared transport and counts calls, latency and tokens.

    Example:
        >>> client = ExternalLLMClient(transport)  # doctest: +SKIP
        >>> reply = await client.chat_completions([{"role": "user", "content": "hi"}])  # doctest: +SKIP
    """

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._tools: list[dict[str, Any]] | None = None
        # The transport's connections belong to the session's loop; an agent isolated on a loop of its own
        # (the run engine's LoopThread) has its calls carried over to that one. A transport that may be
        # called from any loop needs no home (looking it up costs a system call per run).
        self._loop_safe = bool(getattr(transport, "loop_safe", False))
        self._home = None if self._loop_safe else home_loop()
        self.reset_metrics()

    @property
    def display_name(self) -> str:
        return self._transport.endpoint.model

    def set_tools(self, tools: Sequence[Any]) -> None:
        """Offers ``tools`` (pydantic tool schemas or plain dicts) on every call; empty clears them."""
        # A plain dict first: hasattr's failed lookup on one raises and catches an AttributeError inside.
        dumped = [
            dict(t)
            if type(t) is dict
            else t.model_dump(exclude_none=True)
            if hasattr(t, "model_dump")
            else dict(t)
            for t in tools
        ]
        self._tools = dumped or None

    def reset_metrics(self) -> None:
        self._calls = 0
        self._latency_ms = 0.0
        self._prompt_tokens = 0
        self._completion_tokens = 0

    async def chat_completions(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompletionsResult:
        """Sends the conversation; ``kwargs`` are sampling parameters (``temperature``, ``max_tokens``...)."""
        started = time.monotonic()
        try:
            call = self._transport.complete(messages, self._tools, kwargs)
            # The direct transport keeps connections per loop: it is awaited on whichever loop calls.
            reply = await (call if self._loop_safe else self._on_home_loop(call))
        finally:
            self._calls += 1
            self._latency_ms += (time.monotonic() - started) * 1000.0
        prompt, completion = reply.usage["prompt_tokens"], reply.usage["completion_tokens"]
        self._prompt_tokens += prompt
        self._completion_tokens += completion
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        # Positional (message, token_ids, logprobs, usage, finish_reason): by keyword, the frozen dataclass's
        # __init__ took 0.2 us more per reply.
        return CompletionsResult(reply.message, [], [], usage, reply.finish_reason)

    async def _on_home_loop(self, call: Coroutine[Any, Any, Reply]) -> Reply:
        home = self._home
        if home is None or home.is_closed() or home is asyncio.get_running_loop():
            return await call
        # Cancelling this await (a timeout) cancels the call on the home loop too.
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call, home))

    def get_metrics(self) -> RolloutMetrics:
        # Validated: pydantic-core checks four numbers in less time than model_construct's Python loop takes.
        return RolloutMetrics(**self.metric_fields())

    def metric_fields(self) -> dict[str, Any]:
        """:meth:`get_metrics`'s counters as ``RolloutMetrics`` fields (``ctx.complete`` builds the rollout's
        metrics from them in one model)."""
        return {
            "llm_latency_ms": self._latency_ms,
            "num_llm_calls": self._calls,
            "prompt_tokens": self._prompt_tokens,
            "response_tokens": self._completion_tokens,
        }

    @property
    def counts(self) -> tuple[int, int, int]:
        """(calls, prompt tokens, completion tokens) so far: what a run's record needs, without a model."""
        return self._calls, self._prompt_tokens, self._completion_tokens

    @property
    def total_tokens(self) -> int:
        return self._prompt_tokens + self._completion_tokens
