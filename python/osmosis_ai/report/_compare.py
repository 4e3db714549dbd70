"""``osmosis_ai.compare``: is run B really better than run A on the same rows, or is it noise?"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.errors import StatsError
from osmosis_ai.stats import IntervalMethod
from osmosis_ai.report._run import _BOOTSTRAP_WORK_LIMIT, _ks

__all__ = ["RunComparison", "compare"]

PathLike = str | os.PathLike[str]
_CHANGED_ROWS = 20


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
        pass_threshold: An attempt passes when its score is >= this.
        a_values: A's estimate per statistic over the matched rows.
        b_values: B's estimate per statistic over the matched rows.
        differences: ``{statistic: {"estimate", "low", "high", "level", "method"}}`` of ``B - A``,
            paired over rows (``"mean"``, ``"pass_at_<k>"``, ``"pass_hat_<k>"``).
        flips: On each row's first attempt (run 0): ``a_only`` (A passed, B failed), ``b_only``,
            ``both``, ``neither``.
        mcnemar_p: McNemar's exact two-sided p-value on those flips.
        changed_rows: The rows whose pass rate changed most, with both runs' attempts.
        interval_method: ``"bootstrap"`` (paired, over rows) or ``"normal"`` (large runs).
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
    interval_method: str = "bootstrap"

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _keyed(path: str, metric: str | None) -> tuple[Any, Any, Any, str]:
    """(frame, attempts with a ``key`` column, summary, metric) of one run's primary model."""
    import polars as pl

    from osmosis_ai.report._frame import attempt_table, score_names
    from osmosis_ai.stats import load_results, summarize_results_by_model

    summary = summarize_results_by_model(path)
    frame, _ = load_results(path)
    primary = next(iter(summary.models.values()), None)
    names = score_names(frame, list(primary.summaries) if primary else [])
    chosen = metric or (names[0] if names else None)
    if chosen is None or chosen not in names:
        raise StatsError(f"{path}: no score named {chosen!r}; it holds {', '.join(names) or 'no scores'}", field="metric")
    attempts = attempt_table(frame, "", chosen, summary.pass_threshold)
    return frame, attempts, summary, chosen


def _with_keys(attempts: Any, by_content: bool) -> Any:
    import polars as pl

    if not by_content:
        return attempts.with_columns(pl.col("row_index").cast(pl.String).alias("key"))
    # A dataset that repeats a row holds it twice: the n-th copy of a content key pairs with the n-th.
    copy = pl.col("row_index").rank("dense").over("row_key").cast(pl.Int64)
    return attempts.with_columns((pl.col("row_key") + "#" + copy.cast(pl.String)).alias("key"))


def _per_row(attempts: Any) -> dict[str, dict[str, Any]]:
    import polars as pl

    grouped = attempts.sort("run_index").group_by("key").agg(
        pl.col("row_index").first(),
        pl.col("score"),
        pl.col("counts"),
        pl.col("passed"),
        pl.col("run_index"),
    )
    return {row["key"]: row for row in grouped.to_dicts()}


def _push(agg: Any, row: dict[str, Any], label: int) -> None:
    scores = [s for s, c in zip(row["score"], row["counts"], strict=True) if c]
    agg.push(scores, row_index=label, errors=sum(1 for c in row["counts"] if not c))


def _first_attempt(row: dict[str, Any]) -> bool | None:
    for run, counts, passed in zip(row["run_index"], row["counts"], row["passed"], strict=True):
        if run == 0:
            return bool(passed) if counts else None
    return None


def _runs(frame: Any, row_index: int, tag: str) -> list[dict[str, Any]]:
    import polars as pl

    from osmosis_ai.report._details import RUN_FIELDS, _bounded

    columns = [c for c in RUN_FIELDS if c in frame.columns]
    picked = frame.filter(pl.col("row_index") == row_index)
    if "model_tag" in frame.columns:
        picked = picked.filter(pl.col("model_tag").fill_null("") == "")
    return [_bounded({**run, "model_tag": tag}) for run in picked.select(columns).sort("run_index").to_dicts()]


def compare(
    a: PathLike,
    b: PathLike,
    *,
    metric: str | None = None,
    allow_partial: bool = False,
    level: float = 0.95,
    method: IntervalMethod | None = None,
    resamples: int = 1000,
    seed: int = 0,
    output: PathLike | None = None,
) -> RunComparison:
    """Compares two runs on the same rows: flips, paired intervals of ``B - A``, McNemar's exact test.

    Rows are matched by content (``row_key``), so two runs over the same dataset pair up even when their
    order or ``--offset`` differs. The paired bootstrap resamples rows with both runs' attempts of a row
    together; McNemar's test looks at each row's first attempt. Both are computed in the Rust core.

    Args:
        a: Run A's results file (the baseline).
        b: Run B's results file (the candidate).
        metric: The score name; default the first one A declares.
        allow_partial: Compare the shared rows when the runs hold different rows (else refuse).
        level: Confidence level of the intervals.
        method: ``"bootstrap"`` (paired, over rows) or ``"normal"``; default the bootstrap, or the normal
            interval when rows x statistics is large (it is as good there and costs no resampling).
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
    from osmosis_ai.stats import Aggregator, mcnemar_exact
    from osmosis_ai.stats import compare as paired

    path_a, path_b = os.fspath(a), os.fspath(b)
    frame_a, att_a, sum_a, name = _keyed(path_a, metric)
    frame_b, att_b, sum_b, _ = _keyed(path_b, name)
    by_content = bool(att_a.height and att_b.height and att_a["row_key"].null_count() == 0 and att_b["row_key"].null_count() == 0)
    rows_a, rows_b = _per_row(_with_keys(att_a, by_content)), _per_row(_with_keys(att_b, by_content))
    shared = sorted(set(rows_a) & set(rows_b), key=lambda k: rows_a[k]["row_index"])
    if not allow_partial and (len(shared) != len(rows_a) or len(shared) != len(rows_b)):
        raise StatsError(
            f"{path_a} and {path_b} were run on different datasets: {len(shared)} rows match by "
            f"{'content' if by_content else 'row index'} (A has {len(rows_a)} rows, B has {len(rows_b)}). Compare "
            "runs of the same dataset, or allow a partial comparison (allow_partial=True, --allow-partial) of "
            f"the {len(shared)} shared rows.",
            field="rows",
        )
    if len(shared) < 2:
        raise StatsError(f"{path_a} and {path_b} share {len(shared)} rows; a comparison needs at least 2", field="rows")
    n = min(max(len(rows_a[k]["score"]) for k in shared), max(len(rows_b[k]["score"]) for k in shared))
    ks = _ks(n)
    if method is None:
        method = "bootstrap" if len(shared) * (2 * len(ks) + 1) <= _BOOTSTRAP_WORK_LIMIT else "normal"
    threshold = sum_a.pass_threshold
    agg_a = Aggregator(pass_threshold=threshold, ks=ks, n_runs=n, failed=sum_a.failed_policy)
    agg_b = Aggregator(pass_threshold=threshold, ks=ks, n_runs=n, failed=sum_a.failed_policy)
    flips = {"a_only": 0, "b_only": 0, "both": 0, "neither": 0}
    changes = []
    for label, key in enumerate(shared):
        ra, rb = rows_a[key], rows_b[key]
        _push(agg_a, {k: v[:n] if isinstance(v, list) else v for k, v in ra.items()}, label)
        _push(agg_b, {k: v[:n] if isinstance(v, list) else v for k, v in rb.items()}, label)
        fa, fb = _first_attempt(ra), _first_attempt(rb)
        if fa is not None and fb is not None:
            flips[{(True, False): "a_only", (False, True): "b_only", (True, True): "both"}.get((fa, fb), "neither")] += 1
        rate_a = sum(ra["passed"]) / max(1, sum(ra["counts"]))
        rate_b = sum(rb["passed"]) / max(1, sum(rb["counts"]))
        changes.append((abs(rate_b - rate_a), rate_b - rate_a, key, rate_a, rate_b))
    result = paired(agg_b, agg_a, ks=ks, level=level, method=method, resamples=resamples, seed=seed)
    fin_a, fin_b = agg_a.finish(), agg_b.finish()
    values = lambda s: {"mean": s.mean or 0.0, **{f"pass_at_{k}": v for k, v in s.pass_at_k.items()}, **{f"pass_hat_{k}": v for k, v in s.pass_hat_k.items()}}  # noqa: E731
    changes.sort(key=lambda c: (-c[0], rows_a[c[2]]["row_index"]))
    changed = [
        {
            "row_key": key.rsplit("#", 1)[0] if by_content else None,
            "row_index": rows_a[key]["row_index"],
            "row_index_b": rows_b[key]["row_index"],
            "status": "improved" if delta > 0 else "regressed",
            "pass_rate_a": rate_a,
            "pass_rate_b": rate_b,
            "change": delta,
            "runs": _runs(frame_a, rows_a[key]["row_index"], "A") + _runs(frame_b, rows_b[key]["row_index"], "B"),
        }
        for size, delta, key, rate_a, rate_b in changes[:_CHANGED_ROWS]
        if size > 0
    ]
    comparison = RunComparison(
        a=path_a,
        b=path_b,
        metric=name,
        matched_by="row_key" if by_content else "row_index",
        rows_a=len(rows_a),
        rows_b=len(rows_b),
        rows_matched=len(shared),
        pass_threshold=threshold,
        a_values=values(fin_a),
        b_values=values(fin_b),
        differences={k: iv.to_dict() for k, iv in result.differences.items()},
        flips=flips,
        mcnemar_p=mcnemar_exact(flips["a_only"], flips["b_only"]),
        changed_rows=changed,
        interval_method=method,
    )
    if output is not None:
        from osmosis_ai.report._compare_page import render_compare_page

        Path(output).write_text(render_compare_page(comparison), encoding="utf-8")
    return comparison
