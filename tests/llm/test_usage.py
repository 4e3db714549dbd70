"""Token accounting of chat-completion bodies: dicts and other mappings alike, anything else adds nothing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import pytest

from osmosis_ai.llm.usage import Usage


class _Body(Mapping[str, Any]):
    """A mapping that is not a dict (the general path)."""

    def __init__(self, **items: Any) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"usage": {"prompt_tokens": 3, "completion_tokens": 4}}, (3, 4, 7)),
        ({"usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 9}}, (3, 4, 9)),
        (_Body(usage=MappingProxyType({"prompt_tokens": 2, "completion_tokens": None})), (2, 0, 2)),
        ({"usage": _Body(prompt_tokens=1, completion_tokens=1)}, (1, 1, 2)),
        ({"usage": [3, 4]}, (0, 0, 0)),
        ({"usage": None}, (0, 0, 0)),
        ([("usage", {"prompt_tokens": 3})], (0, 0, 0)),
        (None, (0, 0, 0)),
    ],
)
def test_add_response_counts_the_usage_of_any_mapping(raw: Any, expected: tuple[int, int, int]) -> None:
    usage = Usage()
    usage.add_response(raw)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == expected
