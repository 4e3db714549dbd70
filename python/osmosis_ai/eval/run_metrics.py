"""Metrics of a local ``eval run`` from its index rows (the platform's definitions), via the Rust statistics.

``pass_rate`` = passed / scored, where scored excludes skipped items and failed items count as non-passes;
``reward_stats`` covers the items that have a reward; pass@k (k = 1, 2, 4, ... up to the runs per row) is
the unbiased estimator averaged over rows with at least k non-skipped attempts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from osmosis_ai.stats import pass_at_k_many, score_median, summarize

__all__ = ["aggregate_metrics"]


def aggregate_metrics(rows: Iterable[Mapping[str, Any]], pass_threshold: float) -> dict[str, Any]:
    """The summary of ``metrics.json`` and the ``--json`` envelope from index rows.

    Example:
        >>> aggregate_metrics([{"row_index": 0, "run_index": 0, "status": "success", "reward": 1.0}], 1.0)["pass_rate"]
        1.0
    """
    total = skipped = failed = graded = passed = tokens = 0
    max_run = -1
    rewards: list[float] = []
    attempts: dict[int, list[int]] = {}  # row -> [non-skipped attempts, passes]
    for row in rows:
        total += 1
        tokens += int(row.get("tokens") or 0)
        max_run = max(max_run, int(row["run_index"]))
        status = row.get("status")
        if status == "skipped":
            skipped += 1
            continue
        if status == "failed":
            failed += 1
        counts = attempts.setdefault(int(row["row_index"]), [0, 0])
        counts[0] += 1
        reward = row.get("reward")
        if isinstance(reward, (int, float)) and not isinstance(reward, bool):
            graded += 1
            rewards.append(float(reward))
            if reward >= pass_threshold:
                passed += 1
                counts[1] += 1
    scored = total - skipped
    summary: dict[str, Any] = {
        "total_samples": total,
        "completed_samples": scored,
        "graded": graded,
        "passed": passed,
        "failed": failed,
        "skipped": skipped,
        "pass_rate": passed / scored if scored else 0.0,
        "pass_threshold": pass_threshold,
        "tokens_used": tokens,
    }
    if rewards:
        stats = summarize([[r] for r in rewards], pass_threshold=pass_threshold, ks=[1])
        summary["reward_stats"] = {
            "mean": stats.mean,
            "median": score_median(rewards),
            "std": stats.std,
            "min": stats.min,
            "max": stats.max,
        }
    n_runs = max_run + 1
    if n_runs >= 2:
        summary["n_runs"] = n_runs
        points = []
        k = 1
        while k <= n_runs:
            eligible = [c for c in attempts.values() if c[0] >= k]
            if eligible:
                estimate = pass_at_k_many([c[0] for c in eligible], [c[1] for c in eligible], k)
                points.append({"k": k, "value": estimate.mean})
            k *= 2
        if len(points) >= 2:
            summary["pass_at_k"] = points
    return summary
