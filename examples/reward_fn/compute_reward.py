"""Reward functions for the shipped arithmetic example, in the established `@osmosis_reward` style."""

import re

from osmosis_ai import osmosis_reward

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _last_number(text: str) -> float | None:
    numbers = _NUMBER.findall(text.replace(",", ""))
    return float(numbers[-1]) if numbers else None


@osmosis_reward
def numbers_match_reward(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    """1.0 when the last number in the answer equals the expected number, else 0.0."""
    answer = _last_number(solution_str)
    expected = _last_number(ground_truth)
    return float(answer is not None and expected is not None and abs(answer - expected) < 1e-6)


@osmosis_reward
def has_number_reward(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    """Partial credit for committing to a numeric answer at all."""
    return float(_last_number(solution_str) is not None)
