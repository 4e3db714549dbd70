"""Confidence intervals over rows, and paired comparisons of two runs."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from osmosis_ai import _core
from osmosis_ai._stats_input import as_int, pack_values
from osmosis_ai._stats_types import Comparison, Interval
from osmosis_ai.errors import StatsError

if TYPE_CHECKING:
    from osmosis_ai.stats._aggregator import Aggregator

__all__ = ["MIN_BOOTSTRAP_ROWS", "IntervalMethod", "ValuesIntervalMethod", "compare", "confidence_interval"]

IntervalMethod = Literal["bootstrap", "normal"]


def _check_method(level: float, method: str) -> None:
    if not 0.0 < level < 1.0:
        raise StatsError(f"level must be between 0 and 1, got {level}", field="level")
    if method not in ("bootstrap", "normal"):
        raise StatsError(f'method must be "bootstrap" or "normal", got {method!r}', field="method")


def _interval(
    name: str, raw: tuple[float, float, float] | None, level: float, method: str, rows: int
) -> Interval:
    """The core's interval over ``rows`` rows (the normal one is Student's t already, kept inside what the
    statistic can be), or none (a note instead) where the rows cannot support one."""
    if raw is None:
        raise StatsError(f"{name}: a confidence interval needs at least 2 rows with attempts", field=name)
    estimate, low, high = raw
    if method == "bootstrap" and rows < MIN_BOOTSTRAP_ROWS:
        note = f"{rows} rows: the bootstrap needs at least {MIN_BOOTSTRAP_ROWS} (choose the normal interval)"
        return Interval(estimate=estimate, low=None, high=None, level=level, method=method, note=note)
    if high - low <= 1e-12 * max(1.0, abs(estimate)):
        note = f"the {rows} rows have no spread to estimate an interval from"
        return Interval(estimate=estimate, low=None, high=None, level=level, method=method, note=note)
    return Interval(estimate=estimate, low=low, high=high, level=level, method=method)


#: ``confidence_interval``'s methods: ``"auto"`` is Wilson for values in [0, 1], else Student's t.
ValuesIntervalMethod = Literal["auto", "wilson", "t", "normal", "bootstrap"]

#: Fewer rows than this give no bootstrap interval: resampling a handful of rows is surer than the data.
MIN_BOOTSTRAP_ROWS = 10


def _level(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise StatsError(f"level must be between 0 and 1, got {level}", field="level")
    return level


_STRUCT = {"f4": "f", "f8": "d", "b1": "?", "i1": "b", "i2": "h", "i4": "i", "i8": "q"}
_STRUCT.update({"u1": "B", "u2": "H", "u4": "I", "u8": "Q"})


def _floats(data: bytes, code: str) -> list[float]:
    """Packed values as floats; a NaN or infinite one is refused naming its row (as the core does)."""
    # typeshed types cast() per literal format; the format here comes from the code's table.
    values = [float(x) for x in memoryview(data).cast(_STRUCT[code])]  # type: ignore[call-overload]
    for row, x in enumerate(values):
        if not math.isfinite(x):
            shown = "NaN" if math.isnan(x) else ("inf" if x > 0 else "-inf")  # the core's wording
            raise StatsError(f"row {row}: values is {shown}", row=row, field="values")
    return values


def _wilson(values: list[float], level: float) -> Interval:
    """Wilson's score interval with the rows as trials: a value in [0, 1] varies at most as a pass/fail
    one does, so this is exact for 0/1 values and never surer than the rows for fractions."""
    rows = len(values)
    mean = math.fsum(values) / rows
    z = statistics.NormalDist().inv_cdf(0.5 + level / 2.0)
    low, high = _core.wilson_interval(min(1.0, max(0.0, mean)), float(rows), z)
    return Interval(estimate=mean, low=low, high=high, level=level, method="wilson")


def _check_spread(raw: tuple[float, float, float] | None, level: float, rows: int, method: str) -> Interval:
    if raw is None:
        raise StatsError("values: a confidence interval needs at least 2 rows", field="values")
    interval = Interval(estimate=raw[0], low=raw[1], high=raw[2], level=level, method=method)
    if raw[2] - raw[1] <= 1e-12 * max(1.0, abs(raw[0])):
        raise StatsError(
            f"values: the {rows} rows have no spread, so a {method} interval would be the point "
            f'{interval.estimate:g}; for pass rates (values in [0, 1]) use method="wilson"',
            field="values",
        )
    return interval


def confidence_interval(
    values: Any,
    *,
    weights: Any = None,
    level: float = 0.95,
    method: ValuesIntervalMethod = "auto",
    resamples: int = 1000,
    seed: int = 0,
) -> Interval:
    """A confidence interval for the mean over rows of per-row values, never surer than the data.

    * ``"wilson"``: Wilson's score interval with the rows as trials, for pass rates (per-row values in
      [0, 1]): it stays inside [0, 1] and is not a point when every row passed (five passes of five give
      [0.566, 1]).
    * ``"t"`` (alias ``"normal"``): ``estimate ± t·se`` with Student's t for rows - 1 degrees of freedom
      and the row-clustered standard error, cut to [0, 1] when every row's value (over its weight) lies
      there; with ``weights`` the statistic is ``sum(values) / sum(weights)`` (for example score sums
      over attempts per row), and rows of weight 0 (rows without data) are not counted as rows.
    * ``"bootstrap"``: the percentile bootstrap over rows with a seeded generator (the same seed gives
      the same interval on every platform); it needs at least 10 rows.
    * ``"auto"`` (default): Wilson when there are no weights and every value is in [0, 1], else t.

    An interval the data cannot support (one row for t or the bootstrap, rows without spread) is an
    error that says so, never a point.

    Args:
        values: Per-row values, such as ``pass_at_k_many(..., per_row=True).values``.
        weights: Optional per-row weights (t and bootstrap).
        level: Confidence level in (0, 1).
        method: ``"auto"``, ``"wilson"``, ``"t"`` / ``"normal"`` or ``"bootstrap"``.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        An :class:`Interval`; its ``method`` says which was used.

    Raises:
        StatsError: on NaN / infinite values (naming the row), too few rows or no spread for the method,
            Wilson on values outside [0, 1] or with weights, a bad level or method.

    Example:
        >>> iv = confidence_interval([1.0] * 5)
        >>> (iv.method, round(iv.low, 3), iv.high)
        ('wilson', 0.566, 1.0)
        >>> iv = confidence_interval([0.5, 1.0, 0.25, 0.75], method="t")
        >>> (iv.estimate, round(iv.low, 3), round(iv.high, 3))  # 0.625 + t·se is 1.139: cut at 1
        (0.625, 0.111, 1.0)
    """
    _level(level)
    if method not in ("auto", "wilson", "t", "normal", "bootstrap"):
        raise StatsError(
            f'method must be "auto", "wilson", "t", "normal" or "bootstrap", got {method!r}', field="method"
        )
    data, code = pack_values(values, "values")
    rows = len(data) // int(code[1:])
    packed_weights = pack_values(weights, "weights") if weights is not None else None
    if method in ("auto", "wilson"):
        floats = _floats(data, code)
        in_unit = bool(floats) and all(0.0 <= x <= 1.0 for x in floats)
        if method == "wilson" and (packed_weights is not None or not in_unit):
            raise StatsError(
                "values: the Wilson interval is for pass rates (per-row values in [0, 1], at least one row, "
                "no weights)",
                field="values",
            )
        if packed_weights is None and in_unit:
            return _wilson(floats, level)
        method = "t"
    if method == "bootstrap":
        if rows < MIN_BOOTSTRAP_ROWS:
            raise StatsError(
                f"values: the bootstrap needs at least {MIN_BOOTSTRAP_ROWS} rows, got {rows}: resampling fewer "
                'is surer than the data (use method="t", or "wilson" for pass rates)',
                field="values",
            )
        raw = _core.row_interval(data, code, "bootstrap", level, 0.0, resamples, seed, packed_weights)
        return _check_spread(raw, level, rows, "bootstrap")
    # Student's t at the rows that carry data (weight 0 is no row), counted in the core.
    raw = _core.row_interval(data, code, "t", level, 0.0, resamples, seed, packed_weights)
    return _check_spread(raw, level, rows, method)


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
    error of the difference with Student's t (rows - 1 degrees of freedom). A difference the shared rows
    cannot give an interval for (fewer than 10 for the bootstrap, or no spread) has none, and a note.

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
        ...     b.push([1.0, float(i % 3 == 0), 0.0])
        >>> result = compare(a, b, method="normal")
        >>> (result.rows, round(result.differences["pass_at_1"].estimate, 4), result.excludes_zero("mean"))
        (40, 0.3833, True)
    """
    _check_method(level, method)
    if ks is None:
        k_list = [k for k in a.finish().ks if k in b.finish().ks]
    else:
        k_list = [as_int(k, "ks") for k in ks]
        if any(k < 1 for k in k_list):
            raise StatsError(f"every k must be >= 1, got {k_list}", field="ks")
    rows, raw = a._core.compare(b._core, k_list, method, level, resamples, seed)
    if rows < 2:
        raise StatsError(f"the runs share {rows} rows; a comparison needs at least 2", field="rows")
    return Comparison(
        rows=rows, differences={name: _interval(name, iv, level, method, rows) for name, iv in raw}
    )
