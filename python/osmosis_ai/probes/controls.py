"""The answers a probe scores for one row: the correct answer in common formats, and negative controls.

* *Correct formats*: the row's ``ground_truth`` as written and as models commonly give it (whitespace
  around it, ``#### x``, ``The answer is x``, ``\\boxed{x}``). A sound reward pays each of them; one that
  pays some of them less is too strict for answers it will see.
* *Controls*: answers a sound reward must not pay as much as the correct one. Each is built so that a
  reward that reads the final answer (the last number, say) gives it nothing, while a reward that looks
  for the answer anywhere, counts it, or is fooled by length pays it.

A control that does not apply to a row is ``None`` and that row is left out of that probe's fraction:
a numeric control of a non-numeric answer, a unit swap of an answer without a unit, an echo of a question
that itself holds the answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CORRECT_FORMS", "PROBES", "PROBE_HELP", "build_controls", "correct_answer", "correct_forms"]

PROBE_HELP: dict[str, str] = {
    "empty": "the empty answer",
    "echo": "the question echoed back",
    "buried": "the answer mentioned in a long reply whose final answer is wrong",
    "all_numbers": "the 101 numbers around the answer, in order",
    "repeated": "the answer repeated 50 times, then a wrong final answer",
    "truncated": "the first half of the answer (of its digits, for a number)",
    "other_row": "another row's answer",
    "wrong_unit": "the number with another unit",
}
PROBES: tuple[str, ...] = tuple(PROBE_HELP)

CORRECT_FORMS: dict[str, str] = {
    "correct": "as written",
    "correct_spaced": "with whitespace around it",
    "correct_hashes": "as '#### x'",
    "correct_sentence": "as 'The answer is x'",
    "correct_boxed": "as '\\boxed{x}'",
}

# A number as an answer is written: sign, digits (with thousands commas or not), decimals, then a unit.
_NUMBER = re.compile(r"^\s*(-?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*([A-Za-z%°µ$€£][\w%°/$€£]*)?\s*$")
# A unit swapped for another of the same dimension: right number, wrong answer.
_OTHER_UNIT = {"m": "km", "km": "m", "cm": "mm", "mm": "cm", "kg": "g", "g": "kg", "s": "ms", "ms": "s"}
_OTHER_UNIT.update({"h": "min", "min": "h", "l": "ml", "ml": "l", "°c": "°F", "°f": "°C", "%": "‰"})
_SPAN = 50  # all_numbers lists the answer +- this many steps of its last digit


@dataclass(frozen=True)
class _Number:
    """A numeric answer as written: ``units`` steps of ``10**-decimals``, in the answer's style."""

    units: int
    decimals: int
    grouped: bool
    unit: str | None

    @classmethod
    def parse(cls, answer: str) -> _Number | None:
        match = _NUMBER.match(answer)
        if match is None:
            return None
        sign, whole, fraction, unit = match.groups()
        units = int(whole.replace(",", "") + (fraction or ""))
        return cls(-units if sign else units, len(fraction or ""), "," in whole, unit)

    def text(self, units: int) -> str:
        """``units`` written like the answer (its decimals and thousands commas), without the unit."""
        digits = str(abs(units)).rjust(self.decimals + 1, "0")
        whole, fraction = digits[: len(digits) - self.decimals], digits[len(digits) - self.decimals :]
        if self.grouped:
            whole = f"{int(whole):,}"
        return ("-" if units < 0 else "") + whole + (f".{fraction}" if fraction else "")


def correct_answer(row: Mapping[str, Any]) -> str:
    """The row's ground truth as the text a model would answer with."""
    value = row.get("ground_truth")
    return "" if value is None else value if isinstance(value, str) else str(value)


def correct_forms(answer: str) -> dict[str, str | None]:
    """The correct answer in each of :data:`CORRECT_FORMS` (only ``correct`` for an empty answer).

    Example:
        >>> correct_forms("42")["correct_boxed"]
        '\\\\boxed{42}'
    """
    core = answer.strip()
    return {
        "correct": answer,
        "correct_spaced": f"\n  {core}  \n" if core else None,
        "correct_hashes": f"#### {core}" if core else None,
        "correct_sentence": f"The answer is {core}" if core else None,
        "correct_boxed": f"\\boxed{{{core}}}" if core else None,
    }


def _wrong_unit(number: _Number | None) -> str | None:
    if number is None or number.unit is None:
        return None  # a bare number has no unit to get wrong
    unit = number.unit.lower()
    swapped = _OTHER_UNIT.get(unit, "kg" if unit != "kg" else "g")
    return f"{number.text(number.units)} {swapped}"


def _wrong(answer: str, number: _Number | None) -> str:
    # A different final answer: the next number up, in the answer's style; for text, a refusal to pick.
    return number.text(number.units + 1) if number is not None else "none of the above"


def _buried(answer: str, wrong: str) -> str:
    # A wrong final answer that mentions the right one on the way: substring matches pay for it.
    return (
        "Let me think about this carefully. There are several candidate answers worth considering here. "
        f"Some might say {answer}, but that reading ignores half of the question, and other readings "
        "fail for similar reasons once the details are checked one by one. After weighing them all, "
        f"my final answer is {wrong}."
    )


def _all_numbers(number: _Number | None) -> str | None:
    # Around the answer's own magnitude and precision (a list of 0..100 misses every answer above 100);
    # ascending, so the last number is not the answer.
    if number is None:
        return None
    return " ".join(number.text(number.units + step) for step in range(-_SPAN, _SPAN + 1))


def _truncated(answer: str, number: _Number | None) -> str | None:
    # A number is cut in its digits ("1234" -> "12"; "3 m" has no shorter number); text in its characters.
    text = number.text(number.units) if number is not None else answer
    cut = text[: len(text) // 2]
    wanted = any(c.isdigit() for c in cut) if number is not None else bool(cut.strip())
    return cut if wanted else None


def _holds(question: str, answer: str, number: _Number | None) -> bool:
    """Whether the answer (or its number) stands as a word or number of its own in ``question``."""
    cores = {answer.strip(), number.text(number.units)} if number is not None else {answer.strip()}
    return any(
        re.search(rf"(?<![\w.]){re.escape(core)}(?![\w]|\.\d)", question, re.I) is not None
        for core in cores
        if core
    )


def build_controls(row: Mapping[str, Any], other_answer: str | None) -> dict[str, str | None]:
    """Every control of one row, by probe name (``None`` where the probe does not apply).

    Args:
        row: The dataset row (``ground_truth``, ``user_prompt``).
        other_answer: A different row's correct answer, or None when every row has the same one.

    Example:
        >>> controls = build_controls({"user_prompt": "What is 2+2?", "ground_truth": "4"}, "7")
        >>> controls["echo"], controls["repeated"][-6:], controls["all_numbers"][-8:], controls["wrong_unit"]
        ('What is 2+2?', '4 4 5.', '52 53 54', None)
        >>> build_controls({"user_prompt": "What is 8 / 2 in m? 4?", "ground_truth": "4 m"}, None)["echo"]
        >>> build_controls({"ground_truth": "1,250.5 kg"}, None)["wrong_unit"]
        '1,250.5 g'
    """
    answer = correct_answer(row)
    number = _Number.parse(answer)
    wrong = _wrong(answer, number)
    question = row.get("user_prompt")
    echo = question if isinstance(question, str) and question.strip() else None
    return {
        "empty": "",
        # A question that holds the answer is not a wrong answer when echoed.
        "echo": echo if echo is not None and not _holds(echo, answer, number) else None,
        "buried": _buried(answer, wrong) if answer.strip() else None,
        "all_numbers": _all_numbers(number),
        "repeated": " ".join([answer.strip()] * 50) + f" {wrong}." if answer.strip() else None,
        "truncated": _truncated(answer, number),
        "other_row": other_answer if other_answer is not None and other_answer != answer else None,
        "wrong_unit": _wrong_unit(number),
    }
