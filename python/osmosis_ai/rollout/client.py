"""``OsmosisLLMClient``: the agent's LLM client during training, talking to TrainGate over HTTP.

Calls TrainGate's ``/v1/chat/completions`` for every turn and reports the result once to
``/v1/rollout/completed``, retrying server errors, timeouts and transport failures with capped exponential
backoff. The server hands every rollout's client one shared ``httpx.AsyncClient`` so connections to the
trainer are pooled instead of opened per rollout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx

from osmosis_ai.errors import (
    OsmosisServerError,
    OsmosisTimeoutError,
    OsmosisTransportError,
    OsmosisValidationError,
)
from osmosis_ai.llm.retry import RetryLater, RetryPolicy, retry_after_from_headers, retry_async
from osmosis_ai.rollout.agent_loop import CompletionsResult
from osmosis_ai.rollout.messages import normalize_stop
from osmosis_ai.rollout.schemas import CompletionsRequest, RolloutMetrics, RolloutResponse, RolloutStatus

if TYPE_CHECKING:
    from osmosis_ai.rollout.settings import RolloutClientSettings, RolloutSettings

__all__ = ["OsmosisLLMClient", "create_http_client"]

logger = logging.getLogger(__name__)

# Statuses worth another attempt besides 5xx: the trainer asked us to slow down or timed out reading.
_RETRYABLE_4XX = frozenset({408, 429})


def create_http_client(settings: RolloutSettings, timeout_seconds: float | None = None) -> httpx.AsyncClient:
    """Builds the pooled HTTP client used to talk to TrainGate (proxies and certificates per llm/network.py)."""
    from osmosis_ai.llm.httpx_clients import async_http_client

    client_settings = settings.client
    return async_http_client(
        timeout=httpx.Timeout(timeout_seconds or client_settings.timeout_seconds, connect=10.0),
        limits=httpx.Limits(
            max_connections=client_settings.max_connections,
            max_keepalive_connections=client_settings.max_keepalive_connections,
        ),
        headers={"Content-Type": "application/json"},
    )


class OsmosisLLMClient:
    """The LLM client of one rollout, backed by TrainGate.

    Args:
        server_url: TrainGate's base URL (``RolloutRequest.server_url``).
        rollout_id: Sent with every completion so TrainGate can route it.
        api_key: Bearer token for TrainGate (``RolloutRequest.api_key``), if any.
        timeout_seconds: Per-request timeout; the settings' value when omitted.
        max_retries: Retries of a completion call (attempts = retries + 1).
        complete_rollout_retries: Retries of the completion callback.
        settings: Rollout settings (``RolloutSettings``), or only the client's
            (``RolloutClientSettings``, the established form); the process-wide ones when omitted.
        http_client: A shared ``httpx.AsyncClient`` to use (not closed by this client).

    Example:
        >>> async with OsmosisLLMClient("http://127.0.0.1:8080", "r1") as llm:  # doctest: +SKIP
        ...     reply = await llm.chat_completions([{"role": "user", "content": "hi"}])
    """

    def __init__(
        self,
        server_url: str,
        rollout_id: str,
        api_key: str | None = None,
        timeout_seconds: float | None = None,
        max_retries: int | None = None,
        complete_rollout_retries: int | None = None,
        settings: RolloutSettings | RolloutClientSettings | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        from osmosis_ai.rollout.settings import RolloutClientSettings, RolloutSettings, get_settings

        if settings is None:
            settings = get_settings()
        elif isinstance(settings, RolloutClientSettings):
            settings = RolloutSettings(client=settings)
        self.server_url = server_url.rstrip("/")
        self.rollout_id = rollout_id
        # Public in the established client; tests written for it read them.
        self.api_key = api_key
        self.timeout_seconds = settings.client.timeout_seconds if timeout_seconds is None else timeout_seconds
        self._settings = settings
        self._timeout = timeout_seconds
        self.max_retries = settings.client.max_retries if max_retries is None else max_retries
        self.complete_rollout_retries = (
            settings.client.complete_rollout_retries
            if complete_rollout_retries is None
            else complete_rollout_retries
        )
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = http_client
        self._owns_client = http_client is None
        self._metrics = RolloutMetrics()

    async def __aenter__(self) -> OsmosisLLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the HTTP client if this object created it."""
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = create_http_client(self._settings, self._timeout)
        return self._client

    def get_metrics(self) -> RolloutMetrics:
        """Returns a copy of the LLM latency, call and token counters."""
        return self._metrics.model_copy()

    def reset_metrics(self) -> None:
        """Zeroes the counters."""
        self._metrics = RolloutMetrics()

    def _policy(self, retries: int) -> RetryPolicy:
        client = self._settings.client
        return RetryPolicy(
            max_retries=retries, base_delay=client.retry_base_delay, max_delay=client.retry_max_delay
        )

    async def _with_retries(self, what: str, retries: int, call: Callable[[], Awaitable[Any]]) -> Any:
        # The LLM layer's retry driver and policy (backoff with jitter, Retry-After honoured); the
        # trainer's own error types are kept because users catch them.
        policy = self._policy(retries)
        attempts = 0

        async def attempt() -> Any:
            nonlocal attempts
            attempts += 1
            try:
                return await call()
            except (OsmosisServerError, OsmosisTimeoutError, OsmosisTransportError) as exc:
                raise RetryLater(exc, getattr(exc, "retry_after", None)) from exc

        def waited(error: BaseException, _seconds: float) -> None:
            logger.warning(
                "%s for rollout %s failed (attempt %d of %d): %s",
                what,
                self.rollout_id,
                attempts,
                policy.max_retries + 1,
                error,
            )

        return await retry_async(policy, attempt, on_wait=waited)

    async def _post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        url = f"{self.server_url}{path}"
        try:
            response = await self._http().post(url, json=body, headers=self._headers)
        except httpx.TimeoutException as exc:
            raise OsmosisTimeoutError(f"POST {url} timed out: {type(exc).__name__}") from exc
        except httpx.RequestError as exc:
            raise OsmosisTransportError(f"POST {url} failed: {type(exc).__name__}: {exc}") from exc
        status = response.status_code
        if 200 <= status < 300:
            return response
        text = response.text[:1000]
        if status >= 500 or status in _RETRYABLE_4XX:
            error = OsmosisServerError(f"POST {url} returned HTTP {status}: {text}", status)
            error.retry_after = retry_after_from_headers(response.headers)  # type: ignore[attr-defined]
            raise error
        raise OsmosisValidationError(f"POST {url} returned HTTP {status}: {text}", status)

    async def chat_completions(
        self,
        messages: list[dict[str, Any]],
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_tokens: int = 512,
        stop: Any = None,
        logprobs: bool = True,
        **kwargs: Any,
    ) -> CompletionsResult:
        """Asks TrainGate for the next assistant message, given the full history.

        Keyword arguments that are not completion fields (``tools`` for example) are not sent: TrainGate
        already has the tools from the init response.

        Raises:
            OsmosisValidationError: TrainGate rejected the request (4xx) or sent an unusable body.
            OsmosisServerError, OsmosisTimeoutError, OsmosisTransportError: Still failing after retries.
        """
        fields = {k: v for k, v in kwargs.items() if k in CompletionsRequest.model_fields}
        request = CompletionsRequest(
            messages=messages,
            rollout_id=self.rollout_id,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            stop=normalize_stop(stop),
            logprobs=logprobs,
            **fields,
        )
        body = request.model_dump(mode="json", exclude_none=True)
        started = time.monotonic()
        response = await self._with_retries(
            "chat completion", self.max_retries, lambda: self._post("/v1/chat/completions", body)
        )
        latency_ms = (time.monotonic() - started) * 1000.0
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise OsmosisValidationError(
                f"TrainGate's completion reply has no choices[0].message: {response.text[:300]}",
                response.status_code,
            ) from exc
        usage = data.get("usage") or {}
        metrics = self._metrics
        metrics.llm_latency_ms += latency_ms
        metrics.num_llm_calls += 1
        metrics.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        metrics.response_tokens += int(usage.get("completion_tokens") or 0)
        metrics.max_context_tokens = max(metrics.max_context_tokens, int(usage.get("total_tokens") or 0))
        return CompletionsResult(
            message=message,
            token_ids=data.get("token_ids") or [],
            logprobs=data.get("logprobs") or [],
            usage=usage,
            finish_reason=choice.get("finish_reason") or "stop",
        )

    async def complete_rollout(
        self,
        status: str | RolloutStatus,
        final_messages: list[dict[str, Any]],
        finish_reason: str = "stop",
        error_message: str | None = None,
        metrics: RolloutMetrics | None = None,
        reward: float | None = None,
        extra_fields: dict[str, Any] | None = None,
    ) -> None:
        """Reports the rollout's result to TrainGate's ``/v1/rollout/completed`` (any 2xx is success).

        Raises:
            ValueError: ``status`` is not ``COMPLETED`` or ``ERROR``.
            OsmosisValidationError: TrainGate rejected the result (4xx, not retried).
            OsmosisServerError, OsmosisTimeoutError, OsmosisTransportError: Still failing after retries.
        """
        body = self.response_body(
            status, final_messages, finish_reason, error_message, metrics, reward, extra_fields
        )
        await self.send_response(body)

    def response_body(
        self,
        status: str | RolloutStatus,
        final_messages: list[dict[str, Any]],
        finish_reason: str = "stop",
        error_message: str | None = None,
        metrics: RolloutMetrics | None = None,
        reward: float | None = None,
        extra_fields: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Validates a result and returns the JSON body of ``/v1/rollout/completed``.

        Raises:
            ValueError: A field does not fit :class:`RolloutResponse` or is not JSON-serialisable.
        """
        return RolloutResponse(
            rollout_id=self.rollout_id,
            status=RolloutStatus(status),
            final_messages=final_messages,
            finish_reason=finish_reason,
            error_message=error_message,
            reward=reward,
            metrics=metrics if metrics is not None else self.get_metrics(),
            extra_fields=extra_fields or {},
        ).model_dump(mode="json", exclude_none=True)

    async def send_response(self, body: dict[str, Any]) -> None:
        """Posts a body from :meth:`response_body` to ``/v1/rollout/completed``, with retries."""
        await self._with_retries(
            "completion callback",
            self.complete_rollout_retries,
            lambda: self._post("/v1/rollout/completed", body),
        )
