"""Sending one judge call and reading its reply: the parse-retry loop (sync and async) and the outcome.

Transport retries (429, 5xx, timeouts, connection errors) happen in the LLM layer's one retry loop; this
module adds what only a judge needs: a reply that is not a usable score is asked for again, with the
judge's mistake shown to it, up to ``max_parse_retries`` times. :func:`run_sync` / :func:`run_async`
never raise for provider trouble: they return a :class:`JudgeOutcome` (``success``, ``unscored`` with a
reason, or ``error`` with the mapped exception), so the CLI can count retries, clamps and parse failures.
The public ``evaluate_rubric`` turns an outcome into the established return values and errors.
"""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.errors import ModelNotFoundError, ProviderRequestError
from osmosis_ai.llm.pool import active_pool
from osmosis_ai.llm.retry import ProviderCallError
from osmosis_ai.llm.sync import pooled_transport, run_blocking
from osmosis_ai.llm.transport import make_transport
from osmosis_ai.llm.usage import CallStats
from osmosis_ai.rubric.judge_request import (
    DEFAULT_API_KEY_ENV,
    JudgeRequest,
    ensure_api_key_available,
    prepare,
)
from osmosis_ai.rubric.parse import JudgeReply, ReplyProblem, extract_content, parse_reply

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "JudgeOutcome",
    "JudgeRequest",
    "JudgeUnscoredError",
    "ensure_api_key_available",
    "judge_call",
    "prepare",
    "run_async",
    "run_sync",
]


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


def _redact(text: str, secret: str | None) -> str:
    """Providers sometimes echo the key in error messages; it must not reach logs or result files."""
    return text.replace(secret, "***") if secret and len(secret) >= 4 else text


class _Attempts:
    """The judge's decisions between requests: score, ask again, or give up."""

    def __init__(self, request: JudgeRequest) -> None:
        self.request = request
        # The request's own list: a repair turn makes a new list (_add_repair_turn), never changes it.
        self.messages = request.messages
        self.stats = CallStats()
        self.last_raw: Any = None

    def on_response(self, raw: dict[str, Any]) -> JudgeOutcome | None:
        """An outcome, or ``None`` to ask again (an unusable reply within the parse budget)."""
        self.last_raw = raw
        self.stats.usage.add_response(raw)
        req = self.request
        try:
            content, finish = extract_content(raw)
            reply = parse_reply(content, req.score_min, req.score_max, finish)
        except ReplyProblem as problem:
            self.stats.parse_failures += 1
            if self.stats.parse_failures <= req.max_parse_retries:
                self._add_repair_turn(raw, problem)
                return None
            error = JudgeUnscoredError(
                req.provider, req.model, problem.detail, reason=problem.reason, attempts=self.stats.attempts
            )
            return JudgeOutcome("unscored", raw=raw, reason=problem.reason, error=error, stats=self.stats)
        return JudgeOutcome("success", reply, raw, None, None, self.stats)  # positional: one per call

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
        self.messages = [
            *self.request.messages,
            {"role": "assistant", "content": str(bad)[:2000]},
            {"role": "user", "content": repair},
        ]

    def on_failure(self, exc: ProviderCallError) -> JudgeOutcome:
        req = self.request
        failure = exc.failure
        detail = _redact(str(failure.detail), req.endpoint.api_key)
        if failure.kind == "not_found":
            detail = f"Model '{req.model}' was not found or is not accessible with this key. {detail}"
            error: Exception = ModelNotFoundError(req.provider, req.model, detail)
        else:
            if failure.retryable and self.stats.retries:
                detail = f"{detail} (gave up after {self.stats.attempts} attempts)"
            elif failure.status == 400 and "response_format" in detail.lower():
                detail += (
                    f" (the endpoint rejected response_format '{req.response_mode}'; set "
                    "model_info['response_format'] to 'json_object' or 'none')"
                )
            error = ProviderRequestError(req.provider, req.model, detail)
        return JudgeOutcome("error", raw=self.last_raw, reason=failure.kind, error=error, stats=self.stats)


async def _judge(request: JudgeRequest, transport: Any) -> JudgeOutcome:
    attempts = _Attempts(request)
    while True:
        try:
            reply = await transport.complete(
                attempts.messages, None, request.params, stats=attempts.stats, policy=request.policy
            )
        except ProviderCallError as exc:
            return attempts.on_failure(exc)
        outcome = attempts.on_response(reply.raw)
        if outcome is not None:
            return outcome


async def run_async(request: JudgeRequest) -> JudgeOutcome:
    """Sends the request without blocking the event loop; never raises for provider trouble.

    Inside an ``async with TransportPool()`` (the CLI opens one per session) the pool's connections are
    reused; otherwise the call opens its own and closes them when done.
    """
    return await judge_call(request)


def judge_call(request: JudgeRequest) -> Coroutine[Any, Any, JudgeOutcome]:
    """:func:`run_async`'s call, as the coroutine that makes it: a session's judge awaits it directly,
    one coroutine less per call (the pool is looked up here, when the call is made)."""
    pool = active_pool()
    if pool is not None:
        return _judge(request, pool.get(request.endpoint))
    return _unpooled(request)


async def _unpooled(request: JudgeRequest) -> JudgeOutcome:
    transport = make_transport(request.endpoint, max_connections=4)
    try:
        return await _judge(request, transport)
    finally:
        await transport.aclose()


def run_sync(request: JudgeRequest) -> JudgeOutcome:
    """Sends the request and waits (on the LLM layer's background loop, pooled across calls)."""
    return run_blocking(lambda: _judge(request, pooled_transport(request.endpoint)))
