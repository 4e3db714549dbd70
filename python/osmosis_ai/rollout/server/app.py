"""``create_app``: the FastAPI application TrainGate talks to during training.

Endpoints: ``GET /health`` (open), ``GET /platform/health`` and ``GET /v1/rollout/status/{key}``
(bearer), ``POST /v1/rollout/init`` (bearer when the app has an API key). Authentication is checked
before the body is read, so an unauthenticated caller learns nothing about the schema.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError as PydanticValidationError

from osmosis_ai.errors import ToolValidationError
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop
from osmosis_ai.rollout.schemas import InitResponse, RolloutRequest
from osmosis_ai.rollout.server.auth import key_matches
from osmosis_ai.rollout.server.limits import BodyTimeout, BodyTooLarge, read_limited_body
from osmosis_ai.rollout.server.state import AppState, RolloutRecord, logger
from osmosis_ai.rollout.tools import tool_to_dict, validate_tools

try:
    from fastapi import FastAPI, Request, Response
    from fastapi.responses import JSONResponse
except ImportError as exc:  # pragma: no cover - depends on the installation
    from osmosis_ai.extras import missing_extra

    raise (missing_extra(exc, "The rollout server") or exc) from exc

if TYPE_CHECKING:
    from osmosis_ai.rollout.settings import RolloutSettings

__all__ = ["create_app"]

_UNAUTHORIZED = b'{"detail":"Invalid or missing API key"}'
_SHUTTING_DOWN = b'{"detail":"the rollout server is shutting down"}'


def create_app(
    agent_loop: RolloutAgentLoop,
    max_concurrent: int | None = None,
    record_ttl_seconds: float | None = None,
    settings: RolloutSettings | None = None,
    credentials: Any = None,
    server_host: str | None = None,
    server_port: int | None = None,
    api_key: str | None = None,
    debug_dir: str | None = None,
    on_startup: Callable[[], Awaitable[None]] | None = None,
    on_shutdown: Callable[[], Awaitable[None]] | None = None,
) -> FastAPI:
    """Builds the rollout server for one agent loop.

    Args:
        agent_loop: The agent loop instance to serve.
        max_concurrent: Rollouts running at once (default: settings, 100).
        record_ttl_seconds: How long finished rollouts are remembered for idempotency (default 3600).
        settings: Rollout settings; the process-wide ones when omitted.
        credentials: A platform login (``osmosis_ai.platform.auth.load_credentials()``); with
            ``server_host`` and ``server_port`` the server registers with that platform once it is up.
        server_host: Host the platform should reach the server at (a wildcard: this machine's address).
        server_port: Port the server listens on.
        api_key: The key TrainGate must send (``Authorization: Bearer <key>``, or the bare key); ``None``
            disables auth.
        debug_dir: Directory for per-rollout ``ctx.log_event`` traces.
        on_startup: Awaited once when the server starts.
        on_shutdown: Awaited once when the server stops, after in-flight rollouts are settled.

    Returns:
        The FastAPI application (serve it with uvicorn).

    Raises:
        ImportError: FastAPI is not installed (``pip install 'osmosis-ai[server]'``).
        TypeError: ``credentials`` is not a login (it has no ``token``).

    Example:
        >>> app = create_app(MyAgentLoop(), api_key="secret")  # doctest: +SKIP
        >>> uvicorn.run(app, host="127.0.0.1", port=9000)  # doctest: +SKIP
    """
    register = _registration(credentials, server_host, server_port, agent_loop.name, api_key)
    if settings is None:
        from osmosis_ai.rollout.settings import get_settings

        settings = get_settings()
    state = AppState(agent_loop, settings, max_concurrent, record_ttl_seconds, debug_dir)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await state.start()
        if on_startup is not None:
            await on_startup()
        if register is not None:
            register()
        try:
            yield
        finally:
            await state.stop()
            if on_shutdown is not None:
                await on_shutdown()

    app = FastAPI(
        title=f"Osmosis RolloutServer ({agent_loop.name})",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.rollout = state
    app.state.head_check = _head_check(api_key)
    _add_routes(app, state, api_key)
    return app


def _head_check(api_key: str | None) -> Callable[[dict[str, Any]], str]:
    """How ``osmosis serve``'s connection gate judges a request from its head alone: ``"trusted"`` (the
    right key, or auth off), ``"open"`` (``GET /health``) or ``"refused"`` (answered, then closed)."""

    def check(scope: dict[str, Any]) -> str:
        if api_key is None:
            return "trusted"
        header = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), None)
        if header is not None and key_matches(api_key, header.decode("latin-1")):
            return "trusted"
        if scope.get("method") in ("GET", "HEAD") and scope.get("path") == "/health":
            return "open"
        return "refused"

    return check


def _registration(
    credentials: Any, host: str | None, port: int | None, name: str, api_key: str | None
) -> Callable[[], Any] | None:
    """What registers the server with the platform once it is up (as ``osmosis serve`` does), or None."""
    if credentials is None:
        return None
    if not isinstance(getattr(credentials, "token", None), str):
        raise TypeError(
            "create_app(credentials=...) takes a platform login such as "
            f"osmosis_ai.platform.auth.load_credentials(), got {type(credentials).__name__}"
        )
    if host is None or port is None:
        logger.warning("credentials given without server_host and server_port: not registering")
        return None
    platform_url = getattr(credentials, "platform_url", None)
    if not platform_url:
        from osmosis_ai.platform.settings import resolve_settings

        platform_url = resolve_settings(None).url
    from osmosis_ai.rollout.serve import register_when_up

    return lambda: register_when_up((platform_url, credentials), host, port, name, api_key)


def _json(body: bytes | dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response:
    if isinstance(body, bytes):
        return Response(body, status_code=status, media_type="application/json", headers=headers)
    return JSONResponse(body, status_code=status, headers=headers)


def _add_routes(app: FastAPI, state: AppState, api_key: str | None) -> None:
    def health_body() -> dict[str, Any]:
        counts = state.counts()
        return {
            "status": "healthy" if state.accepting else "shutting_down",
            "agent_loop": state.agent_loop.name,
            "active_rollouts": counts["queued"] + counts["running"] + counts["reporting"],
            "completed_rollouts": counts["completed"] + counts["callback_failed"] + counts["cancelled"],
        }

    def denied(request: Request) -> Response | None:
        if api_key is None or key_matches(api_key, request.headers.get("authorization")):
            return None
        # Closed after the answer: a refused client's body is never read.
        return _json(_UNAUTHORIZED, 401, {"WWW-Authenticate": "Bearer", "Connection": "close"})

    @app.get("/health")
    async def health() -> Response:
        return _json(health_body())

    @app.get("/platform/health")
    async def platform_health(request: Request) -> Response:
        if api_key is None:
            return _json({"detail": "Not Found"}, 404)
        return denied(request) or _json(health_body())

    @app.get("/v1/rollout/status/{key}")
    async def rollout_status(key: str, request: Request) -> Response:
        refusal = denied(request)
        if refusal is not None:
            return refusal
        record = state.records.get(key)
        if record is None:
            return _json(
                {"detail": f"no rollout with id or idempotency key '{key}' (finished ones expire)"}, 404
            )
        return _json(record.summary())

    @app.post("/v1/rollout/init")
    async def init(request: Request) -> Response:
        refusal = denied(request)
        if refusal is not None:
            return refusal
        if not state.accepting:  # shutting down: refused before a byte of the body is read
            return _json(_SHUTTING_DOWN, 503, {"Retry-After": "5", "Connection": "close"})
        limits = state.settings.server
        try:
            body = await read_limited_body(
                request, limits.max_request_body_bytes, limits.body_read_timeout_seconds
            )
        except BodyTooLarge as exc:
            return _json({"detail": str(exc)}, 413, {"Connection": "close"})
        except BodyTimeout as exc:
            return _json({"detail": str(exc)}, 408, {"Connection": "close"})
        try:
            rollout_request = RolloutRequest.model_validate_json(body)
        except PydanticValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False, include_context=False)
            return _json({"detail": errors}, 422)
        return await _init(state, rollout_request)


async def _init(state: AppState, request: RolloutRequest) -> Response:
    if not state.accepting:  # again after the body was read: no rollout starts once shutdown began
        return _json(_SHUTTING_DOWN, 503, {"Retry-After": "5"})
    key = request.idempotency_key or request.rollout_id
    record = state.records.get(key)
    if record is None and state.counts()["queued"] >= state.settings.server.max_queued_rollouts:
        # Waiting rollouts cost memory and each would time out on TrainGate's side anyway.
        return _json(
            {"detail": "too many rollouts waiting for a slot; retry later"}, 429, {"Retry-After": "1"}
        )
    if record is not None:
        # A repeat (TrainGate retrying): same answer, nothing started.
        try:
            body = await asyncio.shield(record.init)
        except Exception as exc:
            return _json({"detail": f"get_tools failed: {type(exc).__name__}: {exc}"}, 500)
        return _json(body, 202)
    record = RolloutRecord(
        key=key, rollout_id=request.rollout_id, init=asyncio.get_running_loop().create_future()
    )
    state.add(record)
    try:
        tools = state.agent_loop.get_tools(request)
        validate_tools(tools)
    except Exception as exc:
        # Forget the key so TrainGate's retry can succeed once the agent is fixed or the fault passes.
        state.drop(key)
        record.init.set_exception(exc)
        record.init.exception()  # retrieved: waiters get it, the loop does not warn
        if not isinstance(exc, ToolValidationError):
            logger.exception("rollout %s: get_tools raised", request.rollout_id)
        return _json({"detail": f"get_tools failed: {type(exc).__name__}: {exc}"}, 500)
    tools = list(tools)
    body = (
        InitResponse(rollout_id=request.rollout_id, tools=[tool_to_dict(t) for t in tools])
        .model_dump_json(exclude_none=True)
        .encode()
    )
    record.init.set_result(body)
    state.start_rollout(record, request, tools)
    return _json(body, 202)
