"""Negative controls: answers built from a row that a sound reward must not pay as much as the real one.

Each control is a string built from the row's ``ground_truth`` (the correct answer) and ``user_prompt``.
A control that does not apply to a row (a truncation of a one-character answer, a unit swap of an answer
that is not a number) is ``None`` and that row is left out of that probe's fraction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["PROBES", "PROBE_HELP", "build_controls", "correct_answer"]

PROBE_HELP: dict[str, str] = {
    "empty": "the empty answer",
    "echo": "the question echoed back",
    "buried": "the ground truth inside a long wrong answer",
    "all_numbers": "every number from 0 to 100 listed",
    "repeated": "the correct answer repeated 50 times",
    "truncated": "the first half of the correct answer",
    "other_row": "another row's correct answer",
    "wrong_unit": "the correct number with a wrong unit",
}
PROBES: tuple[str, ...] = tuple(PROBE_HELP)

_NUMBER_WITH_UNIT = re.compile(r"^\s*(-?\d+(?:[.,]\d+)?)\s*([A-Za-z%°]+)?\s*$")
# A unit swapped for one of the same dimension: right number, wrong answer.
_OTHER_UNIT = {"m": "km", "km": "m", "cm": "mm", "mm": "cm", "kg": "g", "g": "kg", "s": "ms", "ms": "s"}
_OTHER_UNIT.update({"h": "min", "min": "h", "l": "ml", "ml": "l", "%": "", "$": "", "°c": "°F"})


def correct_answer(row: Mapping[str, Any]) -> str:
    """The row's ground truth as the text a model would answer with."""
    value = row.get("ground_truth")
    return "" if value is None else value if isinstance(value, str) else str(value)


def _wrong_unit(answer: str) -> str | None:
    match = _NUMBER_WITH_UNIT.match(answer)
    if match is None:
        return None
    number, unit = match.group(1), match.group(2)
    if not unit:
        return f"{number} kg"
    swapped = _OTHER_UNIT.get(unit.lower(), "kg" if unit.lower() != "kg" else "g")
    return f"{number} {swapped}".rstrip() if swapped else number


def _buried(answer: str) -> str:
    # A wrong final answer that mentions the right one on the way: substring matches pay for it.
    wrong = _decoy(answer)
    return (
        "Let me think about this carefully. There are several candidate answers worth considering here. "
        f"Some might say {answer}, but that reading ignores half of the question, and other readings "
        "fail for similar reasons once the details are checked one by one. After weighing them all, "
        f"my final answer is {wrong}."
    )


def _decoy(answer: str) -> str:
    match = _NUMBER_WITH_UNIT.match(answer)
    if match is not None:
        number = match.group(1).replace(",", ".")
        value = float(number) + 1
        return str(int(value)) if "." not in number else f"{value:g}"
    return "none of the above"


def build_controls(row: Mapping[str, Any], other_answer: str | None) -> dict[str, str | None]:
    """Every control of one row, by probe name (``None`` where the probe does not apply).

    Args:
        row: The dataset row (``ground_truth``, ``user_prompt``).
        other_answer: A different row's correct answer, or None when every row has the same one.

    Example:
        >>> controls = build_controls({"user_prompt": "2+2?", "ground_truth": "4"}, "7")
        >>> controls["empty"], controls["echo"], controls["wrong_unit"], controls["truncated"]
        ('', '2+2?', '4 kg', None)
    """
    answer = correct_answer(row)
    half = len(answer) // 2
    question = row.get("user_prompt")
    controls: dict[str, str | None] = {
        "empty": "",
        "echo": question if isinstance(question, str) and question.strip() else None,
        "buried": _buried(answer) if answer else None,
        "all_numbers": " ".join(str(i) for i in range(101)),
        "repeated": " ".join([answer] * 50) if answer else None,
        "truncated": answer[:half] if half and answer[:half].strip() else None,
        "other_row": other_answer if other_answer is not None and other_answer != answer else None,
        "wrong_unit": _wrong_unit(answer),
    }
    return controls
