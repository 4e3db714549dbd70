"""Which provider a model string names, where its key comes from, and whether it speaks the OpenAI wire format.

One table for every command: the eval harness, ``osmosis test``, the rubric judge and the CLI's up-front key
checks all resolve keys and endpoints here. Providers that accept OpenAI chat-completions requests as-is are
called over our direct HTTP transport (no LiteLLM import, about a millisecond of CPU per call); the others
(Anthropic, Gemini, Bedrock, ...) go through LiteLLM, which translates.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from osmosis_ai.errors import MissingAPIKeyError

__all__ = [
    "BASE_URL_ENV",
    "OPENAI_WIRE_BASE_URLS",
    "PROVIDER_KEY_ENV",
    "Endpoint",
    "base_url_from_env",
    "is_local_url",
    "key_env_for",
    "provider_of",
    "resolve_endpoint",
]

# provider -> the environment variable its key is read from.
PROVIDER_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "xai": "XAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "google": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "cohere": "COHERE_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "fireworks_ai": "FIREWORKS_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "perplexity": "PERPLEXITYAI_API_KEY",
    "replicate": "REPLICATE_API_KEY",
    "deepinfra": "DEEPINFRA_API_KEY",
    "ai21": "AI21_API_KEY",
    "sambanova": "SAMBANOVA_API_KEY",
    "nvidia_nim": "NVIDIA_NIM_API_KEY",
    "github": "GITHUB_API_KEY",
    "azure": "AZURE_API_KEY",
    "bedrock": "AWS_ACCESS_KEY_ID",
    "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS",
}

# Providers whose public API takes OpenAI chat-completions requests unchanged, and where it lives.
OPENAI_WIRE_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "xai": "https://api.x.ai/v1",
    "groq": "https://api.groq.com/openai/v1",
    "deepseek": "https://api.deepseek.com/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "together_ai": "https://api.together.xyz/v1",
    "fireworks_ai": "https://api.fireworks.ai/inference/v1",
    "cerebras": "https://api.cerebras.ai/v1",
    "mistral": "https://api.mistral.ai/v1",
    "deepinfra": "https://api.deepinfra.com/v1/openai",
    "perplexity": "https://api.perplexity.ai",
    "sambanova": "https://api.sambanova.ai/v1",
    "nvidia_nim": "https://integrate.api.nvidia.com/v1",
}

# Endpoint overrides read from the environment, first set wins; other providers use <P>_BASE_URL/_API_BASE.
BASE_URL_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
    "gemini": ("GEMINI_API_BASE", "GEMINI_BASE_URL"),
    "google": ("GEMINI_API_BASE", "GEMINI_BASE_URL"),
}


def provider_of(model: str) -> str:
    """The provider prefix of ``provider/model``; a bare name is an OpenAI model (as established).

    Example:
        >>> provider_of("anthropic/claude-x"), provider_of("gpt-4o-mini")
        ('anthropic', 'openai')
    """
    return model.split("/", 1)[0].strip().lower() if "/" in model else "openai"


def key_env_for(provider: str) -> str | None:
    """The environment variable holding ``provider``'s key, when we know one."""
    return PROVIDER_KEY_ENV.get(provider.lower())


def base_url_from_env(provider: str) -> str | None:
    """A base URL for ``provider`` from its ``*_BASE_URL`` / ``*_API_BASE`` variables, if set."""
    names = BASE_URL_ENV.get(provider, (f"{provider.upper()}_BASE_URL", f"{provider.upper()}_API_BASE"))
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def is_local_url(url: str) -> bool:
    """True for loopback and private-network hosts, where servers usually take no key."""
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


@dataclass(frozen=True)
class Endpoint:
    """Where chat requests for one model go, and how.

    Attributes:
        model: The model as the user typed it (shown in reports, written to results).
        provider: The provider name (``openai`` for a bare name or a custom base URL).
        wire_model: The name sent in the request body.
        base_url: An OpenAI-compatible base URL for the direct transport; None means LiteLLM.
        api_key: The key, or None (a local server needs none); never printed or written to results.
        timeout: Seconds one request may take.
        litellm_base: For a LiteLLM provider, a base URL override (``api_base``).
    """

    model: str
    provider: str
    wire_model: str
    base_url: str | None
    api_key: str | None = None
    timeout: float = 120.0
    litellm_base: str | None = None

    def __post_init__(self) -> None:
        from osmosis_ai.redact import remember, url_secrets

        # Every key an endpoint is given is known to the redactor before anything can print it.
        remember([self.api_key, *url_secrets(self.base_url), *url_secrets(self.litellm_base)])

    @property
    def direct(self) -> bool:
        return self.base_url is not None

    @property
    def litellm_model(self) -> str:
        return f"{self.provider}/{self.wire_model}"

    @property
    def where(self) -> str:
        from osmosis_ai.redact import safe_url

        return safe_url(self.base_url or self.litellm_base) or self.provider


def _key(provider: str, api_key: str | None, key_env: str | None, required: bool) -> str | None:
    if api_key:
        return api_key
    env = key_env or key_env_for(provider)
    value = os.environ.get(env, "").strip() if env else ""
    value = value or os.environ.get("LITELLM_API_KEY", "").strip()
    if value or not required:
        return value or None
    if env is None:
        known = "\n".join(f'  export {name}="..."' for name in sorted(set(PROVIDER_KEY_ENV.values())))
        raise MissingAPIKeyError(
            f"No API key for provider '{provider}': pass one explicitly (there is no default variable for "
            f"this provider). Known variables:\n{known}"
        )
    raise MissingAPIKeyError(
        f"No API key for provider '{provider}': environment variable '{env}' is not set. Set it (or "
        f'LITELLM_API_KEY), pass an API key, or put it in a .env file in the current directory.\n  export {env}="..."'
    )


def resolve_endpoint(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    provider: str | None = None,
    key_env: str | None = None,
    timeout: float = 120.0,
    require_key: bool = True,
) -> Endpoint:
    """Resolves a model to an :class:`Endpoint`: the transport, the name on the wire, the key.

    ``model`` is ``provider/model`` (a bare name is OpenAI's), or a bare id when ``provider`` is given (as
    the judge's ``model_info`` does). Without ``provider``, a ``base_url`` is a custom OpenAI-compatible
    server: the name goes over the wire as typed (``org/model`` included, an ``openai/`` routing prefix
    dropped) and no key is demanded. Providers in :data:`OPENAI_WIRE_BASE_URLS` use the direct transport;
    the others use LiteLLM. A key is required for hosted endpoints only, never for a local one, and not
    at all with ``require_key=False`` (the endpoint then has none, and a call the provider refuses fails).

    Raises:
        MissingAPIKeyError: If a hosted provider's key is needed and cannot be found.

    Example:
        >>> resolve_endpoint("org/model", base_url="http://127.0.0.1:8000/v1").wire_model
        'org/model'
    """
    if provider is None and base_url:
        key = _key("openai", api_key, key_env, required=False)
        return Endpoint(model, "openai", model.removeprefix("openai/"), base_url, key, timeout)
    if provider is None:
        provider = provider_of(model)
        bare = model.split("/", 1)[1] if "/" in model else model
    else:
        provider, bare = provider.strip().lower(), model
    base = base_url or base_url_from_env(provider)
    hosted = require_key and (base is None or not is_local_url(base))
    if provider in OPENAI_WIRE_BASE_URLS:
        key = _key(provider, api_key, key_env, required=hosted)
        return Endpoint(model, provider, bare, base or OPENAI_WIRE_BASE_URLS[provider], key, timeout)
    key = _key(provider, api_key, key_env, required=hosted)
    return Endpoint(model, provider, bare, None, key, timeout, litellm_base=base)
