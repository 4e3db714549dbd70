"""Helpers for testing agent loops and rollout servers without a real TrainGate.

``create_mock_trainer_app`` is a small TrainGate stand-in (FastAPI): it answers completions with a
predictable script (the response ``id`` is the request's ``rollout_id``) and records completion callbacks
in a :class:`RolloutCompletionTracker`. Serve it with uvicorn on 127.0.0.1, or route the TrainGate
requests of ``httpx`` clients to it in-process with :func:`patch_httpx_for_mock_trainer` (other URLs
still go to the network).
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = [
    "CALCULATOR_KEYWORDS",
    "RolloutCompletionTracker",
    "create_mock_trainer_app",
    "fake_prompt_token_ids",
    "fake_token_ids",
    "patch_httpx_for_mock_trainer",
]

# A last user message containing one of these gets an add(a=5, b=3) tool call.
CALCULATOR_KEYWORDS = ("calculate", "add", "sum", "plus", "subtract", "multiply", "divide", "+")

# Called with the last message of the conversation (the established signature).
ToolCallGenerator = Callable[[dict[str, Any]], "list[dict[str, Any]] | None"]

# The paths of TrainGate that patch_httpx_for_mock_trainer routes to the mock.
_TRAINER_PATHS = ("/v1/chat/completions", "/v1/rollout/completed")


def fake_token_ids(text: str) -> list[int]:
    """One fake token id per character: ``0 .. len(text) - 1``.

    Example:
        >>> fake_token_ids("abc")
        [0, 1, 2]
    """
    return list(range(len(text or "")))


def fake_prompt_token_ids(messages: list[dict[str, Any]]) -> list[int]:
    """Ten fake prompt token ids per message (at least ten).

    Example:
        >>> len(fake_prompt_token_ids([{"role": "user", "content": "hi"}] * 3))
        30
    """
    return list(range(10 * max(1, len(messages))))


class RolloutCompletionTracker:
    """Completion callbacks received by the mock trainer, by rollout id and in arrival order (thread-safe).

    ``responses`` holds every callback body in arrival order and ``event`` is set by each one (the
    established shape); ``get`` / ``wait_for`` look one rollout up by id.

    Args:
        event: Set whenever a callback arrives; a new ``threading.Event`` when omitted.
        responses: The list callback bodies are appended to; a new list when omitted.

    Example:
        >>> tracker = RolloutCompletionTracker()
        >>> tracker.record({"rollout_id": "r1", "status": "COMPLETED"})
        >>> tracker.wait(timeout=1.0), tracker.responses[0]["status"], tracker.get("r1")["status"]
        (True, 'COMPLETED', 'COMPLETED')
    """

    def __init__(
        self, event: threading.Event | None = None, responses: list[dict[str, Any]] | None = None
    ) -> None:
        self._lock = threading.Condition()
        self.event = event if event is not None else threading.Event()
        self.responses: list[dict[str, Any]] = responses if responses is not None else []
        self.completed: dict[str, dict[str, Any]] = {}
        self.counts: dict[str, int] = {}

    def record(self, body: dict[str, Any]) -> None:
        """Stores one callback body (by id the latest wins; ``counts`` keeps how many arrived)."""
        rollout_id = str(body.get("rollout_id", ""))
        with self._lock:
            self.responses.append(body)
            self.completed[rollout_id] = body
            self.counts[rollout_id] = self.counts.get(rollout_id, 0) + 1
            self._lock.notify_all()
        self.event.set()

    def wait(self, timeout: float = 5.0) -> bool:
        """Blocks until a callback has arrived since the last :meth:`clear`; ``False`` on timeout."""
        return self.event.wait(timeout)

    def get(self, rollout_id: str) -> dict[str, Any] | None:
        """The callback body for a rollout, or ``None``."""
        with self._lock:
            return self.completed.get(rollout_id)

    def wait_for(self, rollout_id: str, timeout: float = 30.0) -> dict[str, Any]:
        """Blocks until the rollout's callback arrived.

        Raises:
            TimeoutError: No callback within ``timeout`` seconds.
        """
        with self._lock:
            if not self._lock.wait_for(lambda: rollout_id in self.completed, timeout=timeout):
                raise TimeoutError(f"no completion callback for rollout '{rollout_id}' within {timeout} s")
            return self.completed[rollout_id]

    async def wait_for_async(self, rollout_id: str, timeout: float = 30.0) -> dict[str, Any]:
        """Like :meth:`wait_for`, without blocking the event loop."""
        deadline = time.monotonic() + timeout
        while (body := self.get(rollout_id)) is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no completion callback for rollout '{rollout_id}' within {timeout} s")
            await asyncio.sleep(0.01)
        return body

    def clear(self) -> None:
        """Forgets every callback and resets ``event``."""
        with self._lock:
            self.responses.clear()
            self.completed.clear()
            self.counts.clear()
            self.event.clear()


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content.lower() if isinstance(content, str) else ""
    return ""


def _scripted_reply(messages: list[dict[str, Any]], generator: ToolCallGenerator | None) -> dict[str, Any]:
    last = messages[-1] if messages else {"role": "user", "content": ""}
    if generator is not None:
        calls = generator(last)
    elif last.get("role") == "user" and any(
        word in _last_user_text(messages) for word in CALCULATOR_KEYWORDS
    ):
        calls = [
            {
                "id": "call_mock_add",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 5, "b": 3}'},
            }
        ]
    else:
        calls = None
    if calls:
        return {"role": "assistant", "content": "I'll help you with that calculation.", "tool_calls": calls}
    if last.get("role") == "tool":
        return {"role": "assistant", "content": "The calculation is complete."}
    return {"role": "assistant", "content": "OK."}


def create_mock_trainer_app(
    tracker: RolloutCompletionTracker | None = None, tool_call_generator: ToolCallGenerator | None = None
) -> FastAPI:
    """Builds a mock TrainGate.

    Routes: ``POST /v1/chat/completions`` (a last user message with a calculator keyword: an
    ``add(a=5, b=3)`` tool call; after a tool message: "The calculation is complete."; otherwise "OK.";
    the response ``id`` is the request's ``rollout_id``), ``POST /v1/rollout/completed`` (recorded in
    ``tracker``), ``GET /v1/rollout/completed/{rollout_id}`` (``{}`` until it arrived) and ``GET /health``.

    Args:
        tracker: Where callbacks are recorded; a new one when omitted (``app.state.tracker``).
        tool_call_generator: Called with the conversation's last message; a non-empty list of tool calls
            it returns is sent with the reply (it replaces the calculator-keyword rule).

    Example:
        >>> app = create_mock_trainer_app()  # doctest: +SKIP
        >>> uvicorn.run(app, host="127.0.0.1", port=8080)  # doctest: +SKIP
    """
    try:
        from fastapi import FastAPI
        from fastapi.responses import JSONResponse
        from starlette.requests import Request
    except ImportError as exc:
        raise ImportError(
            f"FastAPI is required for create_mock_trainer_app() ({exc}): pip install 'osmosis-ai[server]'"
        ) from exc

    tracker = tracker if tracker is not None else RolloutCompletionTracker()
    app = FastAPI(title="Mock TrainGate", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.tracker = tracker

    # Plain Starlette routes: the handlers take the request positionally, whatever their annotations.
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        messages = body.get("messages") or []
        message = _scripted_reply(messages, tool_call_generator)
        text = message.get("content") or ""
        prompt_ids = fake_prompt_token_ids(messages)
        completion_ids = fake_token_ids(text)
        return JSONResponse(
            {
                "id": body.get("rollout_id") or f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "default"),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt_ids),
                    "completion_tokens": len(completion_ids),
                    "total_tokens": len(prompt_ids) + len(completion_ids),
                },
                "token_ids": completion_ids,
                "logprobs": [0.0] * len(completion_ids),
                "prompt_token_ids": prompt_ids,
            }
        )

    async def completed(request: Request) -> JSONResponse:
        body = await request.json()
        tracker.record(body)
        return JSONResponse({"status": "ok"})

    async def completed_one(request: Request) -> JSONResponse:
        rollout_id = request.path_params["rollout_id"]
        return JSONResponse(tracker.get(rollout_id) or {})  # {} until it arrived, as established

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "healthy", "service": "mock-trainer"})

    app.add_route("/v1/chat/completions", chat, methods=["POST"])
    app.add_route("/v1/rollout/completed", completed, methods=["POST"])
    app.add_route("/v1/rollout/completed/{rollout_id}", completed_one, methods=["GET"])
    app.add_route("/health", health, methods=["GET"])
    return app


def patch_httpx_for_mock_trainer(client: Any, monkeypatch: Any) -> None:
    """Routes TrainGate's requests of every ``httpx.AsyncClient`` created afterwards to a mock trainer.

    Requests to ``.../v1/chat/completions`` and ``.../v1/rollout/completed`` (any host) are answered by the
    mock in-process; every other URL goes where it would have gone (the client's own transport).

    Args:
        client: The mock trainer: a FastAPI/ASGI app, or anything with an ``.app`` attribute such as
            Starlette's ``TestClient``.
        monkeypatch: pytest's ``monkeypatch`` fixture (undone after the test).

    Example:
        >>> patch_httpx_for_mock_trainer(create_mock_trainer_app(), monkeypatch)  # doctest: +SKIP
    """
    import httpx

    mock = httpx.ASGITransport(app=getattr(client, "app", client))

    class _TrainerRoute(httpx.AsyncBaseTransport):
        def __init__(self, network: httpx.AsyncBaseTransport) -> None:
            self.network = network

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.path.endswith(_TRAINER_PATHS):
                return await mock.handle_async_request(request)
            return await self.network.handle_async_request(request)

        async def aclose(self) -> None:
            await self.network.aclose()

    original = httpx.AsyncClient.__init__

    def init(self: httpx.AsyncClient, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        # httpx picks a mounted transport (a proxy) before the default one: route both.
        self._transport = _TrainerRoute(self._transport)
        self._mounts = {p: t if t is None else _TrainerRoute(t) for p, t in self._mounts.items()}

    monkeypatch.setattr(httpx.AsyncClient, "__init__", init)
