"""Two results files compared on the rows they share: the comparison model (computed in the Rust core)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from osmosis_ai import _core
from osmosis_ai.errors import StatsError
from osmosis_ai.results._model import FunctionResult, ResultWarning, check_schema
from osmosis_ai.results._plain import from_plain, to_plain
from osmosis_ai.results._vocabulary import COMPARISON_SCHEMA

__all__ = ["ComparedSide", "Difference", "Flips", "ResultComparison", "Verdict", "compare_results"]


@dataclass(frozen=True)
class ComparedSide:
    """One side as its own file tells it: all its rows at its own n (nothing of it is cut).

    Attributes:
        path: The file.
        n_runs: Its declared runs per row, or None.
        rows: Its rows.
        summary: Its :class:`~osmosis_ai.results.FunctionResult` for the compared score.
    """

    path: str
    n_runs: int | None
    rows: int
    summary: FunctionResult


@dataclass(frozen=True)
class Difference:
    """``B - A`` of one statistic over the matched rows.

    Attributes:
        estimate: ``b - a``, or None when a side has no value (nothing of it scored; :attr:`note` says so).
        a: A's value over the matched rows, or None (nothing of A scored there).
        b: B's value over the matched rows, or None.
        low: Lower bound of the interval, or None (see :attr:`note`).
        high: Upper bound, or None.
        level: Confidence level.
        method: ``"t"`` (paired Student t over rows) or ``"bootstrap"`` (paired percentile bootstrap).
        p_value: The paired t-test's two-sided p-value, or None without spread.
        p_holm: ``p_value`` after Holm's adjustment over every statistic tested.
        verdict: ``"b_better"``, ``"a_better"`` or ``"no_clear_difference"``.
        note: Why there is no interval (or no estimate).
    """

    estimate: float | None
    a: float | None
    b: float | None
    low: float | None
    high: float | None
    level: float
    method: str
    p_value: float | None
    p_holm: float | None
    verdict: str
    note: str | None = None


@dataclass(frozen=True)
class Flips:
    """Matched rows by their first run (run 0): passed in A only, B only, both, neither."""

    a_only: int
    b_only: int
    both: int
    neither: int


@dataclass(frozen=True)
class Verdict:
    """The comparison's verdict on its headline statistic (``pass_at_1``, else ``mean``).

    Attributes:
        statistic: The statistic judged.
        outcome: ``"b_better"`` or ``"a_better"`` only when the interval excludes 0, the Holm-adjusted
            p-value is below ``1 - level`` and McNemar's test agrees; else ``"no_clear_difference"``.
        reason: Why, in words.
    """

    statistic: str
    outcome: str
    reason: str


@dataclass(frozen=True)
class ResultComparison:
    """What :func:`compare_results` returns; differences are ``B - A`` (positive: B is better).

    Attributes:
        schema: ``"osmosis-result-comparison"``.
        version: Its version.
        metric: The score name compared.
        matched_by: ``"row_key"`` (row content) or ``"row_index"`` (files without content keys).
        rows_matched: Rows in both files (every difference is over them).
        ks: The k values compared: every k up to the smaller declared n.
        level: Confidence level.
        method: ``"t"`` or ``"bootstrap"``.
        a: Side A on its own.
        b: Side B on its own.
        differences: ``{"mean" | "pass_at_<k>" | "pass_hat_<k>": Difference}``.
        flips: First-run flips.
        mcnemar_p: McNemar's exact two-sided p-value on the flips, or None when no matched row's first run
            counts on both sides (a side with nothing scored has no flips).
        tested: Statistics with a p-value (the size of Holm's family).
        verdict: The headline verdict.
        warnings: Every warning (n differs, rows differ, the multiplicity note, each side's own).
    """

    schema: str
    version: int
    metric: str
    matched_by: str
    rows_matched: int
    ks: tuple[int, ...]
    level: float
    method: str
    a: ComparedSide
    b: ComparedSide
    differences: dict[str, Difference]
    flips: Flips
    mcnemar_p: float | None
    tested: int
    verdict: Verdict
    warnings: tuple[ResultWarning, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schema ``osmosis-result-comparison``), key for key what the core computed."""
        return to_plain(self)


def compare_results(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    metric: str | None = None,
    allow_partial: bool = False,
    level: float = 0.95,
    method: Literal["t", "bootstrap"] = "t",
    resamples: int = 1000,
    seed: int = 0,
) -> ResultComparison:
    """Is run B really better than run A on the same rows, or is it noise?

    Rows are matched by content (``row_key``; the n-th copy of a repeated row pairs with the n-th), or by
    row index when a file lacks content keys. Every statistic is a paired difference over the matched
    rows. pass@k is compared for k up to the smaller declared n, each side's unbiased estimate over all
    its runs: nothing is cut, and a difference in n is a warning (each side's own summary, at its own n,
    is in :attr:`ResultComparison.a` / :attr:`~ResultComparison.b`). A verdict needs three things to
    agree: the interval excludes 0, the Holm-adjusted p-value over every statistic tested is below
    ``1 - level``, and McNemar's exact test on the rows' first runs points the same way.

    Args:
        a: Run A's results file (the baseline).
        b: Run B's results file (the candidate).
        metric: The score name; default the first one A declares.
        allow_partial: Compare the shared rows when the files hold different rows (else refuse).
        level: Confidence level of the intervals (and ``1 - level`` the verdicts' significance).
        method: ``"t"`` (paired Student t) or ``"bootstrap"`` (paired percentile bootstrap; at least 10
            matched rows).
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        A :class:`ResultComparison`.

    Raises:
        StatsError: The files hold different rows (without ``allow_partial``), fewer than 2 rows match,
            the metric is missing, or a bad option.

    Example:
        >>> import json, pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> def log(name, passing):
        ...     lines = [{"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"], "n_runs": 1}}]
        ...     lines += [{"row_key": f"k{r}", "row_index": r, "run_index": 0, "success": True,
        ...                "scores": {"acc": float(r < passing)}} for r in range(2)]
        ...     (folder / name).write_text("".join(json.dumps(x) + "\\n" for x in lines))
        ...     return folder / name
        >>> result = compare_results(log("a.jsonl", 0), log("b.jsonl", 2))
        >>> (result.differences["pass_at_1"].estimate, result.verdict.outcome, round(result.mcnemar_p, 2))
        (1.0, 'no_clear_difference', 0.5)
    """
    if method not in ("t", "bootstrap"):
        raise StatsError(f'method must be "t" or "bootstrap", got {method!r}', field="method")
    raw = _core.compare_results(
        os.fspath(a),
        os.fspath(b),
        metric,
        bool(allow_partial),
        float(level),
        method,
        int(resamples),
        int(seed),
    )
    data = orjson.loads(raw)
    check_schema(data, COMPARISON_SCHEMA)
    return from_plain(ResultComparison, data)
