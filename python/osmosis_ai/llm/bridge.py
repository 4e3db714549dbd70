"""A local OpenAI-compatible endpoint for 0.3 workflows, forwarding every call through this LLM layer.

A workflow is handed a chat-completions URL (as on the platform), not a client object. ``osmosis eval
run`` gives each rollout ``http://127.0.0.1:<port>/v1/rollouts/<rollout_id>`` (clients append
``/chat/completions``): the bridge checks the per-run bearer token, sends the request with the run's
:class:`~osmosis_ai.llm.transport.Transport` (one retry policy, one connection pool, provider keys that
never reach the workflow) and counts the tokens served per rollout, keeping each call's token counts (the
per-call metrics of the rollout's trajectory).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Coroutine, Mapping
from typing import Any

import orjson

from osmosis_ai.llm.http1_server import Http1Server, HttpReply, HttpRequest
from osmosis_ai.llm.retry import ProviderCallError, SystemicProviderCallError
from osmosis_ai.llm.transport import Reply, Transport

__all__ = ["LLMBridge", "reply_body", "split_request", "stream_events"]

# Request keys the transport sets itself (streaming's options with it); everything else (temperature, tools'
# choice...) passes through.
_OWN_KEYS = frozenset({"model", "messages", "tools", "stream", "stream_options"})
_ROUTE_PREFIX = "/v1/rollouts/"
_ROUTE_SUFFIX = "/chat/completions"


class LLMBridge:
    """Serves ``POST /v1/rollouts/{rollout_id}/chat/completions`` on 127.0.0.1 through ``transport``.

    Args:
        transport: Where the calls go (see :func:`osmosis_ai.llm.transport.make_transport`).
        token: The bearer token workflows must send (default: a new random one).
        port: The port to listen on (default: an ephemeral one).

    Example:
        >>> async def main(transport):  # doctest: +SKIP
        ...     async with LLMBridge(transport) as bridge:
        ...         url = bridge.url_for("r1")
    """

    def __init__(self, transport: Transport, *, token: str | None = None, port: int = 0) -> None:
        self.transport = transport
        self.requested_port = port
        self.token = token or secrets.token_hex(16)
        from osmosis_ai.redact import remember

        remember([self.token])  # the run's own bearer: masked wherever user code prints or logs it
        self.tokens_by_rollout: dict[str, int] = {}
        self.calls_by_rollout: dict[str, list[dict[str, int]]] = {}
        self.port: int | None = None
        # Set when a call failed in a way every further call would repeat (bad key, nothing listening).
        self.systemic_error: str | None = None
        self._server: Http1Server | None = None

    def url_for(self, rollout_id: str) -> str:
        """The base URL one rollout's workflow uses (append ``/chat/completions``)."""
        if self.port is None:
            raise RuntimeError("the bridge is not started")
        return f"http://127.0.0.1:{self.port}/v1/rollouts/{rollout_id}"

    def take_tokens(self, rollout_id: str) -> int:
        """The tokens served to ``rollout_id``; it is forgotten afterwards, calls included (memory stays
        bounded by work in flight)."""
        self.calls_by_rollout.pop(rollout_id, None)
        return self.tokens_by_rollout.pop(rollout_id, 0)

    def take_calls(self, rollout_id: str) -> list[dict[str, int]]:
        """The token counts (``prompt_tokens``, ``completion_tokens``) of each call served to ``rollout_id``
        so far, in order; later calls are counted afresh."""
        return self.calls_by_rollout.pop(rollout_id, [])

    async def start(self) -> LLMBridge:
        """Listens on 127.0.0.1, and adds ``127.0.0.1`` and ``localhost`` to this process's ``NO_PROXY``:
        workflows here (and the child processes they start) reach the bridge directly, whatever proxy the
        environment names for the rest of their traffic."""
        from osmosis_ai.llm.network import cover_loopback

        cover_loopback()
        self._server = await Http1Server(self._handle, port=self.requested_port).start()
        self.port = self._server.port
        return self

    async def aclose(self) -> None:
        if self._server is not None:
            await self._server.aclose()
            self._server = None

    async def __aenter__(self) -> LLMBridge:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _authorized(self, header: str | None) -> bool:
        scheme, _, value = (header or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), self.token.encode())

    async def complete(self, rollout_id: str, body: Mapping[str, Any], *, as_body: bool = False) -> Any:
        """Sends one chat-completions request for ``rollout_id`` through the transport; returns its Reply
        (``as_body``: the reply's ``chat.completion`` body, see :func:`reply_body`).

        The HTTP route and in-process callers (:meth:`chat_in_process`) share it: the same retries, the
        same token count per rollout, the same note of a failure every later call would repeat.
        """
        try:
            reply = await self.transport.complete(*split_request(body))
        except ProviderCallError as exc:
            if isinstance(exc, SystemicProviderCallError):
                self.systemic_error = str(exc)
            raise
        # The body is handed over as it is (the Reply is dropped here); the counts are copied, as a transport
        # may hand the body's own usage block as the Reply's and the workflow may edit its body.
        usage = reply.usage
        tokens = self.tokens_by_rollout
        tokens[rollout_id] = (
            tokens.get(rollout_id, 0) + usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        )
        calls = self.calls_by_rollout.get(rollout_id)
        if calls is None:
            self.calls_by_rollout[rollout_id] = [dict(usage)]
        else:
            calls.append(dict(usage))
        return reply_body(reply) if as_body else reply

    def chat_in_process(
        self, rollout_id: str, body: Mapping[str, Any]
    ) -> Coroutine[Any, Any, dict[str, Any]]:
        """:meth:`complete` as a ``chat.completion`` body, for a workflow in this process (no HTTP): awaited
        as it is (no coroutine of its own around it: the workflow's every wait passes through each one)."""
        return self.complete(rollout_id, body, as_body=True)

    async def _handle(self, request: HttpRequest) -> HttpReply:
        path = request.path.partition("?")[0]
        rollout_id = path[len(_ROUTE_PREFIX) : -len(_ROUTE_SUFFIX)]
        if (
            not (path.startswith(_ROUTE_PREFIX) and path.endswith(_ROUTE_SUFFIX))
            or not rollout_id
            or "/" in rollout_id
        ):
            return HttpReply.json_error(
                404, f"no route {path}; POST {_ROUTE_PREFIX}<rollout_id>{_ROUTE_SUFFIX}", "not_found"
            )
        if request.method != "POST":
            return HttpReply.json_error(
                405, f"{request.method} not allowed; use POST", "invalid_request_error"
            )
        if not self._authorized(request.headers.get("authorization")):
            return HttpReply.json_error(401, "invalid or missing bearer token", "authentication_error")
        try:
            body = orjson.loads(request.body)
        except orjson.JSONDecodeError as exc:
            body = exc
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            detail = body if isinstance(body, Exception) else "no 'messages' list"
            return HttpReply.json_error(
                400, f"the body must be a chat-completions request ({detail})", "invalid_request_error"
            )
        try:
            reply = await self.complete(rollout_id, body)
        except ProviderCallError as exc:
            return HttpReply.json_error(exc.failure.status or 502, str(exc), exc.failure.kind)
        if body.get("stream"):
            # The whole reply in one delta, as server-sent events with a known length (see stream_events).
            return HttpReply(200, stream_events(reply_body(reply), body), "text/event-stream")
        return HttpReply(200, orjson.dumps(reply_body(reply)))


def split_request(body: Mapping[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """``(messages, tools, params)`` of a chat-completions request, as a transport takes them.

    The transport sets the model and streaming itself; everything else (temperature, tool choice...) passes.
    """
    # Most requests carry only keys the transport sets (one C-level scan says so): no loop in Python.
    params = {} if _OWN_KEYS.issuperset(body) else {k: v for k, v in body.items() if k not in _OWN_KEYS}
    return body["messages"], body.get("tools"), params


def reply_body(reply: Reply) -> dict[str, Any]:
    """The standard ``chat.completion`` body of a transport's Reply."""
    # LiteLLM replies carry no raw wire body; build the standard shape from what the transport parsed.
    if reply.raw.get("choices"):
        return reply.raw
    usage = dict(reply.usage)
    usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    choice = {"index": 0, "message": reply.message, "finish_reason": reply.finish_reason}
    return {"object": "chat.completion", "choices": [choice], "usage": usage}


def stream_events(reply: Mapping[str, Any], request: Mapping[str, Any]) -> bytes:
    """A ``chat.completion`` body as the server-sent events a streaming client expects, ``[DONE]`` included.

    For clients that only stream (Strands): the model is asked without streaming (one retry policy, usage
    counted the same way) and the whole reply goes out in one delta, then the end (and the usage when
    ``request`` asked for it with ``stream_options.include_usage``).

    Example:
        >>> body = {"choices": [{"message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}]}
        >>> stream_events(body, {}).count(b"data: ")
        3
    """
    choice = reply["choices"][0]
    message = choice.get("message") or {}
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{**call, "index": i} for i, call in enumerate(message["tool_calls"])]
    base = {
        "id": reply.get("id", "chatcmpl-bridge"),
        "object": "chat.completion.chunk",
        "model": reply.get("model", ""),
    }
    finish = choice.get("finish_reason") or "stop"
    events = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
    ]
    if (request.get("stream_options") or {}).get("include_usage"):
        usage = dict(reply.get("usage") or {})
        prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        usage.update(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
        events.append({**base, "choices": [], "usage": usage})
    return b"".join(b"data: " + orjson.dumps(event) + b"\n\n" for event in events) + b"data: [DONE]\n\n"
