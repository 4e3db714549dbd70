"""An OpenAI client whose chat-completions calls the rollout context answers in this process.

Under ``osmosis eval run`` a rollout context carries the run's LLM layer (``in_process``): an agent framework
that talks through the OpenAI SDK then skips the HTTP hop to the local bridge (same retries, token count and
errors). Anywhere else (the platform, ``create_rollout_server``) there is nothing in-process and the client
posts to the rollout's URL as before.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from osmosis_ai.llm.bridge import stream_events
from osmosis_ai.llm.retry import ProviderCallError
from osmosis_ai.rollout.context import RolloutContext, get_rollout_context

__all__ = ["client_arguments", "in_process_http_client", "rollout_for_client"]


def rollout_for_client(context: RolloutContext | None) -> RolloutContext:
    """``context``, else the ambient rollout context; refused when it has no chat-completions URL."""
    found = context or get_rollout_context()
    if found is None or not found.chat_completions_url:
        raise RuntimeError(
            "no rollout context with a chat-completions URL: create this inside AgentWorkflow.run "
            "(or set OSMOSIS_CHAT_COMPLETIONS_URL)"
        )
    return found


def client_arguments(rollout: RolloutContext) -> dict[str, Any]:
    """The OpenAI client's ``base_url`` and ``api_key`` for ``rollout`` (a local endpoint needs no key, but
    the OpenAI client insists on one)."""
    return {"base_url": rollout.chat_completions_url, "api_key": rollout.api_key or "unused"}


class _InProcessTransport(httpx.AsyncBaseTransport):
    """Answers ``POST .../chat/completions`` with :meth:`RolloutContext.chat_completions` (streamed or not)."""

    def __init__(self, rollout: RolloutContext) -> None:
        self._rollout = rollout

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
            return _error(
                404, f"only chat completions are answered in-process, not {request.url.path}", "not_found"
            )
        try:
            body = orjson.loads(await request.aread())
        except orjson.JSONDecodeError as exc:
            return _error(
                400, f"the body must be a chat-completions request ({exc})", "invalid_request_error"
            )
        try:
            reply = await self._rollout.chat_completions(body)
        except ProviderCallError as exc:
            return _error(exc.failure.status or 502, str(exc), exc.failure.kind)
        if body.get("stream"):
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=stream_events(reply, body)
            )
        return httpx.Response(200, headers={"content-type": "application/json"}, content=orjson.dumps(reply))


def _error(status: int, message: str, kind: str) -> httpx.Response:
    payload = {"error": {"message": message, "type": kind}}
    return httpx.Response(status, headers={"content-type": "application/json"}, content=orjson.dumps(payload))


def in_process_http_client(rollout: RolloutContext) -> Any:
    """An ``httpx.AsyncClient`` for the OpenAI SDK answering in this process, or None where there is no
    in-process LLM layer (then the SDK's own client posts to the rollout's URL).

    Example:
        >>> in_process_http_client(RolloutContext(chat_completions_url="http://127.0.0.1:1/v1")) is None
        True
    """
    if rollout.in_process is None:
        return None
    # Holds no connection, so a framework that never closes its client leaks nothing.
    return httpx.AsyncClient(transport=_InProcessTransport(rollout))
