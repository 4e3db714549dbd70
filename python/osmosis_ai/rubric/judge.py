"""One judge call, as plain data: request preparation, the retry loop (sync and async), the outcome.

:func:`prepare` validates arguments and resolves key, endpoint, timeout and response format into a
:class:`JudgeRequest`. :func:`run_sync` / :func:`run_async` send it through LiteLLM and never raise for
provider trouble: they return a :class:`JudgeOutcome` (``success``, ``unscored`` with a reason, or
``error`` with the mapped exception), so the CLI engine can count retries, clamps and parse failures.
The public ``evaluate_rubric`` turns an outcome into the established return values and errors.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.errors import MissingAPIKeyError, ModelNotFoundError, ProviderRequestError
from osmosis_ai.llm.client import CallStats, RetryPolicy, classify_failure, load_litellm
from osmosis_ai.rubric.parse import JudgeReply, ReplyProblem, extract_content, parse_reply, to_dict
from osmosis_ai.rubric.prompt import build_messages, response_format

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "JudgeOutcome",
    "JudgeRequest",
    "JudgeUnscoredError",
    "ensure_api_key_available",
    "prepare",
    "run_async",
    "run_sync",
]

DEFAULT_API_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "xai": "XAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "google": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "azure": "AZURE_API_KEY",
    "bedrock": "AWS_ACCESS_KEY_ID",
    "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS",
}
# Endpoint overrides read from the environment, first set wins; other providers use <P>_BASE_URL/_API_BASE.
BASE_URL_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
    "gemini": ("GEMINI_API_BASE", "GEMINI_BASE_URL"),
    "google": ("GEMINI_API_BASE", "GEMINI_BASE_URL"),
}
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_PARSE_RETRIES = 2
RESPONSE_MODES = ("json_schema", "json_object", "none")


class JudgeUnscoredError(ProviderRequestError):
    """The judge answered, but no reply within the retry budget could be scored.

    Attributes:
        reason: Why the last reply was unusable (``invalid_json``, ``truncated``, ``missing_score``, ...).
        attempts: How many requests were sent.
    """

    def __init__(self, provider: str, model: str, detail: str, *, reason: str, attempts: int) -> None:
        super().__init__(provider, model, detail)
        self.reason = reason
        self.attempts = attempts


@dataclass
class JudgeRequest:
    """A validated judge call: what to send, where, and how hard to try."""

    provider: str
    model: str
    score_min: float
    score_max: float
    kwargs: dict[str, Any]
    policy: RetryPolicy
    max_parse_retries: int
    response_mode: str


@dataclass
class JudgeOutcome:
    """What a judge call came to. ``status`` is ``success``, ``unscored`` or ``error``."""

    status: str
    reply: JudgeReply | None = None
    raw: Any = None
    reason: str | None = None
    error: Exception | None = None
    stats: CallStats = field(default_factory=CallStats)

    def details(self, request: JudgeRequest) -> dict[str, Any]:
        """The ``return_details=True`` payload (established keys first)."""
        assert self.reply is not None
        return {
            "score": self.reply.score,
            "explanation": self.reply.explanation,
            "raw": self.raw,
            "raw_score": self.reply.raw_score,
            "clamped": self.reply.clamped,
            "score_min": request.score_min,
            "score_max": request.score_max,
            "attempts": self.stats.attempts,
            "retries": self.stats.retries,
            "parse_failures": self.stats.parse_failures,
            "retry_waits": list(self.stats.waits),
            "usage": self.stats.usage.as_dict(),
            "response_format": request.response_mode,
        }

    def value(self) -> JudgeReply:
        """The reply, or the error this outcome stands for."""
        if self.reply is not None:
            return self.reply
        assert self.error is not None
        raise self.error


def _non_blank(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"'model_info' must include a '{name}' string")
    return value.strip()


def _resolve_api_key(provider: str, model_info: dict[str, Any]) -> str:
    inline = model_info.get("api_key")
    if isinstance(inline, str) and inline.strip():
        return inline.strip()
    env_name = model_info.get("api_key_env")
    env_name = env_name.strip() if isinstance(env_name, str) and env_name.strip() else None
    env_name = env_name or DEFAULT_API_KEY_ENV.get(provider)
    if env_name is None:
        hints = "\n".join(f'  export {name}="..."' for name in sorted(set(DEFAULT_API_KEY_ENV.values())))
        raise MissingAPIKeyError(
            f"No API key for provider '{provider}': set 'api_key' or 'api_key_env' in model_info "
            f"(there is no default variable for this provider). Known variables:\n{hints}"
        )
    value = os.environ.get(env_name, "").strip()
    if not value:
        raise MissingAPIKeyError(
            f"Environment variable '{env_name}' is not set. Export it with your {provider} API key before "
            f'calling evaluate_rubric.\n  export {env_name}="..."'
        )
    return value


def ensure_api_key_available(model_info: dict[str, Any]) -> None:
    """Fails fast when no API key can be resolved for ``model_info`` (as the CLI does before a run).

    Raises:
        TypeError: If ``provider`` is missing.
        MissingAPIKeyError: If neither ``api_key`` nor the key's environment variable is set.

    Example:
        >>> ensure_api_key_available({"provider": "openai", "api_key": "sk-test"})
    """
    provider = _non_blank(model_info.get("provider") if isinstance(model_info, dict) else None, "provider")
    _resolve_api_key(provider.lower(), model_info)


def _base_url(provider: str, model_info: dict[str, Any]) -> str | None:
    for key in ("base_url", "api_base"):
        value = model_info.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    names = BASE_URL_ENV.get(provider, (f"{provider.upper()}_BASE_URL", f"{provider.upper()}_API_BASE"))
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def default_timeout(provider: str, model: str) -> float:
    """The per-provider default request timeout in seconds (model-specific rules first)."""
    name = model.lower()
    if provider == "xai" and name.startswith("grok-4"):
        return 60.0
    if provider == "openai" and name.startswith("gpt-5"):
        return 45.0
    return {"xai": 45.0, "gemini": 45.0, "cerebras": 60.0, "openrouter": 60.0}.get(provider, DEFAULT_TIMEOUT)


def _litellm_model(provider: str, model: str, base_url: str | None) -> str:
    if provider == "openai" and model.lower().startswith("gpt-5") and base_url is None:
        return f"openai/responses/{model}"
    return f"{provider}/{model}"


@functools.lru_cache(maxsize=256)
def _schema_supported(litellm_model: str) -> bool:
    # The capability lookup costs real CPU per call; a session asks about the same model many times.
    try:
        return bool(load_litellm().supports_response_schema(model=litellm_model, custom_llm_provider=None))
    except Exception:  # an unknown model is simply not in the capability map
        return False


def _response_mode(model_info: dict[str, Any], litellm_model: str, base_url: str | None) -> str:
    asked = model_info.get("response_format")
    if asked is not None:
        if asked not in RESPONSE_MODES:
            raise ValueError(f"'response_format' must be one of {', '.join(RESPONSE_MODES)}, got {asked!r}")
        return str(asked)
    if _schema_supported(litellm_model):
        return "json_schema"
    # Custom OpenAI-compatible servers (vLLM, llama.cpp, SGLang) accept JSON schemas; the map cannot know.
    return "json_schema" if base_url else "json_object"


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
) -> JudgeRequest:
    """Validates a judge call (arguments before the key, unlike the established package) and builds it."""
    if not isinstance(model_info, dict):
        raise TypeError(f"'model_info' must be a dict, got {type(model_info).__name__}")
    provider = _non_blank(model_info.get("provider"), "provider").lower()
    model = _non_blank(model_info.get("model"), "model")
    if not isinstance(rubric, str) or not rubric.strip():
        raise TypeError("'rubric' must be a non-empty string")
    if not isinstance(solution_str, str) or not solution_str.strip():
        raise TypeError("'solution_str' must be a non-empty string")
    low, high = _score_range(model_info, score_min, score_max)
    seconds = _timeout(model_info, timeout, provider, model)
    api_key = _resolve_api_key(provider, model_info)
    base_url = _base_url(provider, model_info)
    litellm_model = _litellm_model(provider, model, base_url)
    mode = _response_mode(model_info, litellm_model, base_url)
    fallback_input = model_info.get("original_input")
    chosen_input = next(
        (text for text in (original_input, fallback_input) if isinstance(text, str) and text.strip()), None
    )
    messages = build_messages(
        rubric=rubric,
        solution_str=solution_str,
        score_min=low,
        score_max=high,
        system_prompt=model_info.get("system_prompt")
        if isinstance(model_info.get("system_prompt"), str)
        else None,
        original_input=chosen_input,
        ground_truth=ground_truth,
        metadata=metadata,
    )
    kwargs: dict[str, Any] = {
        "model": litellm_model,
        "messages": messages,
        "timeout": seconds,
        "api_key": api_key,
        "drop_params": True,  # a provider that rejects temperature/seed gets the call without them
        "num_retries": 0,
        "max_retries": 0,
    }
    if base_url:
        kwargs["api_base"] = base_url
    fmt = response_format(mode)
    if fmt is not None:
        kwargs["response_format"] = fmt
    temperature = model_info.get("temperature")
    if temperature is not None:
        kwargs["temperature"] = float(temperature)
    elif not model.lower().startswith("gpt-5"):
        kwargs["temperature"] = 0.0
    for key in ("seed", "max_tokens", "reasoning_effort"):
        if model_info.get(key) is not None:
            kwargs[key] = model_info[key]
    policy = RetryPolicy(
        max_retries=_int_option(model_info, "max_retries", 3),
        base_delay=float(model_info.get("retry_base_delay", 1.0)),
    )
    return JudgeRequest(
        provider=provider,
        model=model,
        score_min=low,
        score_max=high,
        kwargs=kwargs,
        policy=policy,
        max_parse_retries=_int_option(model_info, "max_parse_retries", DEFAULT_MAX_PARSE_RETRIES),
        response_mode=mode,
    )


def _redact(text: str, secret: str) -> str:
    """Providers sometimes echo the key in error messages; it must not reach logs or result files."""
    return text.replace(secret, "***") if len(secret) >= 4 else text


class _Attempts:
    """The decision logic of the retry loop, shared by the sync and async drivers."""

    def __init__(self, request: JudgeRequest) -> None:
        self.request = request
        # Per-call copy: a repair turn is added after an unusable reply; the shared request stays as built.
        self.kwargs = dict(request.kwargs)
        self.stats = CallStats()
        self.problem: ReplyProblem | None = None
        self.last_raw: Any = None

    def on_response(self, response: Any) -> JudgeOutcome | None:
        """An outcome, or ``None`` to ask again (an unusable reply within the parse budget)."""
        raw = to_dict(response)
        self.last_raw = raw
        self.stats.usage.add_response(raw)
        try:
            content, finish = extract_content(raw)
            reply = parse_reply(content, self.request.score_min, self.request.score_max, finish)
        except ReplyProblem as problem:
            self.problem = problem
            self.stats.parse_failures += 1
            if self.stats.parse_failures <= self.request.max_parse_retries:
                self._add_repair_turn(raw, problem)
                return None
            req = self.request
            error = JudgeUnscoredError(
                req.provider, req.model, problem.detail, reason=problem.reason, attempts=self.stats.attempts
            )
            return JudgeOutcome("unscored", raw=raw, reason=problem.reason, error=error, stats=self.stats)
        return JudgeOutcome("success", reply=reply, raw=raw, stats=self.stats)

    def _add_repair_turn(self, raw: Any, problem: ReplyProblem) -> None:
        # Re-asking the same question at temperature 0 would get the same reply; show the judge its
        # mistake instead (only the first bad reply is kept, so the prompt does not grow per retry).
        try:
            bad = raw["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            bad = ""
        repair = (
            f"Your previous reply could not be used: {problem.detail} Reply again with only a JSON object "
            'of the form {"score": <number>, "explanation": "<string>"}.'
        )
        base = list(self.request.kwargs["messages"])
        self.kwargs["messages"] = [
            *base,
            {"role": "assistant", "content": str(bad)[:2000]},
            {"role": "user", "content": repair},
        ]

    def on_exception(self, exc: BaseException) -> float | JudgeOutcome:
        """Seconds to wait before retrying, or the final outcome."""
        req = self.request
        failure = classify_failure(exc)
        if failure.kind == "retryable" and self.stats.retries < req.policy.max_retries:
            wait = req.policy.delay(self.stats.retries, failure.retry_after)
            self.stats.retries += 1
            self.stats.waits.append(wait)
            return wait
        detail = _redact(failure.detail, str(req.kwargs.get("api_key") or ""))
        if failure.kind == "not_found":
            detail = f"Model '{req.model}' was not found or is not accessible with this key. {detail}"
            error: Exception = ModelNotFoundError(req.provider, req.model, detail)
        else:
            if failure.kind == "retryable" and self.stats.retries:
                detail = f"{detail} (gave up after {self.stats.attempts} attempts)"
            elif failure.status == 400 and "response_format" in detail.lower():
                detail += (
                    f" (the endpoint rejected response_format '{req.response_mode}'; set "
                    "model_info['response_format'] to 'json_object' or 'none')"
                )
            error = ProviderRequestError(req.provider, req.model, detail)
        return JudgeOutcome("error", raw=self.last_raw, reason=failure.kind, error=error, stats=self.stats)


def _litellm_or_outcome(request: JudgeRequest) -> Any:
    try:
        return load_litellm()
    except ImportError as exc:
        detail = f"LiteLLM is required for the judge but could not be imported ({exc}); pip install litellm"
        error = ProviderRequestError(request.provider, request.model, detail)
        return JudgeOutcome("error", reason="fatal", error=error)


def run_sync(request: JudgeRequest) -> JudgeOutcome:
    """Sends the request (blocking), retrying per policy; never raises for provider trouble."""
    litellm = _litellm_or_outcome(request)
    if isinstance(litellm, JudgeOutcome):
        return litellm
    attempts = _Attempts(request)
    while True:
        attempts.stats.attempts += 1
        try:
            response = litellm.completion(**attempts.kwargs)
        except Exception as exc:
            step = attempts.on_exception(exc)
            if isinstance(step, JudgeOutcome):
                return step
            time.sleep(step)
            continue
        outcome = attempts.on_response(response)
        if outcome is not None:
            return outcome


async def run_async(request: JudgeRequest) -> JudgeOutcome:
    """Sends the request without blocking the event loop; same policy as :func:`run_sync`."""
    litellm = _litellm_or_outcome(request)
    if isinstance(litellm, JudgeOutcome):
        return litellm
    attempts = _Attempts(request)
    # The HTTP timeout bounds each read; this bounds the whole attempt, so a trickling server cannot hang us.
    guard = float(request.kwargs["timeout"]) * 2 + 5.0
    while True:
        attempts.stats.attempts += 1
        try:
            response = await asyncio.wait_for(litellm.acompletion(**attempts.kwargs), guard)
        except Exception as exc:
            step = attempts.on_exception(exc)
            if isinstance(step, JudgeOutcome):
                return step
            await asyncio.sleep(step)
            continue
        outcome = attempts.on_response(response)
        if outcome is not None:
            return outcome
