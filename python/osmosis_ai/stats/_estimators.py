"""pass@k and pass^k of one row and over many rows (the unbiased estimators, computed in Rust)."""

from __future__ import annotations

import math
from array import array
from typing import Any

from osmosis_ai import _core
from osmosis_ai._stats_input import CHUNK, as_int, count_view
from osmosis_ai._stats_types import ManyEstimate
from osmosis_ai.errors import StatsError

__all__ = ["pass_at_k", "pass_at_k_many", "pass_hat_k", "pass_hat_k_many"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one row: ``1 - C(n-c, k) / C(n, k)``.

    Args:
        n: Attempts made for the row (>= k).
        c: Attempts that passed (0 <= c <= n).
        k: Attempts drawn (>= 1).

    Returns:
        The probability that at least one of k attempts drawn without replacement passes.

    Raises:
        StatsError: (a ``ValueError``) when a count is negative, ``c > n``, ``k < 1`` or ``k > n``.

    Example:
        >>> round(pass_at_k(10, 7, 3), 6)
        0.991667
    """
    return _core.pass_at_k(as_int(n, "n"), as_int(c, "c"), as_int(k, "k"))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one row: ``C(c, k) / C(n, k)``, the chance that k drawn attempts all pass.

    Args:
        n: Attempts made for the row (>= k).
        c: Attempts that passed (0 <= c <= n).
        k: Attempts drawn (>= 1).

    Returns:
        The probability that all of k attempts drawn without replacement pass.

    Raises:
        StatsError: (a ``ValueError``) on the same inputs as :func:`pass_at_k`.

    Example:
        >>> pass_hat_k(5, 4, 2)
        0.6
    """
    return _core.pass_hat_k(as_int(n, "n"), as_int(c, "c"), as_int(k, "k"))


def _many(estimator: str, n: Any, c: Any, k: int, per_row: bool) -> ManyEstimate:
    k = as_int(k, "k")
    c_view, c_code = count_view(c, "c")
    rows = len(c_view)
    n_view: tuple[memoryview, str] | None = None
    n_scalar = 0
    if isinstance(n, (int, float)) or (hasattr(n, "__index__") and not hasattr(n, "__len__")):
        n_scalar = as_int(n, "n")
    else:
        n_view = count_view(n, "n")
        if len(n_view[0]) != rows:
            raise StatsError(
                f"n has {len(n_view[0])} rows but c has {rows}: "
                "give one n per row or a single n for all rows",
                field="n",
            )
    if rows == 0:
        raise StatsError("c has no rows: a mean over no rows is undefined", field="c")
    sums = []
    values = array("d") if per_row else None
    for start in range(0, rows, CHUNK):
        stop = start + CHUNK
        n_part = n_scalar if n_view is None else (n_view[0][start:stop].tobytes(), n_view[1])
        c_part = (c_view[start:stop].tobytes(), c_code)
        total, _, raw = _core.estimate_many(estimator, n_part, c_part, k, per_row, start)
        sums.append(total)
        if values is not None and raw is not None:
            values.frombytes(raw)
    return ManyEstimate(mean=math.fsum(sums) / rows, rows=rows, values=values)


def pass_at_k_many(n: Any, c: Any, k: int, *, per_row: bool = False) -> ManyEstimate:
    """pass@k over rows of ``(n, c)``: the mean over rows and, with ``per_row``, each row's value.

    Args:
        n: Attempts per row: one int for every row, or one per row.
        c: Passing attempts per row. Both accept lists, tuples, ``array.array``, numpy arrays (any
            integer dtype; float arrays of whole numbers), memoryviews and polars / pandas Series.
        k: Attempts drawn.
        per_row: Also return every row's value.

    Returns:
        A :class:`ManyEstimate`.

    Raises:
        StatsError: naming the first bad row (``k > n``, ``c > n``, a negative or fractional count),
            or when there are no rows.

    Example:
        >>> pass_at_k_many(5, [2, 0, 5], 3).mean
        0.6333333333333333
    """
    return _many("pass_at_k", n, c, k, per_row)


def pass_hat_k_many(n: Any, c: Any, k: int, *, per_row: bool = False) -> ManyEstimate:
    """pass^k over rows of ``(n, c)``; arguments and errors as in :func:`pass_at_k_many`.

    Example:
        >>> pass_hat_k_many([2, 2], [2, 1], 2).mean
        0.5
    """
    return _many("pass_hat_k", n, c, k, per_row)
