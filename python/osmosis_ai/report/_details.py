"""The rows a page embeds with their runs: a bounded sample, failures first, long texts cut."""

from __future__ import annotations

from typing import Any

import polars as pl

__all__ = ["row_details"]

# A run's fields a page shows, when the record has them (eval, test, eval run and rubric records).
RUN_FIELDS = (
    "run_index",
    "model_tag",
    "success",
    "scores",
    "eval_errors",
    "error",
    "duration_ms",
    "tokens",
    "messages",
    "final_messages",
    "final_answer",
    "tool_calls",
    "finish_reason",
    "status",
    "score",
    "raw_score",
    "clamped",
    "explanation",
    "preview",
    "unscored_reason",
    "attempts",
    "retries",
    "parse_failures",
)
_MAX_TEXT = 4000
_MAX_ITEMS = 60


def _bounded(value: Any, depth: int = 0) -> Any:
    """A JSON value with long strings cut and long lists shortened, so one row cannot blow up a page."""
    if isinstance(value, str):
        return (
            value
            if len(value) <= _MAX_TEXT
            else value[:_MAX_TEXT] + f"... [{len(value) - _MAX_TEXT} more chars]"
        )
    if isinstance(value, dict):
        return {k: _bounded(v, depth + 1) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        items = [_bounded(v, depth + 1) for v in value[:_MAX_ITEMS]]
        if len(value) > _MAX_ITEMS:
            items.append(f"... {len(value) - _MAX_ITEMS} more")
        return items
    return value


def row_details(frame: pl.DataFrame, rows: pl.DataFrame, max_rows: int) -> list[dict[str, Any]]:
    """Up to ``max_rows`` rows of ``rows`` (:func:`row_table`) with their runs from ``frame``.

    Errored rows come first, then failed rows by pass rate (the ones to look at), then passed rows, each
    group in row order: a bounded page still shows every failure it can.
    """
    if rows.height == 0 or max_rows <= 0:
        return []
    order = pl.col("status").replace_strict({"errored": 0, "failed": 1, "passed": 2}, default=3)
    chosen = (
        rows.with_columns(order.alias("_order")).sort(["_order", "pass_rate", "row_index"]).head(max_rows)
    )
    columns = ["row_index", *(c for c in RUN_FIELDS if c in frame.columns)]
    picked = frame.filter(pl.col("row_index").is_in(chosen["row_index"].implode())).select(columns)
    runs: dict[int, list[dict[str, Any]]] = {}
    for run in picked.sort(["row_index", "run_index"]).to_dicts():
        index = run.pop("row_index")
        if isinstance(run.get("scores"), dict):
            run["scores"] = {k: v for k, v in run["scores"].items() if v is not None}
        runs.setdefault(index, []).append(_bounded(run))
    return [
        {
            "row_index": row["row_index"],
            "row_key": row["row_key"],
            "status": row["status"],
            "n": row["n"],
            "c": row["c"],
            "pass_rate": row["pass_rate"],
            "mean_score": row["mean_score"],
            "runs": runs.get(row["row_index"], []),
        }
        for row in chosen.drop("_order").to_dicts()
    ]
