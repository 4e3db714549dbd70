"""Compatibility path ``osmosis_ai.rollout.utils`` (0.2.x): re-exports only."""

from osmosis_ai.rollout.messages import (
    count_messages_by_role,
    get_message_content,
    get_message_role,
    is_assistant_message,
    is_tool_message,
    is_user_message,
    normalize_stop,
    parse_tool_calls,
)

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
