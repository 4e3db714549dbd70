"""The reward the documented `--eval-fn reward_fn.compute_reward:numbers_match_reward` names."""

import re

from osmosis_ai import osmosis_reward


@osmosis_reward
def numbers_match_reward(solution_str: str, ground_truth: str, extra_info: dict = None, **kwargs) -> float:
    found = re.search(r"####\s*([-+]?\d*\.?\d+)", solution_str or "")
    if found is None:
        return 0.0
    return float(abs(float(found.group(1)) - float(ground_truth)) < 1e-7)
