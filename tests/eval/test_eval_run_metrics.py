"""`metrics.json` of `osmosis eval run` (anchor-0.3 §4.8) against a plain-Python reference: rewards in
(0, 1), several runs per row, the pass_threshold edges 0.0 and 1.0; nothing scored is null."""

from __future__ import annotations

import json
import math
import tempfile
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.eval.run_metrics import metrics_summary, rewards_of


def aggregate_metrics(rows: list[dict[str, Any]], threshold: float, n: int | None = None) -> dict[str, Any]:
    """The metrics of the index ``rows`` written as the run's results log (as the workflow executor does)."""
    log = Path(tempfile.mkdtemp()) / "results.jsonl"
    n = n or max(r["run_index"] for r in rows) + 1
    lines = [{"format": "osmosis-results/1", "kind": "eval-run", "config": {"n": n}}]
    for row in rows:
        record = {**row, "success": row["status"] == "success"}
        if isinstance(row.get("reward"), (int, float)):
            record["scores"] = {"reward": row["reward"]}
        lines.append(record)
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return metrics_summary(log, threshold, rewards_of(rows))[0]


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


def test_nothing_scored_is_null_not_zero() -> None:
    # Finding 1 of issue #28: every item failed; the old metrics said "graded": 0, "pass_rate": 0.0.
    rows = [{"row_index": r, "run_index": 0, "status": "failed", "tokens": 3} for r in range(5)]
    summary = aggregate_metrics(rows, 1.0)
    assert (summary["graded"], summary["failed"], summary["pass_rate"]) == (0, 5, None)
    assert "reward_stats" not in summary and "pass_at_k" not in summary
    assert [w["code"] for w in summary["warnings"]][-1] == "nothing_scored"


def test_missing_runs_count_as_did_not_pass_and_are_warned() -> None:
    rows = [{"row_index": r, "run_index": 0, "status": "success", "reward": 1.0} for r in range(2)]
    rows.append({"row_index": 0, "run_index": 1, "status": "success", "reward": 0.0})
    summary = aggregate_metrics(rows, 1.0, n=2)
    # row 1's second run is missing: pass@2 = (1 + 1) / 2, pass@1 = (0.5 + 0.5) / 2
    assert [(p["k"], p["value"]) for p in summary["pass_at_k"]] == [(1, 0.5), (2, 1.0)]
    [warning] = [w for w in summary["warnings"] if w["code"] == "incomplete"]
    assert "1 of 4 planned runs are missing" in warning["message"]
    # The warning says the observed-only value is given beside it: it is (finding 15). Over the runs
    # present: row 0 passes 1 of 2 (pass@1 0.5), row 1 1 of 1 (1.0); at k = 2 only row 0 has 2 runs.
    assert [(p["k"], p["value"]) for p in summary["pass_at_k_observed"]] == [(1, 0.75), (2, 1.0)]
    from osmosis_ai.cli.eval_run_report import pass_at_k_lines

    assert pass_at_k_lines(summary) == [
        "  pass@k:      k=1 0.50 · k=2 1.00",
        "  (observed):  k=1 0.75 · k=2 1.00 (over the runs present only)",
    ]
