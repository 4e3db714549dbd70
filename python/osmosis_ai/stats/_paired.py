"""McNemar's exact test on paired pass/fail outcomes (computed in the Rust core)."""

from __future__ import annotations

from osmosis_ai import _core
from osmosis_ai._stats_input import as_int
from osmosis_ai.errors import StatsError

__all__ = ["mcnemar_exact"]


def mcnemar_exact(first_only: int, second_only: int) -> float:
    """The two-sided exact p-value of McNemar's test for paired pass/fail outcomes.

    Only the rows whose outcome differs between the two runs count: ``first_only`` passed in the first
    run and failed in the second, ``second_only`` the reverse. Under "no difference" each such row is a
    fair coin, so the p-value is ``min(1, 2 * P(X <= min(b, c)))`` with ``X ~ Binomial(b + c, 1/2)``.

    Args:
        first_only: Rows that passed only in the first run.
        second_only: Rows that passed only in the second run.

    Returns:
        The p-value in (0, 1]; 1.0 when no row changed.

    Raises:
        StatsError: on a negative count.

    Example:
        >>> round(mcnemar_exact(2, 8), 9)  # 2 * (1 + 10 + 45) / 2**10
        0.109375
    """
    b, c = as_int(first_only, "first_only"), as_int(second_only, "second_only")
    if b < 0 or c < 0:
        raise StatsError(
            f"counts must be >= 0, got {b} and {c}", field="first_only" if b < 0 else "second_only"
        )
    return _core.mcnemar_exact(b, c)
