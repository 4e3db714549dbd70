"""Metrics of a local ``eval run`` (``metrics.json``'s ``summary``): the result model of its results log,
laid out under the platform's field names.

Every number is the result model's (:func:`osmosis_ai.results.read_results` of ``results.jsonl``), only
the median of the rewards is taken here from the index rows, as the model keeps no sorted scores.
``pass_rate`` = passed / runs that count (skipped items left out, failed items count as did not pass);
``reward_stats`` covers the items that have a reward; pass@k (k = 1, 2, 4, ... up to the run's n) counts
runs missing from an incomplete run as did not pass (``pass_at_k_observed``, added, leaves them out). When nothing was scored ``pass_rate`` is null (never
0) and there are no ``reward_stats`` or ``pass_at_k``; ``warnings`` (added to the platform's keys) holds
the model's warnings, each worded once in the core.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from osmosis_ai.results import FunctionResult, ResultSummary, read_results
from osmosis_ai.stats import score_median

__all__ = ["REWARD", "index_reward", "metrics_summary", "rewards_of"]

#: The score name of a 0.3 workflow's reward in an ``eval run``'s result model (a 0.2 loop's reward is
#: its eval function's score, under that function's name).
REWARD = "reward"


def index_reward(row: Mapping[str, Any]) -> float | None:
    """The reward of an index row that counts for the median (None: skipped, or no reward)."""
    reward = row.get("reward")
    if row.get("status") == "skipped" or not isinstance(reward, (int, float)) or isinstance(reward, bool):
        return None
    return float(reward)


def rewards_of(rows: Iterable[Mapping[str, Any]]) -> list[float]:
    """The rewards of index rows that count for the median, in order."""
    return [reward for row in rows if (reward := index_reward(row)) is not None]


def _pass_at_k(reward: FunctionResult) -> list[dict[str, Any]]:
    """``[{k, value}]`` at k = 1, 2, 4, ... (the platform's k), from the model's pass@k."""
    points = [{"k": k, "value": v} for k, v in reward.pass_at_k.items() if k & (k - 1) == 0]
    return points if len(points) >= 2 else []


def _reward(result: ResultSummary) -> FunctionResult | None:
    """The score the run's rewards are: its first declared name, ``reward`` (a 0.3 grader's, the core's
    default for an ``eval run`` log) or the 0.2 loop's eval function (``--eval-fn``, its first scorer)."""
    functions = result.model().functions if result.models else ()
    return functions[0] if functions else None


def metrics_summary(
    log_path: str | os.PathLike[str], pass_threshold: float, rewards: Sequence[float]
) -> tuple[dict[str, Any], ResultSummary]:
    """``metrics.json``'s ``summary`` (and the ``--json`` envelope's), with the result model it lays out.

    Args:
        log_path: The run's ``results.jsonl``.
        pass_threshold: A run passes when its reward is >= this.
        rewards: The rewards of the index rows (latest record per row and run; :func:`rewards_of`), for
            the median: the rows themselves stream past the end of a run, kept by no one.
    """
    # Rewards only: a failed item is not a 0.0 reward (the platform's reward_stats).
    result = read_results(log_path, pass_threshold=pass_threshold, failed="exclude")
    model = result.model() if result.models else None
    reward = _reward(result)
    runs = reward.runs if reward is not None else None
    total = runs.finished if runs is not None else 0
    skipped = runs.skipped if runs is not None else 0
    summary: dict[str, Any] = {
        "total_samples": total,
        "completed_samples": total - skipped,
        "graded": reward.graded if reward is not None else 0,
        "passed": reward.passed if reward is not None else 0,
        "failed": model.failed_runs if model is not None else 0,
        "skipped": skipped,
        "pass_rate": reward.pass_rate if reward is not None else None,
        "pass_threshold": pass_threshold,
        "tokens_used": model.total_tokens if model is not None else 0,
    }
    if reward is not None and reward.graded:
        summary["reward_stats"] = {
            "mean": reward.mean,
            "median": score_median(rewards),
            "std": reward.std,
            "min": reward.min,
            "max": reward.max,
        }
    if result.n_runs is not None and result.n_runs >= 2:
        summary["n_runs"] = result.n_runs
        points = _pass_at_k(reward) if reward is not None else []
        if points:
            summary["pass_at_k"] = points
            if reward is not None and reward.runs.missing:
                # What the incomplete warning promises beside pass@k: the value over the runs present.
                observed = reward.pass_at_k_observed
                summary["pass_at_k_observed"] = [{"k": p["k"], "value": observed.get(p["k"])} for p in points]
    summary["warnings"] = [{"code": w.code, "message": w.message} for w in result.warnings]
    return summary, result
