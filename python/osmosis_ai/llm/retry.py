"""The one retry policy of every HTTP call we make to a model (and to the trainer and the platform).

:class:`RetryPolicy` says how long to wait; :func:`classify_failure` / :func:`classify_status` say whether
to wait at all: only rate limits, 5xx, timeouts and connection errors are retried, and ``Retry-After``
(seconds, HTTP date, or ``retry-after-ms``) wins over the backoff. :func:`call_with_retries` is the one
loop that applies both, so attempts and waits land in the caller's :class:`~osmosis_ai.llm.usage.CallStats`;
:func:`retry_blocking` is its synchronous twin for blocking clients (the platform and storage transfers),
whose attempts say what is retryable by raising :class:`RetryLater`.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import NoReturn, TypeVar

from osmosis_ai.errors import ProviderError, SystemicProviderError
from osmosis_ai.llm.usage import CallStats

__all__ = [
    "RETRYABLE_STATUS",
    "Failure",
    "ProviderCallError",
    "RetryLater",
    "RetryPolicy",
    "SystemicProviderCallError",
    "call_with_retries",
    "classify_failure",
    "classify_status",
    "error_detail",
    "raise_for_failure",
    "retry_after_from_headers",
    "retry_async",
    "retry_blocking",
]

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
RETRYABLE_KINDS = frozenset({"retryable", "connect"})
# Failures every further call would repeat: a run loop stops early on these instead of burning the dataset.
SYSTEMIC_KINDS = frozenset({"auth", "not_found", "connect"})
# LiteLLM prefixes messages with its class chain ("litellm.NotFoundError: NotFoundError: OpenAIException - ").
_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*)?(?:\w+Error:\s*)?(?:\w+Exception\s*-\s*)?")


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter; ``Retry-After`` wins when the server sends it.

    Example:
        >>> RetryPolicy(max_retries=2, base_delay=1.0).delay(0, retry_after=None) <= 1.0
        True
    """

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def delay(self, retry_index: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``retry_index`` (0-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * (2**retry_index))
        return random.uniform(ceiling / 2, ceiling)


@dataclass(frozen=True)
class Failure:
    """A classified failure of one request.

    Attributes:
        kind: ``retryable`` (429, 5xx, timeout), ``connect`` (nothing listening; retried, then systemic),
            ``not_found``, ``auth``, ``bad_reply`` (not a chat completion) or ``fatal`` (other 4xx).
        detail: The server's message.
        status: The HTTP status, when there was one.
        retry_after: Seconds the server asked us to wait, when it said.
    """

    kind: str
    detail: str
    status: int | None = None
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS

    @property
    def systemic(self) -> bool:
        return self.kind in SYSTEMIC_KINDS


class ProviderCallError(ProviderError):
    """A model request failed for good (after the policy's retries); ``failure`` says how."""

    def __init__(self, message: str, failure: Failure, *, attempts: int = 1) -> None:
        super().__init__(message)
        self.failure = failure
        self.attempts = attempts


class SystemicProviderCallError(ProviderCallError, SystemicProviderError):
    """A failure every further call would repeat (bad key, unknown model, nothing listening)."""


def raise_for_failure(failure: Failure, where: str, *, attempts: int = 1) -> ProviderCallError:
    """The exception for a final failure, its message naming ``where`` and, after retries, the attempts."""
    message = f"{where}: {failure.detail}"
    if failure.status is not None and str(failure.status) not in failure.detail:
        message = f"{where} answered HTTP {failure.status}: {failure.detail}"
    if failure.retryable and attempts > 1:
        message += f" (gave up after {attempts} attempts)"
    cls = SystemicProviderCallError if failure.systemic else ProviderCallError
    return cls(message, failure, attempts=attempts)


def retry_after_from_headers(headers: Mapping[str, str] | None) -> float | None:
    """``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date) as seconds; None when absent."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


def classify_status(status: int, detail: str, headers: Mapping[str, str] | None = None) -> Failure:
    """Sorts an HTTP error status into a :class:`Failure` kind."""
    if status == 404:
        return Failure("not_found", detail, status)
    if status in (401, 402, 403):
        return Failure("auth", detail, status)
    if status in RETRYABLE_STATUS or status >= 500:
        return Failure("retryable", detail, status, retry_after_from_headers(headers))
    return Failure("fatal", detail, status)


def _exception_headers(exc: BaseException) -> dict[str, str]:
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
    """Sorts an exception raised by a client library (LiteLLM, httpx, asyncio streams) into a :class:`Failure`."""
    if isinstance(exc, ProviderCallError):
        return exc.failure
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = _status(exc)
    detail = error_detail(exc)
    if "NotFoundError" in names or status == 404:
        return Failure("not_found", detail, status)
    if "AuthenticationError" in names or "PermissionDeniedError" in names or status in (401, 403):
        return Failure("auth", detail, status)
    if names & {"ClientConnectorError", "ConnectError", "ConnectionRefusedError", "APIConnectionError"}:
        return Failure("connect", detail, status)
    if names & {"Timeout", "APITimeoutError", "TimeoutError", "TimeoutException", "ServerDisconnectedError"}:
        return Failure("retryable", detail, status)
    if status is not None:
        return classify_status(status, detail, _exception_headers(exc))
    if names & {"RateLimitError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError"}:
        return Failure("retryable", detail, status, retry_after_from_headers(_exception_headers(exc)))
    return Failure("fatal", detail, status)


async def call_with_retries(
    policy: RetryPolicy,
    send: Callable[[], Awaitable[T]],
    *,
    where: str,
    stats: CallStats | None = None,
    first_failure: Exception | None = None,
) -> T:
    """Awaits ``send()`` until it succeeds or fails for good, waiting per ``policy`` between attempts.

    ``send`` raises :class:`ProviderCallError` (or any client exception, classified here). The final
    failure is raised as :class:`ProviderCallError`, :class:`SystemicProviderCallError` for failures
    every further call would repeat. ``first_failure``: the caller made the first attempt itself (and
    counted it in ``stats``), which raised this; the retries go on from there.

    Example:
        >>> async def send(): return "ok"
        >>> asyncio.run(call_with_retries(RetryPolicy(), send, where="test"))
        'ok'
    """
    # The first attempt is awaited here, without the loop's closures and frames: almost every call
    # succeeds at once, and the loop below cost several microseconds per model request. The direct
    # transport (OpenAICompatTransport.complete) makes the same attempt itself: keep the two alike.
    failed: BaseException | None = first_failure
    if failed is None:
        if stats is not None:
            stats.attempts += 1
        try:
            return await send()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            failed = exc
    counts = stats if stats is not None else CallStats(attempts=1)

    async def attempt() -> T:
        nonlocal failed
        error = failed
        failed = None
        if error is None:  # a retry
            counts.attempts += 1
            try:
                return await send()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                error = exc
        failure = classify_failure(error)
        if failure.retryable:
            raise RetryLater(error, failure.retry_after) from error
        raise raise_for_failure(failure, where, attempts=counts.attempts) from error

    def waited(_error: BaseException, seconds: float) -> None:
        counts.retries += 1
        counts.waits.append(seconds)

    def give_up(error: BaseException, _attempts: int) -> BaseException:
        return raise_for_failure(classify_failure(error), where, attempts=counts.attempts)

    return await retry_async(policy, attempt, on_wait=waited, give_up=give_up)


class RetryLater(Exception):
    """Raised by a :func:`retry_blocking` attempt that failed in a way another attempt may fix.

    Attributes:
        error: What to raise if no attempt is left.
        retry_after: Seconds the server asked us to wait, when it said.
    """

    def __init__(self, error: BaseException, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


def retry_blocking(
    policy: RetryPolicy,
    attempt: Callable[[], T],
    *,
    sleep: Callable[[float], None] = time.sleep,
    give_up: Callable[[BaseException, int], BaseException] | None = None,
) -> T:
    """Calls ``attempt()`` until it returns, waiting per ``policy`` each time it raises :class:`RetryLater`.

    Any other exception ends the loop at once (the attempt decided it is final). When the retries are spent,
    ``give_up(error, attempts)`` builds the exception raised (default: the last :attr:`RetryLater.error`).

    Example:
        >>> calls = []
        >>> def attempt():
        ...     calls.append(1)
        ...     if len(calls) < 2:
        ...         raise RetryLater(OSError("busy"), retry_after=0)
        ...     return "ok"
        >>> retry_blocking(RetryPolicy(), attempt, sleep=lambda s: None), len(calls)
        ('ok', 2)
    """
    retries = 0
    while True:
        try:
            return attempt()
        except RetryLater as later:
            if retries >= policy.max_retries:
                _raise_final(later.error, retries + 1, give_up)
            sleep(policy.delay(retries, later.retry_after))
            retries += 1


async def retry_async(
    policy: RetryPolicy,
    attempt: Callable[[], Awaitable[T]],
    *,
    on_wait: Callable[[BaseException, float], None] | None = None,
    give_up: Callable[[BaseException, int], BaseException] | None = None,
) -> T:
    """The awaiting twin of :func:`retry_blocking`: ``on_wait(error, seconds)`` hears of each wait."""
    retries = 0
    while True:
        try:
            return await attempt()
        except RetryLater as later:
            if retries >= policy.max_retries:
                _raise_final(later.error, retries + 1, give_up)
            wait = policy.delay(retries, later.retry_after)
            if on_wait is not None:
                on_wait(later.error, wait)
            await asyncio.sleep(wait)
            retries += 1


def _raise_final(
    error: BaseException, attempts: int, give_up: Callable[[BaseException, int], BaseException] | None
) -> NoReturn:
    # Chained to the last attempt's error, never to the RetryLater that carried it.
    final = give_up(error, attempts) if give_up else error
    if final is error:
        raise error from error.__cause__
    raise final from error
