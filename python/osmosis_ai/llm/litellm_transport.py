"""Provider models that need request translation (Anthropic, Gemini, Bedrock, ...) through LiteLLM.

LiteLLM is imported on first use (it takes seconds), with its network cost-map fetch and telemetry off.
Its own retries are disabled: :class:`~osmosis_ai.llm.retry.RetryPolicy` decides, so attempts, waits and
``Retry-After`` are visible in our accounting instead of hidden inside a library. It checks servers against
the certificate authorities of :func:`~osmosis_ai.llm.network.network_settings` (``SSL_CERT_FILE`` or
``SSL_CERT_DIR``), and picks proxies from the same variables with httpx's own rules, which ours copy.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from osmosis_ai.llm.network import NetworkSettings, network_settings
from osmosis_ai.llm.providers import Endpoint
from osmosis_ai.llm.retry import Failure, ProviderCallError, RetryPolicy, call_with_retries
from osmosis_ai.llm.transport import DEFAULT_POLICY, Reply
from osmosis_ai.llm.usage import CallStats

__all__ = ["LiteLLMTransport", "load_litellm"]

_LITELLM: ModuleType | None = None


def load_litellm() -> ModuleType:
    """Imports and configures LiteLLM once (quiet, offline cost map, no telemetry)."""
    global _LITELLM
    if _LITELLM is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_TELEMETRY", "False")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        # Pydantic serializer warnings from LiteLLM's response objects are noise to our users.
        warnings.filterwarnings("ignore", category=UserWarning, module="pydantic.main")
        _LITELLM = litellm
    return _LITELLM


def _to_dict(response: Any) -> dict[str, Any]:
    if isinstance(response, dict):
        return response
    dump = getattr(response, "model_dump", None)
    return dump() if callable(dump) else dict(response)


class LiteLLMTransport:
    """Calls ``litellm.acompletion`` for one endpoint, one attempt per call of the retry loop."""

    def __init__(
        self, endpoint: Endpoint, *, policy: RetryPolicy | None = None, network: NetworkSettings | None = None
    ) -> None:
        self.endpoint = endpoint
        self.policy = policy or DEFAULT_POLICY
        self._network = network if network is not None else network_settings()

    def _litellm(self) -> ModuleType:
        try:
            return load_litellm()
        except ImportError as exc:
            detail = (
                f"LiteLLM is required for provider '{self.endpoint.provider}' but could not be imported "
                f"({exc}); pip install litellm, or use an OpenAI-compatible --base-url"
            )
            raise ProviderCallError(detail, Failure("fatal", detail)) from exc

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        stats: CallStats | None = None,
        policy: RetryPolicy | None = None,
    ) -> Reply:
        litellm = self._litellm()
        # LiteLLM picks proxies from the same variables with httpx's rules; the authorities are ours to give,
        # as a file: every LiteLLM client path honours a CA bundle path (not all of them a context).
        litellm.ssl_verify = self._network.ca_bundle()  # type: ignore[attr-defined]  # a setting litellm does not declare
        endpoint = self.endpoint
        kwargs: dict[str, Any] = {
            "model": endpoint.litellm_model,
            "messages": list(messages),
            "timeout": endpoint.timeout,
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,  # a provider that rejects temperature/seed gets the call without them
            **(params or {}),
        }
        if endpoint.api_key:
            kwargs["api_key"] = endpoint.api_key
        if endpoint.litellm_base:
            kwargs["api_base"] = endpoint.litellm_base
        if tools:
            kwargs["tools"] = list(tools)

        async def send() -> Reply:
            return self._reply(await litellm.acompletion(**kwargs))

        return await call_with_retries(policy or self.policy, send, where=endpoint.where, stats=stats)

    @staticmethod
    def _reply(response: Any) -> Reply:
        raw = _to_dict(response)
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        return Reply(
            message=choice.message.model_dump(exclude_none=True),
            usage={
                "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
                "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
            },
            finish_reason=choice.finish_reason or "stop",
            raw=raw,
        )

    async def aclose(self) -> None:
        closer = getattr(_LITELLM, "close_litellm_async_clients", None) if _LITELLM else None
        if closer is not None:
            await closer()
