"""LiteLLM access, failure classification and the retry policy shared by every LLM call we make.

LiteLLM is imported on first use only (it takes seconds), with its network cost-map fetch switched off.
Its own retries and the OpenAI client's are disabled: :class:`RetryPolicy` decides, so that attempts,
waits and ``Retry-After`` are visible in our accounting instead of hidden inside a library.
"""

from __future__ import annotations

import email.utils
import os
import random
import re
import time
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

__all__ = [
    "CallStats",
    "Failure",
    "RetryPolicy",
    "Usage",
    "classify_failure",
    "error_detail",
    "load_litellm",
]

_LITELLM: ModuleType | None = None
# LiteLLM prefixes messages with its class chain ("litellm.NotFoundError: NotFoundError: OpenAIException - ").
_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*)?(?:\w+Error:\s*)?(?:\w+Exception\s*-\s*)?")
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


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


@dataclass
class Usage:
    """Token counts summed over calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def add_response(self, raw: Any) -> None:
        usage = raw.get("usage") if isinstance(raw, dict) else None
        if not isinstance(usage, dict):
            return
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.total_tokens += int(usage.get("total_tokens") or prompt + completion)

    def merge(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.total_tokens += other.total_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass
class CallStats:
    """What one logical call cost: requests sent, transport retries, parse retries, waits, tokens."""

    attempts: int = 0
    retries: int = 0
    parse_failures: int = 0
    waits: list[float] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Failure:
    """A classified provider failure.

    Attributes:
        kind: ``retryable`` (429, 5xx, timeout, connection), ``not_found``, ``auth`` or ``fatal``.
        detail: The provider's message.
        status: The HTTP status, when known.
        retry_after: Seconds the provider asked us to wait, when it said.
    """

    kind: str
    detail: str
    status: int | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter; ``Retry-After`` wins when the provider sends it.

    Example:
        >>> RetryPolicy(max_retries=2, base_delay=1.0).delay(0, retry_after=None) <= 1.0
        True
    """

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def delay(self, retry_index: int, retry_after: float | None) -> float:
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * (2**retry_index))
        return random.uniform(ceiling / 2, ceiling)


def _header_lookup(exc: BaseException) -> dict[str, str]:
    headers: dict[str, str] = {}
    response = getattr(exc, "response", None)
    for source in (
        getattr(response, "headers", None),
        getattr(exc, "litellm_response_headers", None),
        getattr(exc, "headers", None),
    ):
        if source:
            try:
                headers.update({str(k).lower(): str(v) for k, v in dict(source).items()})
            except (TypeError, ValueError):
                continue
    return headers


def _retry_after(exc: BaseException) -> float | None:
    headers = _header_lookup(exc)
    if "retry-after-ms" in headers:
        try:
            return float(headers["retry-after-ms"]) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def error_detail(exc: BaseException) -> str:
    """The most useful message an exception carries (``message``, ``detail``, ``error``, body, str)."""
    return _LITELLM_PREFIX.sub("", _raw_detail(exc)).strip() or type(exc).__name__


def _raw_detail(exc: BaseException) -> str:
    for attr in ("message", "detail", "error"):
        value = getattr(exc, attr, None)
        if isinstance(value, str) and value.strip():
            return value.strip()
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            for key in ("message", "code"):
                if error.get(key):
                    return str(error[key])
        elif isinstance(error, str) and error.strip():
            return error.strip()
    text = str(exc).strip()
    return text or f"{type(exc).__name__} encountered while contacting provider"


def _status(exc: BaseException) -> int | None:
    for source in (exc, getattr(exc, "response", None)):
        value = getattr(source, "status_code", None)
        if isinstance(value, int):
            return value
    return None


def classify_failure(exc: BaseException) -> Failure:
    """Sorts an exception from an LLM call into retryable / not found / auth / fatal."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = _status(exc)
    detail = error_detail(exc)
    if "NotFoundError" in names or status == 404:
        return Failure("not_found", detail, status)
    if "AuthenticationError" in names or "PermissionDeniedError" in names or status in (401, 403):
        return Failure("auth", detail, status)
    timeout_like = names & {"Timeout", "APITimeoutError", "TimeoutError", "APIConnectionError"}
    if timeout_like or (status is not None and status in RETRYABLE_STATUS):
        return Failure("retryable", detail, status, _retry_after(exc))
    if names & {"RateLimitError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError"}:
        return Failure("retryable", detail, status, _retry_after(exc))
    return Failure("fatal", detail, status)
