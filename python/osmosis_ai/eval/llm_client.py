"""The LLM client local runs hand to agents (`ctx.chat`): one per run, sharing one connection pool.

Two transports behind one client:

* ``--base-url``: a direct OpenAI-compatible ``POST {base}/chat/completions`` over a pooled aiohttp client
  with orjson. Any vLLM / SGLang / Ollama / llama.cpp server works, model names with ``/`` included
  (the established harness handed ``org/model`` to LiteLLM, which took ``org`` for a provider).
* a provider model (``openai/gpt-4o-mini``, ``anthropic/claude-...``): LiteLLM, imported on first use.

Failures that every further call would repeat (bad key, unknown model, nothing listening) raise
:class:`SystemicProviderError` so the runner stops early instead of burning through the dataset.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from osmosis_ai.errors import ProviderError, SystemicProviderError
from osmosis_ai.rollout.core import CompletionsResult
from osmosis_ai.rollout.schemas import RolloutMetrics

__all__ = ["ExternalLLMClient", "LLMEndpoint", "OpenAICompatTransport", "ReplyParts"]

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_SYSTEMIC_STATUS = frozenset({401, 402, 403, 404})
_MAX_ATTEMPTS = 4


@dataclass(frozen=True)
class ReplyParts:
    """A transport's answer: the assistant message, token usage and finish reason."""

    message: dict[str, Any]
    usage: dict[str, int]
    finish_reason: str


@dataclass(frozen=True)
class LLMEndpoint:
    """Where runs send their chat requests.

    Attributes:
        model: The model as the user typed it (shown in reports and written to results).
        base_url: An OpenAI-compatible base URL (``http://127.0.0.1:8080/v1``), or None for LiteLLM.
        api_key: The key; never printed or written to results.
        timeout: Seconds one request may take.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 120.0

    @property
    def wire_model(self) -> str:
        """The model name sent to an OpenAI-compatible server (a leading ``openai/`` routing prefix dropped)."""
        return self.model.removeprefix("openai/") if self.base_url else self.model

    @property
    def litellm_model(self) -> str:
        """The LiteLLM model string; a bare name is an OpenAI model, as in the established harness."""
        return self.model if "/" in self.model else f"openai/{self.model}"


def _retry_after_seconds(headers: Mapping[str, str], attempt: int) -> float:
    raw = headers.get("retry-after")
    if raw:
        try:
            return min(max(float(raw), 0.0), 30.0)
        except ValueError:
            pass
    return min(0.5 * 2**attempt, 8.0)


def _error_detail(body: bytes) -> str:
    import orjson

    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body.decode("utf-8", "replace").strip()[:200]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or error)[:200]
    return str(error or data)[:200]


class OpenAICompatTransport:
    """``POST {base_url}/chat/completions`` with bounded retries on 429 / 5xx / timeouts.

    One instance serves every run of an eval, over one aiohttp connection pool sized to the concurrency
    (httpx's pool scan cost more CPU per request than the rest of the harness at 64 connections).
    """

    def __init__(self, endpoint: LLMEndpoint, *, max_connections: int = 64) -> None:
        self.endpoint = endpoint
        self._headers = {"content-type": "application/json"}
        key = endpoint.api_key or os.environ.get("OPENAI_API_KEY")
        if key:
            self._headers["authorization"] = f"Bearer {key}"
        self._url = endpoint.base_url.rstrip("/") + "/chat/completions"  # type: ignore[union-attr]
        self._max_connections = max_connections
        self._session: Any = None

    def _client(self) -> Any:
        # Created lazily: an aiohttp session must be made inside the running event loop.
        if self._session is None:
            import aiohttp

            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(
                    total=self.endpoint.timeout, connect=min(self.endpoint.timeout, 10.0)
                ),
                connector=aiohttp.TCPConnector(limit=self._max_connections),
            )
        return self._session

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: Mapping[str, Any],
    ) -> ReplyParts:
        import aiohttp
        import orjson

        payload: dict[str, Any] = {"model": self.endpoint.wire_model, "messages": list(messages), **params}
        if tools:
            payload["tools"] = tools
        body = orjson.dumps(payload)
        session = self._client()
        for attempt in range(_MAX_ATTEMPTS):
            try:
                async with session.post(self._url, data=body) as response:
                    status, content, headers = response.status, await response.read(), response.headers
            except aiohttp.ClientConnectorError as exc:
                raise SystemicProviderError(f"Cannot connect to {self.endpoint.base_url}: {exc}") from exc
            except (TimeoutError, asyncio.TimeoutError) as exc:  # distinct classes before Python 3.11
                if attempt == _MAX_ATTEMPTS - 1:
                    raise ProviderError(
                        f"Request to {self.endpoint.base_url} timed out after {self.endpoint.timeout:g}s "
                        f"({_MAX_ATTEMPTS} attempts)"
                    ) from exc
                await asyncio.sleep(min(0.5 * 2**attempt, 8.0))
                continue
            except aiohttp.ClientError as exc:
                raise ProviderError(
                    f"Request to {self.endpoint.base_url} failed: {type(exc).__name__}: {exc}"
                ) from exc
            if status < 300:
                return self._parse(content)
            detail = _error_detail(content)
            if status in _SYSTEMIC_STATUS:
                raise SystemicProviderError(
                    f"{self.endpoint.base_url} answered HTTP {status} for model '{self.endpoint.wire_model}': {detail}"
                )
            if status not in _RETRYABLE_STATUS or attempt == _MAX_ATTEMPTS - 1:
                raise ProviderError(f"{self.endpoint.base_url} answered HTTP {status}: {detail}")
            await asyncio.sleep(_retry_after_seconds(headers, attempt))
        raise ProviderError("unreachable: retries exhausted")  # pragma: no cover

    def _parse(self, content: bytes) -> ReplyParts:
        import orjson

        try:
            data = orjson.loads(content)
            choice = data["choices"][0]
            message = {k: v for k, v in choice["message"].items() if v is not None}
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ProviderError(
                f"{self.endpoint.base_url} sent a reply that is not a chat completion: {exc}"
            ) from exc
        usage = data.get("usage") or {}
        return ReplyParts(
            message=message,
            usage={
                "prompt_tokens": int(usage.get("prompt_tokens") or 0),
                "completion_tokens": int(usage.get("completion_tokens") or 0),
            },
            finish_reason=choice.get("finish_reason") or "stop",
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class LiteLLMTransport:
    """Provider models through LiteLLM (imported on first use; its network cost-map fetch disabled)."""

    def __init__(self, endpoint: LLMEndpoint) -> None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm
        except ImportError as exc:
            raise SystemicProviderError(
                "LiteLLM is required for provider models: pip install litellm (or pass --base-url for an "
                "OpenAI-compatible server)"
            ) from exc
        self.endpoint = endpoint
        self._litellm = litellm

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: Mapping[str, Any],
    ) -> ReplyParts:
        litellm = self._litellm
        kwargs: dict[str, Any] = {"model": self.endpoint.litellm_model, "messages": list(messages), **params}
        if self.endpoint.api_key:
            kwargs["api_key"] = self.endpoint.api_key
        if tools:
            kwargs["tools"] = tools
        kwargs.setdefault("timeout", self.endpoint.timeout)
        kwargs.setdefault("num_retries", 2)
        try:
            response = await litellm.acompletion(**kwargs)
        except (litellm.AuthenticationError, litellm.NotFoundError, litellm.BudgetExceededError) as exc:
            raise SystemicProviderError(f"{type(exc).__name__}: {_trim(exc)}") from exc
        except litellm.APIConnectionError as exc:
            raise SystemicProviderError(f"Cannot reach the provider: {_trim(exc)}") from exc
        except Exception as exc:
            raise ProviderError(f"{type(exc).__name__}: {_trim(exc)}") from exc
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        return ReplyParts(
            message=choice.message.model_dump(exclude_none=True),
            usage={
                "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
                "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
            },
            finish_reason=choice.finish_reason or "stop",
        )

    async def aclose(self) -> None:
        closer = getattr(self._litellm, "close_litellm_async_clients", None)
        if closer is not None:
            await closer()


def _trim(exc: Exception) -> str:
    text = str(exc).strip()
    if text.startswith("litellm."):
        text = text.split(": ", 1)[-1]
    return text[:200]


def make_transport(
    endpoint: LLMEndpoint, *, max_connections: int = 64
) -> OpenAICompatTransport | LiteLLMTransport:
    """The direct transport for a base URL, LiteLLM otherwise."""
    if endpoint.base_url:
        return OpenAICompatTransport(endpoint, max_connections=max_connections)
    return LiteLLMTransport(endpoint)


class ExternalLLMClient:
    """One run's LLM client: sends chats through a shared transport and counts calls, latency and tokens.

    Example:
        >>> client = ExternalLLMClient(transport)  # doctest: +SKIP
        >>> reply = await client.chat_completions([{"role": "user", "content": "hi"}])  # doctest: +SKIP
    """

    def __init__(self, transport: OpenAICompatTransport | LiteLLMTransport) -> None:
        self._transport = transport
        self._tools: list[dict[str, Any]] | None = None
        self.reset_metrics()

    @property
    def display_name(self) -> str:
        return self._transport.endpoint.model

    def set_tools(self, tools: Sequence[Any]) -> None:
        """Offers ``tools`` (pydantic tool schemas or plain dicts) on every call; empty clears them."""
        dumped = [t.model_dump(exclude_none=True) if hasattr(t, "model_dump") else dict(t) for t in tools]
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
            reply = await self._transport.complete(messages, self._tools, kwargs)
        finally:
            self._calls += 1
            self._latency_ms += (time.monotonic() - started) * 1000.0
        prompt, completion = reply.usage["prompt_tokens"], reply.usage["completion_tokens"]
        self._prompt_tokens += prompt
        self._completion_tokens += completion
        return CompletionsResult(
            message=reply.message,
            usage={
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
            finish_reason=reply.finish_reason,
        )

    def get_metrics(self) -> RolloutMetrics:
        return RolloutMetrics(
            llm_latency_ms=self._latency_ms,
            num_llm_calls=self._calls,
            prompt_tokens=self._prompt_tokens,
            response_tokens=self._completion_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self._prompt_tokens + self._completion_tokens
