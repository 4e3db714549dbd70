"""From the results log to the established results JSON (`-o FILE`) and per-function summaries.

The log is the single source of truth: an interrupted and resumed eval summarises exactly like one that
ran straight through. Statistics come from the Rust core (:mod:`osmosis_ai.stats`): per eval function,
mean / population std / min / max over all attempts with failed attempts and missing scores as 0.0 (the
established convention), and pass@k per row with ``n = max(attempts logged, n_runs)``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from osmosis_ai.stats import Aggregator

__all__ = ["EvalReport", "build_report"]

_PRIMARY_TAGS = ("", "primary")


@dataclass
class EvalReport:
    """Everything the terminal report and the output JSON need."""

    rows: list[dict[str, Any]]
    summaries: dict[str, dict[str, float]]
    model_summaries: list[dict[str, Any]]
    total_rows: int
    total_runs: int
    failed_runs: int
    eval_error_runs: int
    total_tokens: int

    def to_json(
        self,
        *,
        config: Mapping[str, Any],
        duration_ms: float,
        stopped_early: bool = False,
        stop_reason: str | None = None,
    ) -> dict[str, Any]:
        """The established `-o` layout: ``config``, ``summary``, ``rows`` (+ ``model_summaries``)."""
        summary: dict[str, Any] = {
            "total_rows": self.total_rows,
            "total_runs": self.total_runs,
            "eval_fns": self.summaries,
            "total_tokens": self.total_tokens,
            "total_duration_ms": duration_ms,
            "failed_runs": self.failed_runs,
            "eval_error_runs": self.eval_error_runs,
        }
        if stopped_early:
            summary["stopped_early"] = True
            summary["stop_reason"] = stop_reason
        out: dict[str, Any] = {"config": dict(config), "summary": summary, "rows": self.rows}
        if self.model_summaries:
            out["model_summaries"] = self.model_summaries
        return out


def _public_run(record: Mapping[str, Any], with_tag: bool) -> dict[str, Any]:
    run: dict[str, Any] = {
        "run_index": record["run_index"],
        "success": record["success"],
        "scores": record.get("scores") or {},
        "duration_ms": record.get("duration_ms", 0.0),
        "tokens": record.get("tokens", 0),
    }
    if record.get("error"):
        run["error"] = record["error"]
    if record.get("eval_errors"):
        run["eval_errors"] = record["eval_errors"]
    if with_tag:
        run["model_tag"] = record.get("model_tag") or "primary"
    return run


def _summaries(
    by_row: Mapping[int, Sequence[Mapping[str, Any]]], eval_fns: Sequence[str], n_runs: int, threshold: float
) -> dict[str, dict[str, float]]:
    summaries: dict[str, dict[str, float]] = {}
    for name in eval_fns:
        agg = Aggregator(pass_threshold=threshold, n_runs=n_runs, nonfinite="fail")
        for row_index, runs in sorted(by_row.items()):
            # A failed run or a missing score is a failed attempt: 0.0 in the aggregates, never a pass.
            agg.push(
                [run["scores"].get(name) if run["success"] else None for run in runs], row_index=row_index
            )
        if len(agg) == 0:
            continue
        established = agg.finish().to_established_dict()
        if n_runs <= 1:
            established = {k: v for k, v in established.items() if not k.startswith("pass_at_")}
        summaries[name] = established
    return summaries


def build_report(
    records: Iterable[Mapping[str, Any]],
    *,
    eval_fns: Sequence[str],
    n_runs: int,
    pass_threshold: float,
    models: Mapping[str, str] | None = None,
) -> EvalReport:
    """Groups logged runs by row and summarises them.

    Args:
        records: Run records from the results log (any order; a later record for the same run wins).
        eval_fns: Eval function names, in report order.
        n_runs: Attempts per row the eval asked for.
        pass_threshold: Score at or above which an attempt passes.
        models: ``model_tag -> model`` when a baseline was compared (adds ``model_summaries``).
    """
    latest: dict[tuple[int, int, str], Mapping[str, Any]] = {}
    for record in records:
        latest[(int(record["row_index"]), int(record["run_index"]), record.get("model_tag") or "")] = record
    compare = bool(models)
    by_tag: dict[str, dict[int, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for (row_index, _, tag), record in sorted(latest.items()):
        by_tag[tag][row_index].append(record)
    primary_tag = next((t for t in _PRIMARY_TAGS if t in by_tag), "")
    primary = by_tag.get(primary_tag, {})

    rows_out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for (row_index, _, _), record in sorted(latest.items()):
        rows_out[row_index].append(_public_run(record, compare))
    primary_runs = [r for runs in primary.values() for r in runs]
    model_summaries = []
    if models:
        for tag, model in models.items():
            runs_of = by_tag.get(tag, {})
            flat = [r for runs in runs_of.values() for r in runs]
            model_summaries.append(
                {
                    "model": model,
                    "model_tag": tag,
                    "total_runs": len(flat),
                    "total_tokens": sum(int(r.get("tokens", 0)) for r in flat),
                    "total_duration_ms": sum(float(r.get("duration_ms", 0.0)) for r in flat),
                    "eval_fns": _summaries(runs_of, eval_fns, n_runs, pass_threshold),
                }
            )
    return EvalReport(
        rows=[{"row_index": i, "runs": runs} for i, runs in sorted(rows_out.items())],
        summaries=_summaries(primary, eval_fns, n_runs, pass_threshold),
        model_summaries=model_summaries,
        total_rows=len(rows_out),
        total_runs=len(primary_runs),
        failed_runs=sum(1 for r in primary_runs if not r["success"]),
        eval_error_runs=sum(1 for r in primary_runs if r.get("eval_errors")),
        total_tokens=sum(int(r.get("tokens", 0)) for r in latest.values()),
    )
