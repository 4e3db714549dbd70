"""``POST {base_url}/chat/completions`` over one pooled aiohttp session, bodies in and out with orjson.

Any vLLM / SGLang / Ollama / llama.cpp server and every provider that speaks the OpenAI wire format goes
through here. aiohttp rather than httpx: at 64 connections httpx's pool scan cost more CPU per request than
the rest of the eval harness together.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from osmosis_ai.llm.providers import Endpoint
from osmosis_ai.llm.retry import Failure, ProviderCallError, RetryPolicy, call_with_retries, classify_status
from osmosis_ai.llm.transport import DEFAULT_POLICY, Reply
from osmosis_ai.llm.usage import CallStats
from osmosis_ai.redact import safe_url

__all__ = ["OpenAICompatTransport"]


def _error_detail(body: bytes) -> str:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body.decode("utf-8", "replace").strip()[:300] or "(empty body)"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or error)[:300]
    if isinstance(data, dict) and isinstance(data.get("detail"), str):
        return data["detail"][:300]
    return str(error or data)[:300]


class OpenAICompatTransport:
    """The direct transport; one instance per endpoint serves every concurrent call of a session."""

    def __init__(
        self, endpoint: Endpoint, *, max_connections: int = 64, policy: RetryPolicy | None = None
    ) -> None:
        if endpoint.base_url is None:
            raise ValueError("OpenAICompatTransport needs an endpoint with a base URL")
        self.endpoint = endpoint
        self.policy = policy or DEFAULT_POLICY
        self._headers = {"content-type": "application/json"}
        if endpoint.api_key:
            self._headers["authorization"] = f"Bearer {endpoint.api_key}"
        self._url = endpoint.base_url.rstrip("/") + "/chat/completions"
        self._shown_url = safe_url(self._url)  # messages name the URL without its credentials
        self._max_connections = max_connections
        self._session: Any = None

    def _client(self) -> Any:
        # Created lazily: an aiohttp session must be made inside the running event loop.
        if self._session is None:
            import aiohttp

            timeout = self.endpoint.timeout
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=timeout, connect=min(timeout, 10.0)),
                connector=aiohttp.TCPConnector(limit=self._max_connections),
            )
        return self._session

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        stats: CallStats | None = None,
        policy: RetryPolicy | None = None,
    ) -> Reply:
        payload: dict[str, Any] = {"model": self.endpoint.wire_model, "messages": list(messages)}
        if params:
            payload.update(params)
        if tools:
            payload["tools"] = list(tools)
        body = orjson.dumps(payload)
        return await call_with_retries(
            policy or self.policy, lambda: self._send(body), where=self._shown_url, stats=stats
        )

    async def _send(self, body: bytes) -> Reply:
        import aiohttp

        try:
            async with self._client().post(self._url, data=body) as response:
                status, content, headers = response.status, await response.read(), response.headers
        except aiohttp.ClientConnectorError as exc:
            raise ProviderCallError(
                f"Cannot connect to {safe_url(self.endpoint.base_url)}",
                Failure("connect", f"cannot connect ({exc})"),
            ) from exc
        except (TimeoutError, asyncio.TimeoutError) as exc:  # distinct classes before Python 3.11
            detail = f"timed out after {self.endpoint.timeout:g}s"
            raise ProviderCallError(detail, Failure("retryable", detail)) from exc
        except aiohttp.ClientError as exc:
            detail = f"{type(exc).__name__}: {exc}"
            raise ProviderCallError(detail, Failure("retryable", detail)) from exc
        if status >= 300:
            failure = classify_status(status, _error_detail(content), headers)
            if failure.kind == "not_found":
                failure = Failure(
                    "not_found", f"model '{self.endpoint.wire_model}' not found: {failure.detail}", status
                )
            raise ProviderCallError(failure.detail, failure)
        return self._parse(content)

    def _parse(self, content: bytes) -> Reply:
        try:
            data = orjson.loads(content)
            choice = data["choices"][0]
            message = {k: v for k, v in choice["message"].items() if v is not None}
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError) as exc:
            detail = f"the reply is not a chat completion ({type(exc).__name__}: {exc})"
            raise ProviderCallError(detail, Failure("bad_reply", detail)) from exc
        usage = data.get("usage") or {}
        return Reply(
            message=message,
            usage={
                "prompt_tokens": int(usage.get("prompt_tokens") or 0),
                "completion_tokens": int(usage.get("completion_tokens") or 0),
            },
            finish_reason=choice.get("finish_reason") or "stop",
            raw=data,
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
