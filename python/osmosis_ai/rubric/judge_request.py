"""Preparing one judge call: argument checks, endpoint and key, timeout, response format, sampling options.

:func:`prepare` validates the call (arguments before the key, unlike the established package) and
returns a :class:`JudgeRequest` of plain data that :mod:`osmosis_ai.rubric.judge` sends.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from osmosis_ai.llm.providers import PROVIDER_KEY_ENV, Endpoint, resolve_endpoint
from osmosis_ai.llm.retry import RetryPolicy
from osmosis_ai.rubric.prompt import messages_of, response_format

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "EndpointCache",
    "JudgeRequest",
    "JudgeTemplate",
    "default_timeout",
    "ensure_api_key_available",
    "judge_endpoint",
    "prepare",
]

# The established public constant: the judge providers it listed, read from the LLM layer's one table.
_ESTABLISHED_JUDGE_PROVIDERS = (
    "openai", "anthropic", "xai", "gemini", "google", "openrouter", "cerebras", "azure", "bedrock", "vertex_ai",
)  # fmt: skip
DEFAULT_API_KEY_ENV = {provider: PROVIDER_KEY_ENV[provider] for provider in _ESTABLISHED_JUDGE_PROVIDERS}
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_PARSE_RETRIES = 2
RESPONSE_MODES = ("json_schema", "json_object", "none")
# OpenAI-wire providers known to accept ``response_format: json_schema`` (the others get json_object).
_SCHEMA_PROVIDERS = frozenset({"openai", "xai", "cerebras", "fireworks_ai"})


@dataclass
class JudgeRequest:
    """A validated judge call: what to send, where, and how hard to try."""

    provider: str
    model: str
    score_min: float
    score_max: float
    endpoint: Endpoint
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    policy: RetryPolicy
    max_parse_retries: int
    response_mode: str


def _non_blank(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"'model_info' must include a '{name}' string")
    return value.strip()


def _text(model_info: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = model_info.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


EndpointCache = dict[tuple[Any, ...], Endpoint]
"""Endpoints a session resolved, by what they were resolved from (the environment is read once)."""


def _endpoint(
    model_info: dict[str, Any], provider: str, model: str, timeout: float, cache: EndpointCache | None = None
) -> Endpoint:
    base_url, api_key = _text(model_info, "base_url", "api_base"), _text(model_info, "api_key")
    key_env = _text(model_info, "api_key_env")
    where = (provider, model, base_url, api_key, key_env, timeout)
    endpoint = cache.get(where) if cache is not None else None
    if endpoint is None:
        endpoint = resolve_endpoint(
            model, provider=provider, base_url=base_url, api_key=api_key, key_env=key_env, timeout=timeout
        )
        if cache is not None:
            cache[where] = endpoint
    return endpoint


def ensure_api_key_available(model_info: dict[str, Any]) -> None:
    """Fails fast when no API key can be resolved for ``model_info`` (as the CLI does before a run).

    Raises:
        TypeError: If ``provider`` is missing.
        MissingAPIKeyError: If neither ``api_key`` nor the key's environment variable is set.

    Example:
        >>> ensure_api_key_available({"provider": "openai", "model": "m", "api_key": "sk-test"})
    """
    judge_endpoint(model_info)


def judge_endpoint(model_info: dict[str, Any]) -> Endpoint:
    """The endpoint the judge of ``model_info`` calls, resolved as its calls resolve it.

    Raises:
        TypeError: If ``provider`` is missing.
        MissingAPIKeyError: If neither ``api_key`` nor the key's environment variable is set.

    Example:
        >>> judge_endpoint({"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:8080/v1"}).base_url
        'http://127.0.0.1:8080/v1'
    """
    provider = _non_blank(model_info.get("provider") if isinstance(model_info, dict) else None, "provider")
    model = str(model_info.get("model") or "model")
    return _endpoint(model_info, provider.lower(), model, DEFAULT_TIMEOUT)


def default_timeout(provider: str, model: str) -> float:
    """The per-provider default request timeout in seconds (model-specific rules first)."""
    name = model.lower()
    if provider == "xai" and name.startswith("grok-4"):
        return 60.0
    if provider == "openai" and name.startswith("gpt-5"):
        return 45.0
    return {"xai": 45.0, "gemini": 45.0, "cerebras": 60.0, "openrouter": 60.0}.get(provider, DEFAULT_TIMEOUT)


@functools.lru_cache(maxsize=256)
def _litellm_schema_supported(litellm_model: str) -> bool:
    # The capability lookup costs real CPU per call; a session asks about the same model many times.
    from osmosis_ai.llm.litellm_transport import load_litellm

    try:
        return bool(load_litellm().supports_response_schema(model=litellm_model, custom_llm_provider=None))
    except Exception:  # an unknown model is simply not in the capability map
        return False


def _response_mode(model_info: dict[str, Any], endpoint: Endpoint, custom_base: bool) -> str:
    asked = model_info.get("response_format")
    if asked is not None:
        if asked not in RESPONSE_MODES:
            raise ValueError(f"'response_format' must be one of {', '.join(RESPONSE_MODES)}, got {asked!r}")
        return str(asked)
    if endpoint.direct:
        # Custom OpenAI-compatible servers (vLLM, llama.cpp, SGLang) accept JSON schemas.
        return "json_schema" if custom_base or endpoint.provider in _SCHEMA_PROVIDERS else "json_object"
    return "json_schema" if _litellm_schema_supported(endpoint.litellm_model) else "json_object"


def _score_range(
    model_info: dict[str, Any], score_min: float | None, score_max: float | None
) -> tuple[float, float]:
    low = score_min if score_min is not None else model_info.get("score_min", 0.0)
    high = score_max if score_max is not None else model_info.get("score_max", 1.0)
    try:
        low, high = float(0.0 if low is None else low), float(1.0 if high is None else high)
    except (TypeError, ValueError):
        raise ValueError(f"'score_min' and 'score_max' must be numbers, got {low!r} and {high!r}") from None
    if high <= low:
        raise ValueError("'score_max' must be greater than 'score_min'")
    return low, high


def _timeout(model_info: dict[str, Any], timeout: float | None, provider: str, model: str) -> float:
    value = timeout if timeout is not None else model_info.get("timeout")
    if value is None:
        return default_timeout(provider, model)
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"'timeout' must be a number of seconds, got {value!r}") from None
    if seconds <= 0:
        raise ValueError(f"'timeout' must be a positive number of seconds, got {value!r}")
    return seconds


def _int_option(model_info: dict[str, Any], key: str, default: int) -> int:
    value = model_info.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"'{key}' must be a non-negative integer, got {value!r}")
    return value


def _sampling(model_info: dict[str, Any], model: str, mode: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    fmt = response_format(mode)
    if fmt is not None:
        params["response_format"] = fmt
    temperature = model_info.get("temperature")
    if temperature is not None:
        params["temperature"] = float(temperature)
    elif not model.lower().startswith("gpt-5"):  # gpt-5 models accept only their default temperature
        params["temperature"] = 0.0
    for key in ("seed", "max_tokens", "reasoning_effort"):
        if model_info.get(key) is not None:
            params[key] = model_info[key]
    return params


@dataclass(frozen=True)
class _Settings:
    """What a judge call makes of ``model_info`` alone (the same for every record of a session)."""

    provider: str
    model: str
    endpoint: Endpoint
    mode: str
    params: dict[str, Any]
    policy: RetryPolicy
    max_parse_retries: int
    system_prompt: str | None
    original_input: Any


def _settings(
    model_info: dict[str, Any], timeout: float | None, endpoints: EndpointCache | None
) -> _Settings:
    provider = _non_blank(model_info.get("provider"), "provider").lower()
    model = _non_blank(model_info.get("model"), "model")
    seconds = _timeout(model_info, timeout, provider, model)
    endpoint = _endpoint(model_info, provider, model, seconds, endpoints)
    mode = _response_mode(model_info, endpoint, _text(model_info, "base_url", "api_base") is not None)
    policy = RetryPolicy(
        max_retries=_int_option(model_info, "max_retries", 3),
        base_delay=float(model_info.get("retry_base_delay", 1.0)),
    )
    system_prompt = model_info.get("system_prompt")
    return _Settings(
        provider=provider,
        model=model,
        endpoint=endpoint,
        mode=mode,
        params=_sampling(model_info, model, mode),
        policy=policy,
        max_parse_retries=_int_option(model_info, "max_parse_retries", DEFAULT_MAX_PARSE_RETRIES),
        system_prompt=system_prompt if isinstance(system_prompt, str) else None,
        original_input=model_info.get("original_input"),
    )


def _check_texts(rubric: Any, solution_str: Any) -> None:
    if not isinstance(rubric, str) or not rubric.strip():
        raise TypeError("'rubric' must be a non-empty string")
    if not isinstance(solution_str, str) or not solution_str.strip():
        raise TypeError("'solution_str' must be a non-empty string")


def _request(
    settings: _Settings,
    rubric: str,
    solution_str: str,
    score_range: tuple[float, float],
    ground_truth: str | None,
    original_input: str | None,
    metadata: dict[str, Any] | None,
) -> JudgeRequest:
    chosen_input = original_input if isinstance(original_input, str) and original_input.strip() else None
    if chosen_input is None and isinstance(settings.original_input, str) and settings.original_input.strip():
        chosen_input = settings.original_input
    low, high = score_range
    messages = messages_of(
        rubric, solution_str, low, high, settings.system_prompt, chosen_input, ground_truth, metadata
    )
    # By position (a session builds one per record), in the order of JudgeRequest's fields.
    return JudgeRequest(
        settings.provider, settings.model, low, high, settings.endpoint, messages, settings.params,
        settings.policy, settings.max_parse_retries, settings.mode,
    )  # fmt: skip


def prepare(
    rubric: str,
    solution_str: str,
    model_info: dict[str, Any],
    *,
    ground_truth: str | None = None,
    original_input: str | None = None,
    metadata: dict[str, Any] | None = None,
    score_min: float | None = None,
    score_max: float | None = None,
    timeout: float | None = None,
    endpoints: EndpointCache | None = None,
) -> JudgeRequest:
    """Validates a judge call and builds it (arguments are checked before the key is looked up).

    ``endpoints`` keeps the endpoints resolved for a session's calls (resolving one costs more than the
    rest of the call's preparation); the environment is then read for its first call only. Many calls
    with one ``model_info``: :class:`JudgeTemplate`.
    """
    if not isinstance(model_info, dict):
        raise TypeError(f"'model_info' must be a dict, got {type(model_info).__name__}")
    _non_blank(model_info.get("provider"), "provider")
    _non_blank(model_info.get("model"), "model")
    _check_texts(rubric, solution_str)
    score_range = _score_range(model_info, score_min, score_max)
    settings = _settings(model_info, timeout, endpoints)
    return _request(settings, rubric, solution_str, score_range, ground_truth, original_input, metadata)


class JudgeTemplate:
    """:func:`prepare` for the many calls of one ``model_info`` (a session's records): what depends on it
    alone (endpoint, key, timeout, response format, sampling options, retry policy) is made once, and
    each call builds only its messages. ``model_info`` is read when the template is made; it must not
    change after.

    Example:
        >>> template = JudgeTemplate({"provider": "openai", "model": "m", "api_key": "sk-test"})
        >>> template.prepare("Is it polite?", "Hi!").messages[1]["role"]
        'user'
    """

    def __init__(self, model_info: dict[str, Any], endpoints: EndpointCache | None = None) -> None:
        self.model_info, self._endpoints = model_info, endpoints
        # (score_min, score_max, range) of the last call: a session passes the same two objects each time.
        self._last_range: tuple[Any, Any, tuple[float, float]] | None = None
        self._settings: _Settings | None
        try:
            self._settings = _settings(model_info, None, endpoints)
        except Exception:  # each call then goes prepare's whole way, and fails with the reason it gives
            self._settings = None

    def prepare(
        self,
        rubric: str,
        solution_str: str,
        *,
        ground_truth: str | None = None,
        original_input: str | None = None,
        metadata: dict[str, Any] | None = None,
        score_min: float | None = None,
        score_max: float | None = None,
    ) -> JudgeRequest:
        """:func:`prepare` of one call with the template's ``model_info``: the same request, or error."""
        if self._settings is None:
            return prepare(
                rubric, solution_str, self.model_info, ground_truth=ground_truth, original_input=original_input,
                metadata=metadata, score_min=score_min, score_max=score_max, endpoints=self._endpoints,
            )  # fmt: skip
        _check_texts(rubric, solution_str)
        last = self._last_range
        if last is not None and last[0] is score_min and last[1] is score_max:  # `is`: -0.0 is not 0.0
            score_range = last[2]
        else:
            score_range = _score_range(self.model_info, score_min, score_max)
            self._last_range = (score_min, score_max, score_range)
        return _request(
            self._settings, rubric, solution_str, score_range, ground_truth, original_input, metadata
        )
