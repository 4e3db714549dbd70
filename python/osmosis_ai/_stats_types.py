"""Result types of :mod:`osmosis_ai.stats` (plain frozen dataclasses, re-exported there)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Comparison", "Interval", "ManyEstimate", "Summary"]


@dataclass(frozen=True)
class ManyEstimate:
    """An estimator over many rows.

    Attributes:
        mean: The mean over rows.
        rows: How many rows.
        values: Each row's value (``array('d')``, buffer-compatible: ``numpy.asarray`` reads it without
            a copy), or None when not asked for.
    """

    mean: float
    rows: int
    values: array[float] | None = None


@dataclass(frozen=True)
class Interval:
    """A confidence interval over rows.

    An interval the rows cannot support (fewer than 2 rows, fewer than 10 for the bootstrap, or no
    spread) is never drawn as a point: ``low`` and ``high`` are None and :attr:`note` says why.

    Attributes:
        estimate: The statistic on all rows.
        low: Lower bound, or None.
        high: Upper bound, or None.
        level: Confidence level, such as 0.95.
        method: ``"bootstrap"`` (percentile bootstrap over rows), ``"normal"`` (estimate ± t·se, Student's
            t for rows - 1 degrees of freedom), ``"wilson"`` or ``"t"``.
        note: Why there is no interval.
    """

    estimate: float
    low: float | None
    high: float | None
    level: float
    method: str
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The interval as plain data."""
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "method": self.method,
            "note": self.note,
        }


@dataclass(frozen=True)
class Summary:
    """The statistics of one score over rows of attempts.

    Attributes:
        mean: Mean over all scored attempts (None without any).
        std: Population standard deviation over the same scores.
        min: Smallest score.
        max: Largest score.
        count: Scores in mean / std / min / max.
        rows: Rows pushed.
        failed: Failed attempts (no score, or a non-finite one under ``nonfinite="fail"``).
        padded: Attempts missing from rows shorter than ``n_runs``; they count as failed for pass@k.
        min_attempts: The fewest attempts (``n``) of a row, after padding.
        max_attempts: The most attempts of a row.
        pass_threshold: An attempt passes when its score is >= this.
        failed_policy: ``"zero"``: failed attempts are scores of 0.0 in mean / std / min / max (the
            established eval's rule); ``"exclude"``: they are left out there. They never pass.
        pass_at_k: ``{k: mean over rows of pass@k}``.
        pass_hat_k: ``{k: mean over rows of pass^k}``.
        mixed_fraction: ``{threshold: share of rows with 0 < c < n}``: the rows whose attempts would
            give a group-relative RL update (GRPO-style) a non-zero advantage.
        intervals: Confidence intervals over rows by statistic name (``"mean"``, ``"pass_at_3"``,
            ``"pass_hat_3"``, ...), when asked for.
        errors: Attempts whose scorer raised (an eval function's exception): they are in no
            statistic above, neither as a score nor as a failure.
        variance: Population variance of the scores (``std`` squared).
        sample_variance: Sample variance of the scores (divided by count - 1): the unbiased estimate of
            the spread they come from; None below two scores. ``sample_std`` is its square root.
        error_messages: The first messages of those errors (from a results file).
        pass_at_k_rows: ``{k: rows in pass@k}``: fewer than :attr:`rows` when errors left a row with
            fewer than k attempts that count (such a row is left out at that k).
    """

    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    count: int
    rows: int
    failed: int
    padded: int
    min_attempts: int
    max_attempts: int
    pass_threshold: float
    failed_policy: str
    pass_at_k: dict[int, float]
    pass_hat_k: dict[int, float]
    mixed_fraction: dict[float, float]
    intervals: dict[str, Interval] = field(default_factory=dict)
    errors: int = 0
    variance: float | None = None
    sample_variance: float | None = None
    sample_std: float | None = None
    error_messages: tuple[str, ...] = ()
    pass_at_k_rows: dict[int, int] = field(default_factory=dict)

    @property
    def ks(self) -> tuple[int, ...]:
        """The k values of :attr:`pass_at_k`."""
        return tuple(self.pass_at_k)

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready data (mapping keys become strings).

        Example:
            >>> from osmosis_ai.stats import summarize
            >>> summarize([[1.0, 0.0]]).to_dict()["pass_at_k"]
            {'1': 0.5}
        """
        return {
            "mean": self.mean,
            "std": self.std,
            "min": self.min,
            "max": self.max,
            "count": self.count,
            "rows": self.rows,
            "failed": self.failed,
            "padded": self.padded,
            "min_attempts": self.min_attempts,
            "max_attempts": self.max_attempts,
            "pass_threshold": self.pass_threshold,
            "failed_policy": self.failed_policy,
            "pass_at_k": {str(k): v for k, v in self.pass_at_k.items()},
            "pass_hat_k": {str(k): v for k, v in self.pass_hat_k.items()},
            "mixed_fraction": {repr(t): v for t, v in self.mixed_fraction.items()},
            "intervals": {name: iv.to_dict() for name, iv in self.intervals.items()},
            "errors": self.errors,
            "variance": self.variance,
            "sample_variance": self.sample_variance,
            "sample_std": self.sample_std,
            "error_messages": list(self.error_messages),
            "pass_at_k_rows": {str(k): v for k, v in self.pass_at_k_rows.items()},
        }

    def to_established_dict(self) -> dict[str, float | None]:
        """The per-function summary of the established eval's results JSON: exactly ``mean``, ``std``,
        ``min``, ``max`` and, when rows have more than one attempt, ``pass_at_<k>`` per k.

        A summary without a scored attempt gives None (null, "n/a") for every value: a 0.0 made of
        failed attempts is not a score.

        Example:
            >>> from osmosis_ai.stats import summarize
            >>> summarize([[1.0, 0.0], [1.0, 1.0]]).to_established_dict()
            {'mean': 0.75, 'std': 0.433012701892219..., 'min': 0.0, 'max': 1.0, 'pass_at_1': 0.75}
        """
        # Under failed="zero" the failed attempts are 0.0 scores in count; they are not scores.
        scored = self.count - (self.failed if self.failed_policy == "zero" else 0) > 0
        out: dict[str, float | None] = {
            "mean": self.mean if scored else None,
            "std": self.std if scored else None,
            "min": self.min if scored else None,
            "max": self.max if scored else None,
        }
        if self.min_attempts > 1:
            out.update({f"pass_at_{k}": v if scored else None for k, v in self.pass_at_k.items()})
        return out


@dataclass(frozen=True)
class Comparison:
    """Paired differences ``a - b`` between two runs over the rows both hold.

    Attributes:
        rows: Rows present in both runs (matched by row index).
        differences: An :class:`Interval` of the difference per statistic (``"mean"``,
            ``"pass_at_1"``, ``"pass_hat_1"``, ...). A difference is real at the interval's level when
            the interval excludes 0.
    """

    rows: int
    differences: dict[str, Interval]

    def excludes_zero(self, name: str) -> bool:
        """Whether the interval of ``name`` lies entirely above or below 0 (False without an interval)."""
        interval = self.differences[name]
        if interval.low is None or interval.high is None:
            return False
        return interval.low > 0.0 or interval.high < 0.0

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain data."""
        return {"rows": self.rows, "differences": {k: v.to_dict() for k, v in self.differences.items()}}
