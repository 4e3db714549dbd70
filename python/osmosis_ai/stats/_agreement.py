"""Reward-change and judge-agreement statistics (computed in the Rust core)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from osmosis_ai import _core

__all__ = ["Agreement", "SignChanges", "advantage_sign_changes", "agreement"]


@dataclass(frozen=True)
class SignChanges:
    """Groups whose group-relative (GRPO-style) advantage signs differ between two scorings.

    Attributes:
        groups: Groups compared.
        groups_changed: Groups where at least one run's advantage changed sign.
        runs_changed: Runs whose advantage changed sign.
        changed: Indices (into the groups given) of the changed groups.
    """

    groups: int
    groups_changed: int
    runs_changed: int
    changed: tuple[int, ...]


def advantage_sign_changes(old: Sequence[Sequence[float]], new: Sequence[Sequence[float]]) -> SignChanges:
    """Compares the signs of ``r_i - mean(group)`` between two scorings of the same groups of runs.

    Args:
        old: One list of run scores per group.
        new: The same runs re-scored, group by group.

    Raises:
        StatsError: Groups of different sizes, or a NaN / infinite score.

    Example:
        >>> advantage_sign_changes([[1.0, 0.0], [1.0, 0.0]], [[0.5, 0.0], [1.0, 1.0]]).changed
        (1,)
    """
    lengths = [len(group) for group in old]
    if [len(group) for group in new] != lengths:
        from osmosis_ai.errors import StatsError

        raise StatsError("old and new scorings must have the same groups of runs")
    flat_old = [float(s) for group in old for s in group]
    flat_new = [float(s) for group in new for s in group]
    groups, changed_groups, runs, changed = _core.advantage_sign_changes(flat_old, flat_new, lengths)
    return SignChanges(groups, changed_groups, runs, tuple(changed))


@dataclass(frozen=True)
class Agreement:
    """A judge's agreement with gold labels.

    Attributes:
        count: Records with both a judge score and a label.
        mae: Mean absolute error.
        bias: Mean of judge - gold (positive: the judge is more generous).
        spearman: Spearman's rank correlation (None when a side is constant).
        kappa: Cohen's kappa of pass/fail at the threshold (None when chance agreement is 1).
    """

    count: int
    mae: float
    bias: float
    spearman: float | None
    kappa: float | None


def agreement(judge: Sequence[float], gold: Sequence[float], *, threshold: float = 0.5) -> Agreement:
    """MAE, bias, Spearman's rho and Cohen's kappa (after thresholding) of judge scores against labels.

    Example:
        >>> a = agreement([0.9, 0.2, 0.6, 0.4], [1.0, 0.0, 1.0, 0.0])
        >>> round(a.mae, 3), round(a.bias, 3), a.kappa
        (0.275, 0.025, 1.0)
    """
    data = _core.agreement([float(x) for x in judge], [float(x) for x in gold], float(threshold))
    return Agreement(**data)
