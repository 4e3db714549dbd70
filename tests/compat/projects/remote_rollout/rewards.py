"""The reward: the last number of the answer against the ground truth."""

from __future__ import annotations

import re

from osmosis_ai import osmosis_reward


@osmosis_reward
def compute_reward(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    numbers = re.findall(r"-?\d+(?:\.\d+)?", solution_str or "")
    if not numbers:
        return 0.0
    try:
        return float(abs(float(numbers[-1]) - float(ground_truth)) < 1e-7)
    except ValueError:
        return 0.0
