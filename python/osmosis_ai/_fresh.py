"""The default of a field whose fast dataclass ``__init__`` makes a new empty value per instance.

Its own module, importing nothing: the LLM layer's ``Reply`` and the agent contract's ``CompletionsResult``
both use it, and importing the contract must not load the LLM layer.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FRESH"]


class _Fresh:
    """A field not given to a fast dataclass ``__init__`` (Reply's, CompletionsResult's): a new empty value
    each time, as the field's ``default_factory`` gave."""

    def __repr__(self) -> str:
        return "<factory>"  # what the signature showed with the dataclass's own __init__


FRESH: Any = _Fresh()
