"""Metrics of a local ``eval run`` from its index rows (the platform's definitions), via the Rust statistics.

``pass_rate`` = passed / scored, where scored excludes skipped items and failed items count as non-passes;
``reward_stats`` covers the items that have a reward; pass@k (k = 1, 2, 4, ... up to the runs per row) is
the unbiased estimator averaged over rows with at least k non-skipped attempts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from osmosis_ai.stats import pass_at_k_many, score_median, summarize

__all__ = ["MetricsTally", "aggregate_metrics"]


def aggregate_metrics(rows: Iterable[Mapping[str, Any]], pass_threshold: float) -> dict[str, Any]:
    """The summary of ``metrics.json`` and the ``--json`` envelope from index rows.

    Example:
        >>> aggregate_metrics([{"row_index": 0, "run_index": 0, "status": "success", "reward": 1.0}], 1.0)["pass_rate"]
        1.0
    """
    tally = MetricsTally(pass_threshold)
    for row in rows:
        tally.add(row)
    return tally.summary()


class MetricsTally:
    """:func:`aggregate_metrics` a row at a time, keeping what the summary needs (counts, the rewards, each
    row's attempts and passes), not the rows."""

    def __init__(self, pass_threshold: float) -> None:
        self.pass_threshold = pass_threshold
        self.total = self.skipped = self.failed = self.graded = self.passed = self.tokens = 0
        self.max_run = -1
        self.rewards: list[float] = []
        self.attempts: dict[int, list[int]] = {}  # row -> [non-skipped attempts, passes]

    def add(self, row: Mapping[str, Any]) -> None:
        """Counts one index row."""
        self.total += 1
        self.tokens += int(row.get("tokens") or 0)
        self.max_run = max(self.max_run, int(row["run_index"]))
        status = row.get("status")
        if status == "skipped":
            self.skipped += 1
            return
        if status == "failed":
            self.failed += 1
        counts = self.attempts.setdefault(int(row["row_index"]), [0, 0])
        counts[0] += 1
        reward = row.get("reward")
        if isinstance(reward, (int, float)) and not isinstance(reward, bool):
            self.graded += 1
            self.rewards.append(float(reward))
            if reward >= self.pass_threshold:
                self.passed += 1
                counts[1] += 1

    def summary(self) -> dict[str, Any]:
        """The summary of the rows added so far."""
        scored = self.total - self.skipped
        summary: dict[str, Any] = {
            "total_samples": self.total,
            "completed_samples": scored,
            "graded": self.graded,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "pass_rate": self.passed / scored if scored else 0.0,
            "pass_threshold": self.pass_threshold,
            "tokens_used": self.tokens,
        }
        if self.rewards:
            summary["reward_stats"] = self._reward_stats()
        n_runs = self.max_run + 1
        if n_runs >= 2:
            summary["n_runs"] = n_runs
            points = self._pass_at_k(n_runs)
            if len(points) >= 2:
                summary["pass_at_k"] = points
        return summary

    def _reward_stats(self) -> dict[str, Any]:
        stats = summarize([[r] for r in self.rewards], pass_threshold=self.pass_threshold, ks=[1])
        return {
            "mean": stats.mean,
            "median": score_median(self.rewards),
            "std": stats.std,
            "min": stats.min,
            "max": stats.max,
        }

    def _pass_at_k(self, n_runs: int) -> list[dict[str, Any]]:
        points = []
        k = 1
        while k <= n_runs:
            eligible = [c for c in self.attempts.values() if c[0] >= k]
            if eligible:
                estimate = pass_at_k_many([c[0] for c in eligible], [c[1] for c in eligible], k)
                points.append({"k": k, "value": estimate.mean})
            k *= 2
        return points
