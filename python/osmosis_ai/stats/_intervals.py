"""Confidence intervals over rows, and paired comparisons of two runs."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from osmosis_ai import _core
from osmosis_ai._stats_input import as_int, pack_values
from osmosis_ai._stats_types import Comparison, Interval
from osmosis_ai.errors import StatsError

if TYPE_CHECKING:
    from osmosis_ai.stats._aggregator import Aggregator

__all__ = ["IntervalMethod", "compare", "confidence_interval"]

IntervalMethod = Literal["bootstrap", "normal"]


def _z(level: float, method: str) -> float:
    if not 0.0 < level < 1.0:
        raise StatsError(f"level must be between 0 and 1, got {level}", field="level")
    if method not in ("bootstrap", "normal"):
        raise StatsError(f'method must be "bootstrap" or "normal", got {method!r}', field="method")
    return statistics.NormalDist().inv_cdf(0.5 + level / 2.0)


def _interval(name: str, raw: tuple[float, float, float] | None, level: float, method: str) -> Interval:
    if raw is None:
        raise StatsError(f"{name}: a confidence interval needs at least 2 rows with attempts", field=name)
    return Interval(estimate=raw[0], low=raw[1], high=raw[2], level=level, method=method)


def confidence_interval(
    values: Any,
    *,
    weights: Any = None,
    level: float = 0.95,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
) -> Interval:
    """A confidence interval for the mean over rows of per-row values.

    With ``weights`` the statistic is ``sum(values) / sum(weights)`` (for example score sums over
    attempts per row). The bootstrap resamples rows with a seeded generator, so the same seed gives
    the same interval on every platform; ``"normal"`` is ``estimate ± z·se``.

    Args:
        values: Per-row values, such as ``pass_at_k_many(..., per_row=True).values``.
        weights: Optional per-row weights.
        level: Confidence level in (0, 1).
        method: ``"bootstrap"`` or ``"normal"``.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        An :class:`Interval`.

    Raises:
        StatsError: on NaN / infinite values (naming the row), fewer than 2 rows, a bad level.

    Example:
        >>> iv = confidence_interval([0.0, 1.0, 1.0, 1.0], method="normal")
        >>> (iv.estimate, round(iv.low, 3), round(iv.high, 3))
        (0.75, 0.26, 1.24)
    """
    z = _z(level, method)
    data, code = pack_values(values, "values")
    packed_weights = pack_values(weights, "weights") if weights is not None else None
    raw = _core.row_interval(data, code, method, level, z, resamples, seed, packed_weights)
    return _interval("values", raw, level, method)


def compare(
    a: Aggregator,
    b: Aggregator,
    *,
    ks: Iterable[int] | None = None,
    level: float = 0.95,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
) -> Comparison:
    """Is run ``a`` really better than run ``b``? Paired intervals of ``a - b`` over shared rows.

    Rows are matched by their row index (``row_index`` given to :meth:`Aggregator.push`, else the
    push position). Pairing removes the prompt-to-prompt variance both runs share, so a paired
    interval is much tighter than comparing two separate intervals. The bootstrap resamples rows
    (both runs' values of a row together) with ``seed``; ``"normal"`` uses the linearised standard
    error of the difference.

    Args:
        a: The first run.
        b: The second run.
        ks: The k values; default those both runs' summaries report.
        level: Confidence level in (0, 1).
        method: ``"bootstrap"`` or ``"normal"``.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        A :class:`Comparison`.

    Raises:
        StatsError: when fewer than 2 rows are shared, a row index was pushed twice, or a k is above
            some row's attempts.

    Example:
        >>> a, b = Aggregator(), Aggregator()
        >>> for i in range(40):
        ...     a.push([1.0, 1.0, float(i % 2)])
        ...     b.push([1.0, float(i % 2), 0.0])
        >>> result = compare(a, b, method="normal")
        >>> (result.rows, round(result.differences["pass_at_1"].estimate, 4), result.excludes_zero("mean"))
        (40, 0.3333, True)
    """
    z = _z(level, method)
    if ks is None:
        k_list = [k for k in a.finish().ks if k in b.finish().ks]
    else:
        k_list = [as_int(k, "ks") for k in ks]
        if any(k < 1 for k in k_list):
            raise StatsError(f"every k must be >= 1, got {k_list}", field="ks")
    rows, raw = a._core.compare(b._core, k_list, method, level, z, resamples, seed)
    if rows < 2:
        raise StatsError(f"the runs share {rows} rows; a comparison needs at least 2", field="rows")
    return Comparison(rows=rows, differences={name: _interval(name, iv, level, method) for name, iv in raw})
