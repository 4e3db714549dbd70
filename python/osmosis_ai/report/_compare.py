"""``osmosis_ai.compare``: is run B really better than run A on the same rows, or is it noise?

A view over the comparison model (:func:`osmosis_ai.results.compare_results`, computed in the Rust
core): every number, interval, verdict and warning is the model's; this module adds the rows that changed
most (with both runs' attempts, for the page) and keeps the established :class:`RunComparison` fields.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from osmosis_ai.errors import StatsError
from osmosis_ai.results import ResultComparison, compare_results
from osmosis_ai.results._plain import to_plain

__all__ = ["VERDICT_LABELS", "RunComparison", "compare", "interval_text", "statistic_label"]

PathLike = str | os.PathLike[str]
_CHANGED_ROWS = 20

#: The printed words of a verdict (``Difference.verdict``, ``Verdict.outcome``).
VERDICT_LABELS = {"b_better": "B better", "a_better": "A better", "no_clear_difference": "no clear difference"}


def statistic_label(statistic: str) -> str:
    """``pass_at_3`` as ``pass@3``, ``pass_hat_3`` as ``pass^3``."""
    return statistic.replace("pass_at_", "pass@").replace("pass_hat_", "pass^")


def interval_text(difference: dict[str, Any]) -> str:
    """``[+0.1000, +0.3000]``, or ``n/a`` when the rows give no interval (the note says why)."""
    if difference["low"] is None or difference["high"] is None:
        return "n/a"
    return f"[{difference['low']:+.4f}, {difference['high']:+.4f}]"


@dataclass(frozen=True)
class RunComparison:
    """What :func:`compare` returns; differences are ``B - A`` (positive: B is better).

    Attributes:
        a: Path of run A.
        b: Path of run B.
        metric: The score name compared.
        matched_by: ``"row_key"`` (row content) or ``"row_index"`` (files without content keys).
        rows_a: Rows of A.
        rows_b: Rows of B.
        rows_matched: Rows in both (the rows every statistic below is over).
        pass_threshold: A run passes when its score is >= this.
        a_values: A's estimate per statistic over the matched rows.
        b_values: B's estimate per statistic over the matched rows.
        differences: ``{statistic: {"estimate", "low", "high", "level", "method", "p_value", "p_holm",
            "verdict", "note"}}`` of ``B - A``, paired over rows (``"mean"``, ``"pass_at_<k>"``,
            ``"pass_hat_<k>"``); ``low`` / ``high`` are None when the rows cannot give an interval, and
            ``note`` says why. ``verdict`` is ``"b_better"``, ``"a_better"`` or ``"no_clear_difference"``.
        flips: On each row's first run (run 0): ``a_only`` (A passed, B did not), ``b_only``, ``both``,
            ``neither``.
        mcnemar_p: McNemar's exact two-sided p-value on those flips.
        changed_rows: The rows whose pass rate changed most, with both runs' attempts.
        interval_method: ``"t"`` (paired Student t over rows) or ``"bootstrap"`` (paired, over rows).
        verdict: The headline verdict ``{"statistic", "outcome", "reason"}``: a difference only when the
            interval, the Holm-adjusted p-value and McNemar's test agree.
        warnings: The comparison's warnings (n differs, rows differ, the multiplicity note, each side's
            own), each worded once in the core: print them as they are.
        tested: Statistics with a p-value (the size of Holm's family).
        model: The comparison model itself.
    """

    a: str
    b: str
    metric: str
    matched_by: str
    rows_a: int
    rows_b: int
    rows_matched: int
    pass_threshold: float
    a_values: dict[str, float]
    b_values: dict[str, float]
    differences: dict[str, dict[str, Any]]
    flips: dict[str, int]
    mcnemar_p: float
    changed_rows: list[dict[str, Any]] = field(default_factory=list)
    interval_method: str = "t"
    verdict: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    tested: int = 0
    model: ResultComparison | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data (the comparison model in its JSON form, schema
        ``osmosis-result-comparison``)."""
        return {
            name: to_plain(getattr(self, name)) if name == "model" else getattr(self, name)
            for name in self.__dataclass_fields__
        }


def _attempts(path: str, metric: str, threshold: float) -> tuple[Any, Any]:
    """(frame, attempts of ``metric``) of one run's primary model, for the rows that changed."""
    from osmosis_ai.report._frame import attempt_table
    from osmosis_ai.stats import load_results

    frame, _ = load_results(path)
    return frame, attempt_table(frame, "", metric, threshold)


def _with_keys(attempts: Any, by_content: bool) -> Any:
    import polars as pl

    if not by_content:
        return attempts.with_columns(pl.col("row_index").cast(pl.String).alias("key"))
    # A dataset that repeats a row holds it twice: the n-th copy of a content key pairs with the n-th.
    copy = pl.col("row_index").rank("dense").over("row_key").cast(pl.Int64)
    return attempts.with_columns((pl.col("row_key") + "#" + copy.cast(pl.String)).alias("key"))


def _per_row(attempts: Any) -> dict[str, dict[str, Any]]:
    import polars as pl

    grouped = (
        attempts.sort("run_index")
        .group_by("key")
        .agg(
            pl.col("row_index").first(),
            pl.col("score"),
            pl.col("counts"),
            pl.col("passed"),
            pl.col("run_index"),
        )
    )
    return {row["key"]: row for row in grouped.to_dicts()}


def _runs(frame: Any, row_index: int, tag: str) -> list[dict[str, Any]]:
    import polars as pl

    from osmosis_ai.report._details import RUN_FIELDS, _bounded

    columns = [c for c in RUN_FIELDS if c in frame.columns]
    picked = frame.filter(pl.col("row_index") == row_index)
    if "model_tag" in frame.columns:
        picked = picked.filter(pl.col("model_tag").fill_null("") == "")
    return [
        _bounded({**run, "model_tag": tag}) for run in picked.select(columns).sort("run_index").to_dicts()
    ]


def _changed_rows(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]], frame_a: Any, frame_b: Any, by_content: bool
) -> list[dict[str, Any]]:
    """The rows whose pass rate moved most, with both runs' attempts (tagged A and B)."""
    changes = []
    for ra, rb in pairs:
        rate_a = sum(ra["passed"]) / max(1, sum(ra["counts"]))
        rate_b = sum(rb["passed"]) / max(1, sum(rb["counts"]))
        if rate_a != rate_b:
            changes.append((rate_b - rate_a, rate_a, rate_b, ra, rb))
    changes.sort(key=lambda c: (-abs(c[0]), c[3]["row_index"]))
    return [
        {
            "row_key": ra["key"].rsplit("#", 1)[0] if by_content else None,
            "row_index": ra["row_index"],
            "row_index_b": rb["row_index"],
            "status": "improved" if delta > 0 else "regressed",
            "pass_rate_a": rate_a,
            "pass_rate_b": rate_b,
            "change": delta,
            "runs": _runs(frame_a, ra["row_index"], "A") + _runs(frame_b, rb["row_index"], "B"),
        }
        for delta, rate_a, rate_b, ra, rb in changes[:_CHANGED_ROWS]
    ]


def compare(
    a: PathLike,
    b: PathLike,
    *,
    metric: str | None = None,
    allow_partial: bool = False,
    level: float = 0.95,
    method: Literal["t", "bootstrap", "normal"] = "t",
    resamples: int = 1000,
    seed: int = 0,
    output: PathLike | None = None,
) -> RunComparison:
    """Compares two runs on the same rows: paired differences of ``B - A`` with their intervals, the
    flips of each row's first run with McNemar's exact test, a verdict, and the rows that changed most.

    Every number is :func:`osmosis_ai.results.compare_results`' (see it for the rules: rows paired by
    content, pass@k up to the smaller n with nothing cut, a verdict only when the interval, Holm and
    McNemar agree).

    Args:
        a: Run A's results file (the baseline).
        b: Run B's results file (the candidate).
        metric: The score name; default the first one A declares.
        allow_partial: Compare the shared rows when the runs hold different rows (else refuse).
        level: Confidence level of the intervals.
        method: ``"t"`` (paired Student t; ``"normal"`` is its earlier name) or ``"bootstrap"`` (paired,
            over rows; at least 10 matched rows).
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.
        output: Write the comparison page here as well.

    Returns:
        A :class:`RunComparison`.

    Raises:
        StatsError: The runs hold different rows (the message says how many match), fewer than 2 rows
            match, or the metric is missing.

    Example:
        >>> import json, pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> def log(name, passing):
        ...     lines = [{"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"]}}]
        ...     lines += [{"row_key": f"k{r}", "row_index": r, "run_index": 0, "success": True,
        ...                "scores": {"acc": float(r < passing)}} for r in range(10)]
        ...     (folder / name).write_text("".join(json.dumps(x) + "\\n" for x in lines))
        ...     return folder / name
        >>> result = compare(log("a.jsonl", 3), log("b.jsonl", 8))
        >>> (result.flips["b_only"], round(result.differences["pass_at_1"]["estimate"], 2), round(result.mcnemar_p, 4))
        (5, 0.5, 0.0625)
    """
    if method not in ("t", "bootstrap", "normal"):
        raise StatsError(f'method must be "t" or "bootstrap", got {method!r}', field="method")
    path_a, path_b = os.fspath(a), os.fspath(b)
    model = compare_results(
        path_a,
        path_b,
        metric=metric,
        allow_partial=allow_partial,
        level=level,
        method="bootstrap" if method == "bootstrap" else "t",
        resamples=resamples,
        seed=seed,
    )
    name, threshold = model.metric, model.a.summary.pass_threshold
    (frame_a, att_a), (frame_b, att_b) = _attempts(path_a, name, threshold), _attempts(path_b, name, threshold)
    by_content = model.matched_by == "row_key"
    rows_a, rows_b = _per_row(_with_keys(att_a, by_content)), _per_row(_with_keys(att_b, by_content))
    shared = sorted(set(rows_a) & set(rows_b), key=lambda k: rows_a[k]["row_index"])
    pairs = [(rows_a[k], rows_b[k]) for k in shared]
    comparison = RunComparison(
        a=path_a,
        b=path_b,
        metric=name,
        matched_by=model.matched_by,
        rows_a=model.a.rows,
        rows_b=model.b.rows,
        rows_matched=model.rows_matched,
        pass_threshold=threshold,
        a_values={k: d.a for k, d in model.differences.items()},
        b_values={k: d.b for k, d in model.differences.items()},
        differences={k: to_plain(d) for k, d in model.differences.items()},
        flips=to_plain(model.flips),
        mcnemar_p=model.mcnemar_p,
        changed_rows=_changed_rows(pairs, frame_a, frame_b, by_content),
        interval_method=model.method,
        verdict=to_plain(model.verdict),
        warnings=[w.message for w in model.warnings],
        tested=model.tested,
        model=model,
    )
    if output is not None:
        from osmosis_ai.report._compare_page import render_compare_page

        Path(output).write_text(render_compare_page(comparison), encoding="utf-8")
    return comparison
