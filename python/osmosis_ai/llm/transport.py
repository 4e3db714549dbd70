"""The client interface every model call goes through: ``await transport.complete(messages, tools, params)``.

Two transports implement it, chosen by :func:`make_transport` from a resolved
:class:`~osmosis_ai.llm.providers.Endpoint`: a direct OpenAI-compatible HTTP client (custom servers and
providers that speak that wire format) and LiteLLM (providers that need translation). Both retry through
:func:`~osmosis_ai.llm.retry.call_with_retries` with one :class:`~osmosis_ai.llm.retry.RetryPolicy` and
raise :class:`~osmosis_ai.llm.retry.ProviderCallError` when a call fails for good.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from osmosis_ai._fresh import FRESH
from osmosis_ai.llm.network import NetworkSettings, network_settings
from osmosis_ai.llm.providers import Endpoint
from osmosis_ai.llm.retry import RetryPolicy
from osmosis_ai.llm.usage import CallStats

__all__ = ["DEFAULT_POLICY", "Reply", "Transport", "make_transport"]

DEFAULT_POLICY = RetryPolicy()


@dataclass(frozen=True)
class Reply:
    """A chat completion: the assistant message, token usage, finish reason and the whole body."""

    message: dict[str, Any]
    usage: dict[str, int]
    finish_reason: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def __init__(
        self,
        message: dict[str, Any],
        usage: dict[str, int],
        finish_reason: str,
        raw: dict[str, Any] = FRESH,
    ) -> None:
        # The fields set in the instance's __dict__ directly: the generated __init__ of a frozen dataclass
        # calls object.__setattr__ per field, 0.3 us of every model reply. (Still frozen after it.)
        fields = self.__dict__
        fields["message"] = message
        fields["usage"] = usage
        fields["finish_reason"] = finish_reason
        fields["raw"] = {} if raw is FRESH else raw


class Transport(Protocol):
    """What every model transport offers."""

    endpoint: Endpoint

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        stats: CallStats | None = None,
        policy: RetryPolicy | None = None,
    ) -> Reply:
        """Sends one chat request (retrying per policy); raises ProviderCallError when it fails for good."""
        ...

    async def aclose(self) -> None:
        """Releases connections."""
        ...


def make_transport(
    endpoint: Endpoint,
    *,
    max_connections: int = 64,
    policy: RetryPolicy | None = None,
    network: NetworkSettings | None = None,
) -> Transport:
    """The direct OpenAI-compatible transport when the endpoint has a base URL, LiteLLM otherwise.

    Both follow ``network`` (default: :func:`~osmosis_ai.llm.network.network_settings`, read now): the
    proxy and certificate settings the platform client and storage transfers follow too.

    Raises:
        ConfigError: A proxy or certificate variable is unusable (the message names it).

    Example:
        >>> from osmosis_ai.llm.providers import resolve_endpoint
        >>> t = make_transport(resolve_endpoint("m", base_url="http://127.0.0.1:9/v1"))
        >>> type(t).__name__
        'OpenAICompatTransport'
    """
    network = network if network is not None else network_settings()
    network.check()  # an unusable proxy variable fails the command up front, not every row after it
    if not (endpoint.base_url or "").startswith("http://"):
        network.ssl_context()  # likewise a missing SSL_CERT_FILE
    if endpoint.direct:
        from osmosis_ai.llm.openai_http import OpenAICompatTransport

        return OpenAICompatTransport(
            endpoint, max_connections=max_connections, policy=policy, network=network
        )
    from osmosis_ai.llm.litellm_transport import LiteLLMTransport

    return LiteLLMTransport(endpoint, policy=policy, network=network)
