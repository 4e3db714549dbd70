"""What a report shows about one results file, as plain data (no HTML here)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.report._details import row_details

__all__ = ["DEFAULT_MAX_ROWS", "RunReport", "build_run_report"]

#: Rows whose runs are embedded in a page: past this the page keeps aggregates and a sample, and says so.
DEFAULT_MAX_ROWS = 500
# Above this many rows x statistics a percentile bootstrap costs seconds; the normal interval over that
# many rows is as good, so the page uses it (and names the method).
_BOOTSTRAP_WORK_LIMIT = 200_000
_CURVE_POINTS = 400
_MAX_KS = 20


@dataclass(frozen=True)
class RunReport:
    """One results file, summarised for a page (every field is JSON-ready).

    Attributes:
        path: The file.
        header: Layout, kind, command, model(s), dataset and its fingerprint, creation time, n,
            duration, tokens and cost where the file records them.
        metrics: Per model tag, per score name: mean, pass@k / pass^k with intervals, mixed fraction,
            errors (:meth:`osmosis_ai.stats.Summary.to_dict`).
        primary_metric: The score name the per-row views use.
        histograms: ``{"score:<name>" | "latency_ms" | "tokens": [{"low", "high", "count"}]}``.
        row_pass_rates: Sorted per-row pass rates of the primary metric (at most 400 evenly spaced
            points of the sorted list, as ``[{"rank", "pass_rate"}]``).
        judge: Judge health counts for rubric runs, else None.
        rows_total: Rows in the file (primary model).
        row_counts: ``{"passed", "failed", "errored"}`` over all rows.
        rows: The rows embedded with their runs (at most ``max_rows``; errored and failed rows first).
        interval_method: How the intervals were computed.
    """

    path: str
    header: dict[str, Any]
    metrics: dict[str, dict[str, dict[str, Any]]]
    primary_metric: str | None
    histograms: dict[str, list[dict[str, Any]]]
    row_pass_rates: list[dict[str, float]]
    judge: dict[str, int] | None
    rows_total: int
    row_counts: dict[str, int]
    rows: list[dict[str, Any]] = field(default_factory=list)
    interval_method: str = "bootstrap"

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _ks(n: int) -> list[int]:
    if n <= _MAX_KS:
        return list(range(1, n + 1))
    # Geometric spacing keeps the curve's shape with a bounded number of statistics.
    ks = {1, n}
    step = n ** (1 / (_MAX_KS - 1))
    ks.update(max(1, round(step**i)) for i in range(_MAX_KS))
    return sorted(ks)


def _attempts_per_row(frame: Any) -> tuple[int, int]:
    """(fewest, most) run records of a row of one model; (1, 1) for an empty file."""
    import polars as pl

    if frame.height == 0:
        return 1, 1
    keys = ["row_index", "model_tag"] if "model_tag" in frame.columns else ["row_index"]
    counts = frame.group_by(keys).agg(pl.col("run_index").n_unique().alias("runs"))["runs"]
    return max(1, int(counts.min())), max(1, int(counts.max()))  # type: ignore[arg-type]


def _sum_column(frame: Any, name: str) -> float | None:
    if name not in frame.columns:
        return None
    value = frame[name].drop_nulls()
    return float(value.sum()) if value.len() else None


def _usage_tokens(frame: Any) -> Any:
    import polars as pl

    if "tokens" in frame.columns:
        return frame["tokens"]
    usage = frame.schema.get("usage")
    if isinstance(usage, pl.Struct) and "total_tokens" in {f.name for f in usage.fields}:
        return frame["usage"].struct.field("total_tokens")
    return pl.Series("tokens", [], dtype=pl.Int64)


def _judge_health(frame: Any) -> dict[str, int]:
    import polars as pl

    def total(name: str) -> int:
        return int(frame[name].fill_null(0).cast(pl.Int64).sum()) if name in frame.columns else 0

    def count(name: str, value: Any) -> int:
        return int((frame[name] == value).sum()) if name in frame.columns else 0

    return {
        "parse_failures": total("parse_failures"),
        "clamped": total("clamped"),
        "retries": total("retries"),
        "unscored": count("status", "unscored"),
        "errors": count("status", "error"),
    }


def _header(path: str, meta: dict[str, Any], summary: Any, frame: Any, n: int) -> dict[str, Any]:
    config = summary.config or meta.get("config") or {}
    models = [config.get(k) for k in ("model", "baseline_model", "judge_model") if config.get(k)]
    primary = next(iter(summary.models.values()), None)
    return {
        "file": os.path.basename(path),
        "layout": summary.layout,
        "kind": summary.kind or meta.get("kind") or "eval",
        "command": config.get("command") or config.get("agent") or config.get("rubric_id"),
        "models": models,
        "dataset": meta.get("dataset"),
        "created_at": meta.get("created_at"),
        "osmosis_version": meta.get("osmosis_version"),
        "n": n,
        "pass_threshold": summary.pass_threshold,
        "runs": primary.runs if primary else 0,
        "failed_runs": primary.failed_runs if primary else 0,
        "duration_ms": sum(m.duration_ms for m in summary.models.values()),
        "tokens": sum(m.tokens for m in summary.models.values()) or _sum_column(frame, "tokens"),
        "cost_usd": _sum_column(frame, "cost_usd") or _sum_column(frame, "cost"),
        "config": config,
    }


def build_run_report(
    path: str | os.PathLike[str], *, max_rows: int = DEFAULT_MAX_ROWS, seed: int = 0
) -> RunReport:
    """Reads one results file (any layout the package writes) and summarises it for a page.

    The file is read twice: once by the Rust statistics (every number on the page) and once by polars
    for the per-row views; the page embeds aggregates and at most ``max_rows`` rows with their runs.
    """
    from osmosis_ai.report import _frame as tables
    from osmosis_ai.stats import IntervalMethod, load_results, summarize_results_by_model

    name = os.fspath(path)
    frame, meta = load_results(name)
    n_min, n = _attempts_per_row(frame)
    rows_guess = frame["row_index"].n_unique() if frame.height else 0
    # pass@k is defined up to the fewest attempts of a row (an interrupted run leaves rows short).
    ks = _ks(n_min)
    method: IntervalMethod = (
        "bootstrap" if rows_guess * (2 * len(ks) + 1) <= _BOOTSTRAP_WORK_LIMIT else "normal"
    )
    summary = summarize_results_by_model(name, ks=ks, confidence=0.95, method=method, seed=seed)
    metrics = {
        tag: {metric: s.to_dict() for metric, s in model.summaries.items()}
        for tag, model in summary.models.items()
    }
    primary = next(iter(summary.models.values()), None)
    declared = list(primary.summaries) if primary else []
    names = tables.score_names(frame, declared)
    metric = names[0] if names else None
    attempts = tables.attempt_table(frame, "", metric, summary.pass_threshold)
    rows = tables.row_table(attempts)
    histograms = {
        f"score:{m}": tables.histogram(tables.attempt_table(frame, "", m, 0.0)["score"]) for m in names
    }
    if "duration_ms" in frame.columns:
        histograms["latency_ms"] = tables.histogram(frame["duration_ms"])
    histograms["tokens"] = tables.histogram(_usage_tokens(frame))
    rates = rows["pass_rate"].drop_nulls().sort()
    step = max(1, rates.len() // _CURVE_POINTS)
    curve = [
        {"rank": i / max(1, rates.len() - 1), "pass_rate": float(rates[i])}
        for i in range(0, rates.len(), step)
    ]
    counts = dict(zip(*rows["status"].value_counts().to_dict(as_series=False).values(), strict=True))
    kind = summary.kind or meta.get("kind")
    return RunReport(
        path=name,
        header=_header(name, meta, summary, frame, n),
        metrics=metrics,
        primary_metric=metric,
        histograms=histograms,
        row_pass_rates=curve,
        judge=_judge_health(frame) if kind == "rubric" else None,
        rows_total=rows.height,
        row_counts={k: int(counts.get(k, 0)) for k in ("passed", "failed", "errored")},
        rows=row_details(frame, rows, max_rows),
        interval_method=method,
    )
