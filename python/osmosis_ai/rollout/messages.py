"""Helpers for OpenAI-format chat messages that tolerate missing and ``null`` fields."""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = [
    "count_messages_by_role",
    "get_message_content",
    "get_message_role",
    "is_assistant_message",
    "is_tool_message",
    "is_user_message",
    "normalize_stop",
    "parse_tool_calls",
]


def parse_tool_calls(assistant_message: dict[str, Any]) -> list[dict[str, Any]]:
    """Returns a message's tool calls; ``[]`` when absent, ``null`` or not a list.

    Example:
        >>> parse_tool_calls({"role": "assistant", "content": "hi", "tool_calls": None})
        []
    """
    message = assistant_message
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    return calls if isinstance(calls, list) else []


def normalize_stop(stop: Any) -> list[str] | None:
    """Normalises a ``stop`` parameter: ``None`` → ``None``, a string → ``[s]``, a list → strings.

    Anything else also gives ``None``.

    Example:
        >>> normalize_stop("###"), normalize_stop(["a", 1]), normalize_stop(None)
        (['###'], ['a', '1'], None)
    """
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, (list, tuple)):
        return [str(item) for item in stop]
    return None


def get_message_content(message: dict[str, Any]) -> str:
    """Returns a message's content when it is a string, else ``""``.

    Example:
        >>> get_message_content({"role": "assistant", "content": None})
        ''
    """
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def get_message_role(message: dict[str, Any]) -> str:
    """Returns a message's role when it is a string, else ``"unknown"``.

    Example:
        >>> get_message_role({"role": "user"})
        'user'
    """
    role = message.get("role") if isinstance(message, dict) else None
    return role if isinstance(role, str) else "unknown"


def is_assistant_message(message: dict[str, Any]) -> bool:
    """True for an ``assistant`` message."""
    return get_message_role(message) == "assistant"


def is_tool_message(message: dict[str, Any]) -> bool:
    """True for a ``tool`` message."""
    return get_message_role(message) == "tool"


def is_user_message(message: dict[str, Any]) -> bool:
    """True for a ``user`` message."""
    return get_message_role(message) == "user"


def count_messages_by_role(messages: list[dict[str, Any]]) -> dict[str, int]:
    """Counts messages per role (``"unknown"`` for messages without a string role).

    Example:
        >>> count_messages_by_role([{"role": "user"}, {"role": "assistant"}, {"role": "user"}])
        {'user': 2, 'assistant': 1}
    """
    return dict(Counter(get_message_role(m) for m in messages))
