"""Token and attempt accounting for LLM calls: one object per logical call, summed per run or per session."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallStats", "Usage"]


@dataclass
class Usage:
    """Token counts summed over calls.

    Example:
        >>> u = Usage(); u.add_counts(3, 4); u.as_dict()["total_tokens"]
        7
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def add_counts(self, prompt: int, completion: int, total: int | None = None) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.total_tokens += prompt + completion if total is None else total

    def add_response(self, raw: Any) -> None:
        """Adds the ``usage`` block of a chat-completion body (a dict); anything else adds nothing."""
        # A dict is a Mapping: said without the ABC's instance check (a judge call adds one reply each).
        usage = raw.get("usage") if type(raw) is dict or isinstance(raw, Mapping) else None
        if not (type(usage) is dict or isinstance(usage, Mapping)):
            return
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        self.add_counts(prompt, completion, int(usage.get("total_tokens") or prompt + completion))

    def merge(self, other: Usage) -> None:
        self.add_counts(other.prompt_tokens, other.completion_tokens, other.total_tokens)

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
