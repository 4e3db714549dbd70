"""Turning a judge reply into a score: sanitise, parse strictly, clamp, and say exactly why when it fails."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["JudgeReply", "ReplyProblem", "extract_content", "parse_reply", "to_dict"]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^```(?:json)?\s*", re.IGNORECASE)
_FENCE_CLOSE = re.compile(r"\s*```$")


class ReplyProblem(Exception):
    """A judge reply that cannot be scored.

    Attributes:
        reason: One of ``no_content``, ``truncated``, ``invalid_json``, ``not_an_object``, ``missing_score``,
            ``non_finite_score``, ``missing_explanation``.
        detail: A human-readable explanation.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class JudgeReply:
    """A parsed reply: the raw score as the judge gave it, the clamped score, the explanation."""

    raw_score: float
    score: float
    explanation: str

    @property
    def clamped(self) -> bool:
        return self.score != self.raw_score


def to_dict(response: Any) -> Any:
    """The provider response as plain data (the ``raw`` of a detailed result)."""
    for method in ("model_dump", "dict", "to_dict"):
        fn = getattr(response, method, None)
        if callable(fn):
            try:
                return fn()
            except Exception:
                continue
    return response


def extract_content(raw: Any) -> tuple[str, str | None]:
    """``(content, finish_reason)`` of the first choice; raises :class:`ReplyProblem` when there is none."""
    try:
        choice = raw["choices"][0]
        content = choice["message"]["content"]
        finish = choice.get("finish_reason")
    except (KeyError, IndexError, TypeError):
        raise ReplyProblem("no_content", "The judge response did not include any content.") from None
    if not isinstance(content, str) or not content.strip():
        raise ReplyProblem("no_content", "The judge response did not include any content.")
    return content.strip(), finish


def _sanitise(content: str) -> str:
    text = content.strip()
    if "<" not in text and not text.startswith("`") and not text.endswith("`"):
        return text  # no think block, no fence: what the three rules below leave of it
    text = _THINK.sub("", content).strip()
    text = _FENCE_OPEN.sub("", text)
    return _FENCE_CLOSE.sub("", text).strip()


def _loads(text: str) -> Any:
    """``json.loads(text)``: orjson where it reads the text (the same values), ``json`` for the rest (NaN,
    integers past 64 bits, and the message of an error)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def parse_reply(
    content: str, score_min: float, score_max: float, finish_reason: str | None = None
) -> JudgeReply:
    """Parses ``{"score": number, "explanation": string}`` and clamps the score into range.

    Example:
        >>> parse_reply('{"score": 7, "explanation": "good"}', 0.0, 1.0)
        JudgeReply(raw_score=7.0, score=1.0, explanation='good')
    """
    text = _sanitise(content)
    try:
        data = _loads(text)
    except json.JSONDecodeError as exc:
        reason = "truncated" if finish_reason == "length" else "invalid_json"
        snippet = text if len(text) <= 120 else text[:117] + "..."
        raise ReplyProblem(reason, f"The judge reply is not valid JSON ({exc.msg}): {snippet!r}") from None
    if not isinstance(data, dict):
        raise ReplyProblem(
            "not_an_object", f"The judge reply must be a JSON object, got {type(data).__name__}."
        )
    score = data.get("score")
    # bool is an int subclass; a judge answering `true` has not given a score.
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise ReplyProblem("missing_score", f"The judge reply has no numeric 'score' (got {score!r}).")
    raw_score = float(score)
    if not math.isfinite(raw_score):
        raise ReplyProblem("non_finite_score", f"The judge score {raw_score} is not finite.")
    explanation = data.get("explanation")
    if not isinstance(explanation, str) or not explanation.strip():
        raise ReplyProblem("missing_explanation", "The judge reply has no non-empty 'explanation' string.")
    # max(score_min, min(score_max, raw_score)) without the two builtin calls: the same operand on a tie
    # (-0.0 at a bound of 0.0 stays the bound), so the same float is written.
    below = raw_score if raw_score < score_max else score_max
    clamped = below if below > score_min else score_min
    return JudgeReply(raw_score, clamped, explanation.strip())  # positional: a frozen init costs less so
