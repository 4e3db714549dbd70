"""``POST {base_url}/chat/completions`` over pooled keep-alive connections, bodies in and out with orjson.

Any vLLM / SGLang / Ollama / llama.cpp server and every provider that speaks the OpenAI wire format goes
through here, on :mod:`osmosis_ai.llm.http1` (see there why not a general-purpose HTTP client).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from osmosis_ai.llm.http1 import ConnectFailed, Http1Pool
from osmosis_ai.llm.network import NetworkSettings, network_settings
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
    if isinstance(data, dict) and isinstance(detail := data.get("detail"), str):
        return detail[:300]
    return str(error or data)[:300]


class OpenAICompatTransport:
    """The direct transport; one instance per endpoint serves every concurrent call of a session."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        max_connections: int = 64,
        policy: RetryPolicy | None = None,
        network: NetworkSettings | None = None,
    ) -> None:
        if endpoint.base_url is None:
            raise ValueError("OpenAICompatTransport needs an endpoint with a base URL")
        self.endpoint = endpoint
        self.policy = policy or DEFAULT_POLICY
        self._headers: dict[str, str] = {}
        if endpoint.api_key:
            self._headers["Authorization"] = f"Bearer {endpoint.api_key}"
        self._base = endpoint.base_url
        self._url = endpoint.base_url.rstrip("/") + "/chat/completions"
        self._shown_url = safe_url(self._url)  # messages name the URL without its credentials
        self._max_connections = max_connections
        self._network = network if network is not None else network_settings()
        # One pool per event loop: connections and the pool's semaphore belong to the loop that made them,
        # and an agent isolated on its own loop (the run engine's LoopThread) calls from there directly.
        self._pools: dict[asyncio.AbstractEventLoop, Http1Pool] = {}

    #: Calls may be made from any event loop (ExternalLLMClient then sends without a hop between loops).
    loop_safe = True

    def _client(self) -> Http1Pool:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            for gone in [other for other in self._pools if other.is_closed()]:
                del self._pools[gone]  # an abandoned user loop: its sockets went with it
            pool = self._pools[loop] = Http1Pool(
                self._base, limit=self._max_connections, headers=self._headers, network=self._network
            )
        return pool

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
        # The first attempt straight from here: call_with_retries, its closure and _send are three frames
        # per model request that only a failure needs. It mirrors call_with_retries' own first attempt
        # (which a first_failure skips): keep the two alike.
        if stats is not None:
            stats.attempts += 1
        try:
            return self._parse(await self._post("/chat/completions", body))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            failed = exc
        return await call_with_retries(
            policy or self.policy,
            lambda: self._send(body),
            where=self._shown_url,
            stats=stats,
            first_failure=failed,
        )

    async def embed(
        self,
        texts: Sequence[str],
        *,
        stats: CallStats | None = None,
        policy: RetryPolicy | None = None,
    ) -> list[list[float]]:
        """Embeds ``texts`` with the endpoint's model (``POST /embeddings``), one vector per text, in order."""
        url = self.endpoint.base_url.rstrip("/") + "/embeddings"  # type: ignore[union-attr]
        body = orjson.dumps({"model": self.endpoint.wire_model, "input": list(texts)})

        async def send() -> list[list[float]]:
            content = await self._post("/embeddings", body)
            try:
                items = sorted(orjson.loads(content)["data"], key=lambda d: d.get("index", 0))
                vectors = [[float(x) for x in item["embedding"]] for item in items]
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
                detail = f"the reply is not an embeddings list ({type(exc).__name__}: {exc})"
                raise ProviderCallError(detail, Failure("bad_reply", detail)) from exc
            if len(vectors) != len(texts):
                detail = f"asked for {len(texts)} embedding(s), got {len(vectors)}"
                raise ProviderCallError(detail, Failure("bad_reply", detail))
            return vectors

        return await call_with_retries(policy or self.policy, send, where=url, stats=stats)

    async def _send(self, body: bytes) -> Reply:
        return self._parse(await self._post("/chat/completions", body))

    async def _post(self, path: str, body: bytes) -> bytes:
        timeout = self.endpoint.timeout
        try:
            response = await self._client().post(
                path, body, timeout=timeout, connect_timeout=min(timeout, 10.0)
            )
        except ConnectFailed as exc:
            detail = str(exc)
            raise ProviderCallError(
                f"Cannot connect to {safe_url(self.endpoint.base_url)}", Failure("connect", detail)
            ) from exc
        except (TimeoutError, asyncio.TimeoutError) as exc:  # distinct classes before Python 3.11
            detail = f"timed out after {timeout:g}s"
            raise ProviderCallError(detail, Failure("retryable", detail)) from exc
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            detail = f"connection failed: {type(exc).__name__}: {exc}"
            raise ProviderCallError(detail, Failure("retryable", detail)) from exc
        if response.status >= 300:
            failure = classify_status(response.status, _error_detail(response.body), response.headers)
            if failure.kind == "not_found":
                failure = Failure(
                    "not_found",
                    f"model '{self.endpoint.wire_model}' not found: {failure.detail}",
                    response.status,
                )
            raise ProviderCallError(failure.detail, failure)
        return response.body

    def _parse(self, content: bytes) -> Reply:
        try:
            data = orjson.loads(content)
            choice = data["choices"][0]
            message = choice["message"]
            # A copy without the null members; a plain copy (no comprehension's frame) when there is none.
            if type(message) is dict and None not in message.values():
                message = dict(message)
            else:
                message = {k: v for k, v in message.items() if v is not None}
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError) as exc:
            detail = f"the reply is not a chat completion ({type(exc).__name__}: {exc})"
            raise ProviderCallError(detail, Failure("bad_reply", detail)) from exc
        usage = data.get("usage") or {}
        counts = {
            "prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "completion_tokens": int(usage.get("completion_tokens") or 0),
        }
        # Positional: a frozen dataclass's __init__ by keyword cost half a microsecond more per reply.
        return Reply(message, counts, choice.get("finish_reason") or "stop", data)

    async def aclose(self) -> None:
        here = asyncio.get_running_loop()
        pools, self._pools = self._pools, {}
        for loop, pool in pools.items():
            if loop is here:
                await pool.aclose()
            elif not loop.is_closed() and loop.is_running():
                # Another loop's sockets are closed on that loop; a stuck loop is not waited for long.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        asyncio.wrap_future(asyncio.run_coroutine_threadsafe(pool.aclose(), loop)), 2
                    )
