"""``osmosis_ai.compare``: is run B really better than run A on the same rows, or is it noise?"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.errors import StatsError
from osmosis_ai.report._run import _ks
from osmosis_ai.stats import IntervalMethod

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
        interval_method: ``"bootstrap"`` (paired, over rows) or ``"normal"``.
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

    from osmosis_ai.report._frame import attempt_table, score_names
    from osmosis_ai.stats import load_results, summarize_results_by_model

    summary = summarize_results_by_model(path)
    frame, _ = load_results(path)
    primary = next(iter(summary.models.values()), None)
    names = score_names(frame, list(primary.summaries) if primary else [])
    chosen = metric or (names[0] if names else None)
    if chosen is None or chosen not in names:
        raise StatsError(
            f"{path}: no score named {chosen!r}; it holds {', '.join(names) or 'no scores'}", field="metric"
        )
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
    return [
        _bounded({**run, "model_tag": tag}) for run in picked.select(columns).sort("run_index").to_dicts()
    ]


def _values(summary: Any) -> dict[str, float]:
    return {
        "mean": summary.mean or 0.0,
        **{f"pass_at_{k}": v for k, v in summary.pass_at_k.items()},
        **{f"pass_hat_{k}": v for k, v in summary.pass_hat_k.items()},
    }


def _paired_statistics(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]],
    summary_a: Any,
    *,
    level: float,
    method: IntervalMethod,
    resamples: int,
    seed: int,
) -> tuple[dict[str, float], dict[str, float], dict[str, dict[str, Any]], IntervalMethod]:
    """(A's values, B's values, intervals of B - A, method) from the Rust aggregators, rows paired by label."""
    from osmosis_ai.stats import Aggregator
    from osmosis_ai.stats import compare as paired

    # Both runs at the same n (the smaller), so pass@k means the same thing on both sides.
    n = min(max(len(ra["score"]) for ra, _ in pairs), max(len(rb["score"]) for _, rb in pairs))
    ks = _ks(n)
    options = {
        "pass_threshold": summary_a.pass_threshold,
        "ks": ks,
        "n_runs": n,
        "failed": summary_a.failed_policy,
    }
    agg_a, agg_b = Aggregator(**options), Aggregator(**options)
    for label, (ra, rb) in enumerate(pairs):
        _push(agg_a, {k: v[:n] if isinstance(v, list) else v for k, v in ra.items()}, label)
        _push(agg_b, {k: v[:n] if isinstance(v, list) else v for k, v in rb.items()}, label)
    result = paired(agg_b, agg_a, ks=ks, level=level, method=method, resamples=resamples, seed=seed)
    differences = {k: iv.to_dict() for k, iv in result.differences.items()}
    return _values(agg_a.finish()), _values(agg_b.finish()), differences, method


_FLIP = {(True, False): "a_only", (False, True): "b_only", (True, True): "both", (False, False): "neither"}


def _flips(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, int]:
    flips = dict.fromkeys(_FLIP.values(), 0)
    for ra, rb in pairs:
        fa, fb = _first_attempt(ra), _first_attempt(rb)
        if fa is not None and fb is not None:
            flips[_FLIP[(fa, fb)]] += 1
    return flips


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
    method: IntervalMethod = "bootstrap",
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
        method: ``"bootstrap"`` (paired, over rows) or ``"normal"`` (the paired normal interval).
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
    from osmosis_ai.stats import mcnemar_exact

    path_a, path_b = os.fspath(a), os.fspath(b)
    frame_a, att_a, sum_a, name = _keyed(path_a, metric)
    frame_b, att_b, _, _ = _keyed(path_b, name)
    by_content = all(t.height and t["row_key"].null_count() == 0 for t in (att_a, att_b))
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
        raise StatsError(
            f"{path_a} and {path_b} share {len(shared)} rows; a comparison needs at least 2", field="rows"
        )
    pairs = [(rows_a[k], rows_b[k]) for k in shared]
    a_values, b_values, differences, method = _paired_statistics(
        pairs, sum_a, level=level, method=method, resamples=resamples, seed=seed
    )
    flips = _flips(pairs)
    comparison = RunComparison(
        a=path_a,
        b=path_b,
        metric=name,
        matched_by="row_key" if by_content else "row_index",
        rows_a=len(rows_a),
        rows_b=len(rows_b),
        rows_matched=len(shared),
        pass_threshold=sum_a.pass_threshold,
        a_values=a_values,
        b_values=b_values,
        differences=differences,
        flips=flips,
        mcnemar_p=mcnemar_exact(flips["a_only"], flips["b_only"]),
        changed_rows=_changed_rows(pairs, frame_a, frame_b, by_content),
        interval_method=method,
    )
    if output is not None:
        from osmosis_ai.report._compare_page import render_compare_page

        Path(output).write_text(render_compare_page(comparison), encoding="utf-8")
    return comparison
