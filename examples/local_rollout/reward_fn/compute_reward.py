"""Reward functions (`--eval-fn reward_fn.compute_reward:NAME`), in the established `@osmosis_reward` style."""

import re

from osmosis_ai import osmosis_reward

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@osmosis_reward
def numbers_match_reward(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    """1.0 when the last number in the answer equals the expected number, else 0.0."""
    numbers = _NUMBER.findall(solution_str.replace(",", ""))
    return float(bool(numbers) and abs(float(numbers[-1]) - float(ground_truth)) < 1e-6)
