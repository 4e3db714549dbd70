"""`metrics.json` of `osmosis eval run` (anchor-0.3 §4.8) against a plain-Python reference: rewards in
(0, 1), several runs per row, the pass_threshold edges 0.0 and 1.0."""

from __future__ import annotations

import math
from itertools import combinations

import pytest

from osmosis_ai.eval.run_metrics import aggregate_metrics

REWARDS = {0: [0.9, 0.2, 0.5], 1: [1.0, 0.0, 0.7], 2: [0.5, 0.3, 1.0], 3: [0.6, 0.1, 0.8]}


def _rows() -> list[dict]:
    return [
        {"row_index": r, "run_index": k, "status": "success", "reward": v, "tokens": 10}
        for r, values in REWARDS.items()
        for k, v in enumerate(values)
    ]


def _pass_at_k(flags: list[bool], k: int) -> float:
    draws = list(combinations(flags, k))
    return sum(any(d) for d in draws) / len(draws)


@pytest.mark.parametrize("threshold", [0.0, 0.5, 1.0])
def test_summary_matches_the_reference(threshold: float) -> None:
    summary = aggregate_metrics(_rows(), threshold)
    values = sorted(v for vs in REWARDS.values() for v in vs)
    mean = sum(values) / len(values)
    assert summary["passed"] == sum(v >= threshold for v in values)
    assert summary["pass_rate"] == pytest.approx(summary["passed"] / 12)
    stats = summary["reward_stats"]
    assert stats["mean"] == pytest.approx(mean)
    assert stats["median"] == pytest.approx((values[5] + values[6]) / 2)  # an even count: the middle two
    assert stats["std"] == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))
    assert (stats["min"], stats["max"]) == (0.0, 1.0)
    assert summary["n_runs"] == 3
    for point in summary["pass_at_k"]:
        expected = [_pass_at_k([v >= threshold for v in vs], point["k"]) for vs in REWARDS.values()]
        assert point["value"] == pytest.approx(sum(expected) / len(expected))
    assert [p["k"] for p in summary["pass_at_k"]] == [1, 2]


def test_median_of_an_odd_count_and_failed_items_without_reward() -> None:
    rows = [
        {"row_index": 0, "run_index": 0, "status": "success", "reward": 0.25},
        {"row_index": 1, "run_index": 0, "status": "success", "reward": 0.75},
        {"row_index": 2, "run_index": 0, "status": "success", "reward": 0.5},
        {"row_index": 3, "run_index": 0, "status": "failed"},
    ]
    summary = aggregate_metrics(rows, 0.0)
    assert summary["reward_stats"]["median"] == 0.5
    assert (summary["graded"], summary["passed"], summary["failed"]) == (3, 3, 1)
    assert summary["pass_rate"] == 0.75  # a failed item without reward is a non-pass among the scored
