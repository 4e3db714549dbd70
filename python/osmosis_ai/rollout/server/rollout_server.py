"""``create_rollout_server(backend)``: the 0.3 rollout HTTP protocol over an :class:`ExecutionBackend`.

Routes: ``GET /health`` (open), ``POST /rollout`` (202, scheduled before answering; 429 + Retry-After when
the backend has no capacity), ``GET /rollout/{id}/status``, ``POST /rollout/cancel``. A finished rollout is
archived (best effort) under the backend's artifact root: ``<id>/trajectory.json``, an ATIF document (unless
the sample's ``trajectory_messages`` is None; a ``trajectory`` report in a callback's answer adds per-call
metrics) and ``<id>/diagnostics.json`` (the backend's diagnostics, when any). As 0.3's, the server checks
no key unless given one (``auth=ControllerAuth(api_key=...)``: then every route but ``/health`` needs
``Authorization: Bearer <key>``, checked before the body is read). Results go back through the request's
completion and grader callback URLs (with the controller key as bearer), retried on transport errors, 429
and 5xx with the package's one :class:`~osmosis_ai.llm.retry.RetryPolicy`, over a client that follows the
proxy and certificate settings (:mod:`osmosis_ai.llm.httpx_clients`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from pydantic import ValidationError

from osmosis_ai.llm.retry import (
    RETRYABLE_STATUS,
    RetryLater,
    RetryPolicy,
    retry_after_from_headers,
    retry_async,
)
from osmosis_ai.redact import safe_url
from osmosis_ai.rollout.backend.base import ExecutionBackend
from osmosis_ai.rollout.context import RolloutContext
from osmosis_ai.rollout.sample import ExecutionRequest, ExecutionResult, RolloutStatus

# app.py turns a missing FastAPI into an install hint.
from osmosis_ai.rollout.server.app import _json
from osmosis_ai.rollout.server.auth import ControllerAuth
from osmosis_ai.rollout.server.protocol import CancelRequest, RolloutInitRequest
from osmosis_ai.rollout.trajectory import (
    CallReport,
    default_artifact_root,
    report_from_response,
    save_trajectory,
)

__all__ = ["ControllerAuth", "create_rollout_server"]

logger = logging.getLogger("osmosis_ai.rollout.server")
INSTANCE_ENV = "_OSMOSIS_ROLLOUT_INSTANCE_ID"
_UNAUTHORIZED = b'{"detail":"Invalid or missing API key"}'
# 409 answers "already reported": another attempt cannot change it.
_RETRY_STATUSES = RETRYABLE_STATUS - {409}
CALLBACK_RETRY = RetryPolicy(max_retries=4, base_delay=0.5, max_delay=8.0, max_retry_after=60.0)
_FINISHED_KEPT = 10_000  # finished rollouts whose status stays queryable (memory stays bounded)


class _Rollouts:
    """The server's rollouts: running tasks (for cancel) and recent statuses (for status queries)."""

    def __init__(self) -> None:
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.status: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def set(self, rollout_id: str, status: RolloutStatus, **fields: Any) -> None:
        self.status[rollout_id] = {"rollout_id": rollout_id, "status": status.value, **fields}
        self.status.move_to_end(rollout_id)
        while len(self.status) > _FINISHED_KEPT + len(self.tasks):
            self.status.popitem(last=False)


async def _post(http: Any, url: str, body: dict[str, Any], auth: ControllerAuth) -> Any:
    """POSTs a callback, retried per the package's one policy on transport errors, 429 and 5xx
    (``Retry-After`` honoured); a callback still undelivered is logged, never raised.

    Returns the answer (None when none came): it may carry a ``trajectory`` report for the archive.
    """
    import httpx

    headers = auth.as_bearer_headers() or {}
    shown = safe_url(url)
    attempts = 0

    async def attempt() -> Any:
        nonlocal attempts
        attempts += 1
        try:
            response = await http.post(url, json=body, headers=headers)
        except httpx.TransportError as exc:
            logger.warning("callback %s failed (%s); attempt %d", shown, type(exc).__name__, attempts)
            raise RetryLater(exc) from None
        if response.status_code in _RETRY_STATUSES:
            error = RuntimeError(f"HTTP {response.status_code}")
            raise RetryLater(error, retry_after_from_headers(response.headers))
        return response

    try:
        return await retry_async(CALLBACK_RETRY, attempt)
    except Exception as exc:
        logger.error("callback %s was not delivered after %d attempts (%s)", shown, attempts, exc)
        return None


def _sample_body(result: ExecutionResult) -> dict[str, Any] | None:
    if result.sample is None:
        return None
    sample = result.sample.json_safe_copy().model_dump(mode="json", exclude={"trajectory_messages"})
    if result.status is not RolloutStatus.SUCCESS or sample.get("remove_sample"):
        sample["reward"] = None  # a reward only counts from a successful, kept sample
    return sample


def _category(result: ExecutionResult) -> str | None:
    return result.err_category.value if result.err_category is not None else None


async def _run(
    backend: ExecutionBackend, body: RolloutInitRequest, rollout_id: str, http: Any, rollouts: _Rollouts
) -> None:
    controller = ControllerAuth(api_key=body.controller_api_key)
    posted = {"completion": False, "grader": False}
    # The latest result reported that has a sample (else the latest), and the controller's latest report:
    # what the archive is built from at the end.
    last: list[ExecutionResult] = []
    report: list[CallReport] = []

    def keep(result: ExecutionResult) -> None:
        if not last or result.sample is not None:
            last[:] = [result]

    def note(response: Any) -> None:
        if (found := report_from_response(response)) is not None:
            report[:] = [found]

    async def completed(result: ExecutionResult) -> None:
        posted["completion"] = True
        keep(result)
        rollouts.set(
            rollout_id,
            RolloutStatus.GRADING if body.grader_callback_url else result.status,
            err_message=result.err_message,
        )
        note(await _post(http, body.completion_callback_url, {
            "status": result.status.value, "rollout_id": rollout_id, "extra_fields": None,
            "err_message": result.err_message, "err_category": _category(result),
        }, controller))  # fmt: skip

    async def graded(result: ExecutionResult) -> None:
        posted["grader"] = True
        keep(result)
        sample = _sample_body(result)
        ok = result.status is RolloutStatus.SUCCESS
        rollouts.set(
            rollout_id,
            RolloutStatus.SUCCESS if ok else RolloutStatus.FAILURE,
            reward=sample.get("reward") if sample else None,
            err_message=result.err_message,
        )
        note(await _post(http, body.grader_callback_url or "", {
            "status": "success" if ok else "failure", "rollout_id": rollout_id, "sample": sample,
            "err_message": result.err_message, "err_category": _category(result),
        }, controller))  # fmt: skip

    request = ExecutionRequest(
        id=rollout_id, prompt=body.initial_messages, label=body.label, metadata=body.metadata,
        agent_timeout_sec=body.agent_timeout_sec, grader_timeout_sec=body.grader_timeout_sec,
    )  # fmt: skip
    context = RolloutContext(
        chat_completions_url=body.chat_completions_url,
        api_key=body.llm_api_key or body.controller_api_key,
        rollout_id=rollout_id,
    )
    try:
        rollouts.set(rollout_id, RolloutStatus.RUNNING)
        with context:
            await backend.execute(request, completed, graded if body.grader_callback_url else None)
    except asyncio.CancelledError:
        rollouts.set(rollout_id, RolloutStatus.CANCELLED)
        raise
    except Exception:  # the backend itself failed: the controller must still hear of this rollout, once
        logger.exception("rollout %s failed inside the server", rollout_id)
        failure = ExecutionResult(status=RolloutStatus.FAILURE, err_message="Internal server error")
        if not posted["completion"]:
            await completed(failure)
        if body.grader_callback_url and not posted["grader"]:
            await graded(failure)
    finally:
        rollouts.tasks.pop(rollout_id, None)
        root = _artifact_root(backend)
        if last and root is not None:
            await save_trajectory(
                rollout_id=rollout_id, result=last[0], request_label=body.label,
                request_metadata=body.metadata, request_extra_fields=body.extra_fields,
                report=report[0] if report else None, artifact_root=root,
            )  # fmt: skip


async def _backend_status(backend: ExecutionBackend, rollout_id: str) -> dict[str, Any]:
    """The backend's word on a rollout this server has no record of (its hook may be sync or async)."""
    found = backend.rollout_status(rollout_id)
    if inspect.isawaitable(found):
        found = await found
    if isinstance(found, Mapping):
        return {"rollout_id": rollout_id, **found}
    return {"rollout_id": rollout_id, "status": found or RolloutStatus.UNKNOWN.value}


async def _backend_cancel(
    backend: ExecutionBackend, body: CancelRequest, dispositions: dict[str, str]
) -> dict[str, str]:
    """Asks the backend to cancel what this server does not run itself (ids it has not found, or a selector)."""
    missing = [i for i, d in dispositions.items() if d == "not_found"]
    if body.ids is not None and not missing:
        return {}
    answer = backend.cancel_rollouts(
        ids=missing if body.ids is not None else None, prefix=body.prefix, all=body.all
    )
    if inspect.isawaitable(answer):
        answer = await answer
    return {k: v for k, v in (answer or {}).items() if dispositions.get(k, "not_found") == "not_found"}


def _artifact_root(backend: ExecutionBackend) -> Path | None:
    if hasattr(backend, "artifact_root"):
        root: Path | None = backend.artifact_root  # a LocalBackend's (None: it keeps no files)
        return root
    return default_artifact_root()


def create_rollout_server(
    backend: ExecutionBackend,
    lifespan: Callable[[Any], contextlib.AbstractAsyncContextManager[Any]] | None = None,
    configure_logging: bool = True,
    *,
    auth: ControllerAuth | None = None,
) -> Any:
    """The FastAPI app speaking the 0.3 rollout protocol for ``backend`` (serve it with uvicorn).

    Args:
        backend: Runs the rollouts (e.g. ``LocalBackend(workflow=..., grader=...)``).
        lifespan: The app's own lifespan, run around the server's.
        configure_logging: Install basic INFO logging when the root logger has no handlers.
        auth: The key every caller must send (``ControllerAuth(api_key=...)``, or
            :meth:`ControllerAuth.from_environment`); default none, as 0.3: the platform's controller sends
            no key to a user's server.

    Example:
        >>> app = create_rollout_server(LocalBackend(workflow=MyWorkflow, grader=MyGrader))  # doctest: +SKIP
        >>> uvicorn.run(app, host="127.0.0.1", port=8000)  # doctest: +SKIP
    """
    if configure_logging and not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO)
    auth = auth or ControllerAuth()
    if auth.api_key is None:
        logger.info(
            "rollout server: callers need no key (pass auth=ControllerAuth(api_key=...) to require one)"
        )
    rollouts = _Rollouts()
    holder: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def _lifespan(app: Any) -> AsyncIterator[None]:
        from osmosis_ai.llm.httpx_clients import async_http_client

        holder["http"] = async_http_client(timeout=10.0)
        try:
            if lifespan is not None:
                async with lifespan(app):
                    yield
            else:
                yield
        finally:
            tasks = list(rollouts.tasks.values())
            if tasks:
                _, pending = await asyncio.wait(tasks, timeout=10.0)  # drain, then cancel what is left
                for task in pending:
                    task.cancel()
            await holder["http"].aclose()

    app = FastAPI(
        title="Osmosis rollout server", lifespan=_lifespan, docs_url=None, redoc_url=None, openapi_url=None
    )

    def denied(request: Request) -> Response | None:
        if auth.allows(request.headers.get("authorization")):
            return None
        return _json(_UNAUTHORIZED, 401, {"WWW-Authenticate": "Bearer"})

    async def parse(request: Request, model: Any) -> Any:
        try:
            return model.model_validate_json(await request.body())
        except ValidationError as exc:
            return _json({"detail": exc.errors(include_url=False, include_context=False)}, 422)

    @app.get("/health")
    async def health() -> Response:
        body = dict(backend.health())
        if os.environ.get(INSTANCE_ENV):
            body["instance_id"] = os.environ[INSTANCE_ENV]
        return _json(body)

    @app.post("/rollout")
    async def start(request: Request) -> Response:
        if (refusal := denied(request)) is not None:
            return refusal
        body = await parse(request, RolloutInitRequest)
        if isinstance(body, Response):
            return body
        if not backend.has_capacity():
            return _json({"detail": "at capacity"}, 429, {"Retry-After": "5"})
        rollout_id = body.rollout_id or secrets.token_hex(16)
        try:
            rollouts.set(rollout_id, RolloutStatus.QUEUED)
            rollouts.tasks[rollout_id] = asyncio.create_task(
                _run(backend, body, rollout_id, holder["http"], rollouts)
            )
        except Exception as exc:  # scheduling itself failed
            return _json({"detail": f"could not schedule the rollout: {exc}"}, 500)
        return _json({}, 202)

    @app.get("/rollout/{rollout_id}/status")
    async def status(rollout_id: str, request: Request) -> Response:
        if (refusal := denied(request)) is not None:
            return refusal
        body = rollouts.status.get(rollout_id) or await _backend_status(backend, rollout_id)
        return _json({k: v for k, v in body.items() if v is not None})

    @app.post("/rollout/cancel")
    async def cancel(request: Request) -> Response:
        if (refusal := denied(request)) is not None:
            return refusal
        body = await parse(request, CancelRequest)
        if isinstance(body, Response):
            return body
        if body.all:
            ids = list(rollouts.tasks)
        elif body.prefix is not None:
            ids = [i for i in rollouts.tasks if i.startswith(body.prefix)]
        else:
            ids = list(body.ids or [])
        dispositions: dict[str, str] = {}
        for rollout_id in ids:
            task = rollouts.tasks.get(rollout_id)
            if task is None:
                dispositions[rollout_id] = "not_found"
                continue
            queued = rollouts.status.get(rollout_id, {}).get("status") == RolloutStatus.QUEUED.value
            task.cancel()
            dispositions[rollout_id] = "cancelled_queued" if queued else "cancelled_running"
        dispositions.update(await _backend_cancel(backend, body, dispositions))
        return _json({"dispositions": dispositions})

    return app
