"""Per-run and per-row tables of one model of a results file, from :func:`osmosis_ai.load_results`.

Everything here is bookkeeping for a page (which attempt passed, which row failed, histogram bins); the
statistics themselves (pass@k, intervals, paired tests) come from the Rust core through
:mod:`osmosis_ai.stats`. polars is imported by the caller's first use of this module.
"""

from __future__ import annotations

from typing import Any

import polars as pl

__all__ = ["attempt_table", "histogram", "row_table", "score_names"]


def score_names(frame: pl.DataFrame, declared: list[str]) -> list[str]:
    """The score names of a frame: the declared ones first, then those found in ``scores``."""
    found: list[str] = []
    if "scores" in frame.columns and isinstance(frame.schema["scores"], pl.Struct):
        found = [f.name for f in frame.schema["scores"].fields]
    return list(dict.fromkeys([*declared, *found]))


def _struct_field(frame: pl.DataFrame, column: str, name: str) -> pl.Expr | None:
    dtype = frame.schema.get(column)
    if isinstance(dtype, pl.Struct) and name in {f.name for f in dtype.fields}:
        return pl.col(column).struct.field(name)
    return None


def attempt_table(frame: pl.DataFrame, model_tag: str, metric: str | None, threshold: float) -> pl.DataFrame:
    """One row per attempt of ``model_tag``: its row, score, whether it counts, passed and errored.

    An attempt whose eval function raised (``eval_errors`` names the metric) does not count, as in the
    statistics; an attempt with an error text (agent, judge, timeout) counts as failed.
    """
    if frame.height == 0:
        return pl.DataFrame(
            schema={"row_index": pl.Int64, "row_key": pl.String, "run_index": pl.Int64, "score": pl.Float64}
        )
    if "model_tag" in frame.columns:
        frame = frame.filter(pl.col("model_tag").fill_null("") == model_tag)
    score = _struct_field(frame, "scores", metric) if metric else None
    if score is None:
        score = pl.lit(None, pl.Float64)
    raised = _struct_field(frame, "eval_errors", metric) if metric else None
    raised = raised.is_not_null() if raised is not None else pl.lit(False)
    success = pl.col("success").fill_null(False) if "success" in frame.columns else pl.lit(True)
    has_error = pl.col("error").is_not_null() if "error" in frame.columns else pl.lit(False)
    key = pl.col("row_key").cast(pl.String) if "row_key" in frame.columns else pl.lit(None, pl.String)
    # A failed run's score (if any) is not a score, as in the statistics.
    score = pl.when(success).then(score.cast(pl.Float64)).otherwise(None)
    return frame.select(
        pl.col("row_index").cast(pl.Int64),
        key.alias("row_key"),
        pl.col("run_index").cast(pl.Int64),
        score.alias("score"),
        (~raised).alias("counts"),
        (success & score.is_not_null() & (score >= threshold) & ~raised).alias("passed"),
        (has_error | raised).alias("errored"),
    )


def row_table(attempts: pl.DataFrame) -> pl.DataFrame:
    """One row per dataset row: attempts ``n`` that count, passes ``c``, pass rate, status."""
    rows = attempts.group_by("row_index").agg(
        pl.col("row_key").first(),
        pl.col("counts").sum().alias("n"),
        pl.col("passed").sum().alias("c"),
        pl.col("score").mean().alias("mean_score"),
        pl.col("errored").any().alias("errored"),
        pl.len().alias("runs"),
    )
    rate = pl.when(pl.col("n") > 0).then(pl.col("c") / pl.col("n")).otherwise(None)
    status = (
        pl.when(pl.col("errored"))
        .then(pl.lit("errored"))
        .when(pl.col("c") == pl.col("n"))
        .then(pl.lit("passed"))
        .otherwise(pl.lit("failed"))
    )
    return rows.with_columns(rate.alias("pass_rate"), status.alias("status")).sort("row_index")


def histogram(values: pl.Series, bins: int = 20) -> list[dict[str, Any]]:
    """Equal-width bins over the finite values: ``[{"low", "high", "count"}]`` (empty without values)."""
    values = values.drop_nulls().cast(pl.Float64)
    values = values.filter(values.is_finite())
    if values.len() == 0:
        return []
    low, high = float(values.min()), float(values.max())  # type: ignore[arg-type]
    if high == low:
        # One value: a bar of unit width around it (a zero-width bin would draw as a hairline).
        return [{"low": low - 0.5, "high": high + 0.5, "count": values.len()}]
    width = (high - low) / bins
    index = ((values - low) / width).floor().clip(0, bins - 1).cast(pl.Int64)
    counts = index.value_counts().sort(index.name)
    by_bin = dict(zip(counts[index.name].to_list(), counts["count"].to_list(), strict=True))
    return [
        {"low": low + i * width, "high": low + (i + 1) * width, "count": int(by_bin.get(i, 0))}
        for i in range(bins)
    ]
