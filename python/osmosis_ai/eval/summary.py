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


class _Tally:
    """The running summary of one model tag: an aggregator per eval function and run counters."""

    def __init__(self, eval_fns: Sequence[str], n_runs: int, threshold: float) -> None:
        self.aggregators = {
            name: Aggregator(pass_threshold=threshold, n_runs=n_runs, nonfinite="fail") for name in eval_fns
        }
        self.n_runs = n_runs
        self.runs = self.failed = self.eval_errors = self.tokens = 0
        self.duration_ms = 0.0

    def add_row(self, row_index: int, runs: Sequence[Mapping[str, Any]]) -> None:
        for run in runs:
            self.runs += 1
            self.failed += not run["success"]
            self.eval_errors += bool(run.get("eval_errors"))
            self.tokens += int(run.get("tokens", 0))
            self.duration_ms += float(run.get("duration_ms", 0.0))
        for name, agg in self.aggregators.items():
            # A failed run or a missing score is a failed attempt: 0.0 in the aggregates, never a pass.
            agg.push(
                [(run.get("scores") or {}).get(name) if run["success"] else None for run in runs],
                row_index=row_index,
            )

    def summaries(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for name, agg in self.aggregators.items():
            if len(agg) == 0:
                continue
            established = agg.finish().to_established_dict()
            if self.n_runs <= 1:
                established = {k: v for k, v in established.items() if not k.startswith("pass_at_")}
            out[name] = established
        return out


def build_report(
    records: Iterable[Mapping[str, Any]],
    *,
    eval_fns: Sequence[str],
    n_runs: int,
    pass_threshold: float,
    models: Mapping[str, str] | None = None,
    keep_rows: bool = True,
) -> EvalReport:
    """Summarises logged runs as they stream past.

    A row goes into the aggregators as soon as it has ``n_runs`` runs (rows the eval did not finish go in at
    the end), so memory follows the rows still incomplete, not the log; per-row output is kept only with
    ``keep_rows`` (the ``-o`` file needs it).

    Args:
        records: Run records from the results log (any order; a repeated run replaces the earlier one).
        eval_fns: Eval function names, in report order.
        n_runs: Attempts per row the eval asked for.
        pass_threshold: Score at or above which an attempt passes.
        models: ``model_tag -> model`` when a baseline was compared (adds ``model_summaries``).
        keep_rows: Keep every run for the ``rows`` of the output JSON.
    """
    compare = bool(models)
    tallies: dict[str, _Tally] = {}
    pending: dict[tuple[str, int], dict[int, Mapping[str, Any]]] = defaultdict(dict)
    rows_out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows_seen: dict[str, int] = defaultdict(int)  # per tag: a count, not a set, so memory stays flat

    def flush(tag: str, row_index: int) -> None:
        runs = [run for _, run in sorted(pending.pop((tag, row_index)).items())]
        if tag not in tallies:
            tallies[tag] = _Tally(eval_fns, n_runs, pass_threshold)
        tallies[tag].add_row(row_index, runs)
        rows_seen[tag] += 1
        if keep_rows:
            rows_out[row_index].extend(_public_run(run, compare) for run in runs)

    for record in records:
        tag, row_index = record.get("model_tag") or "", int(record["row_index"])
        pending[(tag, row_index)][int(record["run_index"])] = record
        if len(pending[(tag, row_index)]) >= n_runs:
            flush(tag, row_index)
    for tag, row_index in sorted(pending):
        flush(tag, row_index)

    primary_tag = next((t for t in _PRIMARY_TAGS if t in tallies), "")
    primary = tallies.get(primary_tag) or _Tally(eval_fns, n_runs, pass_threshold)
    model_summaries = [
        {
            "model": model,
            "model_tag": tag,
            "total_runs": tallies[tag].runs if tag in tallies else 0,
            "total_tokens": tallies[tag].tokens if tag in tallies else 0,
            "total_duration_ms": tallies[tag].duration_ms if tag in tallies else 0.0,
            "eval_fns": tallies[tag].summaries() if tag in tallies else {},
        }
        for tag, model in (models or {}).items()
    ]
    for runs in rows_out.values():
        runs.sort(key=lambda r: (r.get("model_tag", ""), r["run_index"]))
    return EvalReport(
        rows=[{"row_index": i, "runs": runs} for i, runs in sorted(rows_out.items())],
        summaries=primary.summaries(),
        model_summaries=model_summaries,
        total_rows=rows_seen[primary_tag],
        total_runs=primary.runs,
        failed_runs=primary.failed,
        eval_error_runs=primary.eval_errors,
        total_tokens=sum(t.tokens for t in tallies.values()),
    )
