"""From the results log to the established results JSON (`-o FILE`) and per-function summaries.

The log is the single source of truth: an interrupted and resumed eval summarises exactly like one that
ran straight through. The statistics come from the Rust core reading the log
(:func:`osmosis_ai.stats.summarize_results_by_model`), so memory does not grow with the log; the ``rows`` of
the ``-o`` file are streamed from the log to disk.

Per eval function: mean / population std / min / max over the attempts, and pass@k per row with
``n = max(attempts logged, n_runs)``. Two kinds of run that have no score are told apart:

* a failed run (the agent failed or timed out: ``success`` false) keeps the established convention: a
  0.0 in the aggregates and never a pass;
* a run where the eval function raised (``eval_errors``) is not a score at all: it is counted as an error
  for that function (shown with its first messages) and left out of that function's mean, std, min, max
  and pass@k (the row's n shrinks by it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai._stats_types import Summary
from osmosis_ai.runs.log import iter_runs
from osmosis_ai.stats import ModelResults, summarize_results_by_model

__all__ = ["EvalReport", "build_report", "iter_rows"]

_PRIMARY = "primary"


def _established(summary: Summary, n_runs: int) -> dict[str, float]:
    """``mean``, ``std``, ``min``, ``max`` (0.0 without scores, as established) and, when rows have more
    than one attempt, ``pass_at_<k>``."""
    out = {
        "mean": summary.mean or 0.0,
        "std": summary.std or 0.0,
        "min": summary.min or 0.0,
        "max": summary.max or 0.0,
    }
    if n_runs > 1:
        out.update({f"pass_at_{k}": v for k, v in summary.pass_at_k.items()})
    return out


def _errors(name: str, summary: Summary) -> dict[str, Any]:
    runs = "run" if summary.errors == 1 else "runs"
    return {
        "count": summary.errors,
        "messages": list(summary.error_messages),
        "excluded": f"{summary.errors} {runs} where {name} raised are left out of its mean, std, min, max "
        "and pass@k",
    }


def _function_tables(
    model: ModelResults | None, eval_fns: Sequence[str], n_runs: int
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, Any]]]:
    """Per eval function: the established summary, and the errors of the functions that raised."""
    if model is None:
        return {}, {}
    summaries, errors = {}, {}
    for name in [*eval_fns, *(n for n in model.summaries if n not in eval_fns)]:
        summary = model.summaries.get(name)
        if summary is None or summary.rows == 0:
            continue
        summaries[name] = _established(summary, n_runs)
        if summary.errors:
            errors[name] = _errors(name, summary)
    return summaries, errors


@dataclass
class EvalReport:
    """Everything the terminal report and the output JSON need.

    ``total_runs``, ``failed_runs``, ``eval_error_runs`` and ``total_tokens`` count every model's runs
    (rows x n x models, as the established output); ``total_rows`` and ``summaries`` are the primary
    model's, and ``model_summaries`` has each model's own.
    """

    summaries: dict[str, dict[str, float]]
    model_summaries: list[dict[str, Any]]
    total_rows: int
    total_runs: int
    failed_runs: int
    eval_error_runs: int
    total_tokens: int
    eval_fn_errors: dict[str, dict[str, Any]] = field(default_factory=dict)
    log_path: Path | None = None
    n_runs: int = 1
    with_tags: bool = False

    def _summary(self, duration_ms: float, stopped_early: bool, stop_reason: str | None) -> dict[str, Any]:
        summary: dict[str, Any] = {
            "total_rows": self.total_rows,
            "total_runs": self.total_runs,
            "eval_fns": self.summaries,
            "total_tokens": self.total_tokens,
            "total_duration_ms": duration_ms,
            "failed_runs": self.failed_runs,
            "eval_error_runs": self.eval_error_runs,
        }
        if self.eval_fn_errors:
            summary["eval_fn_errors"] = self.eval_fn_errors
        if stopped_early:
            summary["stopped_early"] = True
            summary["stop_reason"] = stop_reason
        return summary

    def rows(self) -> Iterator[dict[str, Any]]:
        """The ``rows`` of the output JSON, streamed from the log (nothing without one)."""
        if self.log_path is None:
            return iter(())
        return iter_rows(self.log_path, self.n_runs * max(1, len(self.model_summaries)), self.with_tags)

    def to_json(
        self,
        *,
        config: Mapping[str, Any],
        duration_ms: float,
        stopped_early: bool = False,
        stop_reason: str | None = None,
        interrupted: bool = False,
    ) -> dict[str, Any]:
        """The established `-o` layout in memory: ``config``, ``summary``, ``rows`` (+ ``model_summaries``),
        and ``interrupted: true`` after ``config`` when a signal stopped the run (the rows are then those
        that finished). :meth:`write_json` writes the same document without holding the rows."""
        out: dict[str, Any] = {
            "config": dict(config),
            **({"interrupted": True} if interrupted else {}),
            "summary": self._summary(duration_ms, stopped_early, stop_reason),
            "rows": list(self.rows()),
        }
        if self.model_summaries:
            out["model_summaries"] = self.model_summaries
        return out

    def write_json(
        self,
        path: Path,
        *,
        config: Mapping[str, Any],
        duration_ms: float,
        stopped_early: bool = False,
        stop_reason: str | None = None,
        interrupted: bool = False,
    ) -> None:
        """Writes :meth:`to_json`'s document (indented, ASCII) one row at a time, by the ``-o`` rule of
        :mod:`osmosis_ai._files` (never half a file; ``-`` is standard output; secrets masked)."""

        def block(value: Any) -> str:
            return json.dumps(value, indent=2, default=str).replace("\n", "\n  ")

        from osmosis_ai._files import output_writer

        with output_writer(path) as write:  # each write is whole JSON values: see output_writer
            write('{\n  "config": ' + block(dict(config)))
            if interrupted:
                write(',\n  "interrupted": true')
            write(',\n  "summary": ' + block(self._summary(duration_ms, stopped_early, stop_reason)))
            write(',\n  "rows": [')
            for i, row in enumerate(self.rows()):
                write(("\n    " if i == 0 else ",\n    ") + block(row).replace("\n", "\n  "))
            write("\n  ]")
            if self.model_summaries:
                write(',\n  "model_summaries": ' + block(self.model_summaries))
            write("\n}\n")


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
        run["model_tag"] = record.get("model_tag") or _PRIMARY
    return run


def iter_rows(log_path: Path, runs_per_row: int, with_tags: bool) -> Iterator[dict[str, Any]]:
    """``{"row_index", "runs"}`` per row of a results log, in the order the log first mentions the rows.

    A row is handed out once it has ``runs_per_row`` runs and every row mentioned before it has been;
    rows still incomplete at the end of the log follow. Memory holds the rows between the oldest
    incomplete row and the newest, which the run engine's bounded concurrency keeps small.
    """
    pending: dict[int, dict[tuple[str, int], dict[str, Any]]] = {}
    order: list[int] = []
    head = 0

    def row(index: int) -> dict[str, Any]:
        runs = sorted(pending.pop(index).items())
        return {"row_index": index, "runs": [_public_run(run, with_tags) for _, run in runs]}

    for record in iter_runs(log_path):
        index = int(record["row_index"])
        if index not in pending:
            pending[index] = {}
            order.append(index)
        pending[index][(record.get("model_tag") or "", int(record["run_index"]))] = record
        while head < len(order) and len(pending[order[head]]) >= runs_per_row:
            yield row(order[head])
            head += 1
        if head > 1024:  # keep the list of handed-out rows from growing with the log
            del order[:head]
            head = 0
    for index in order[head:]:
        yield row(index)


def build_report(
    log_path: Path,
    *,
    eval_fns: Sequence[str],
    n_runs: int,
    pass_threshold: float,
    models: Mapping[str, str] | None = None,
) -> EvalReport:
    """Summarises a results log through the Rust statistics core.

    Args:
        log_path: The results log (any order of runs; a repeated run replaces the earlier one).
        eval_fns: Eval function names, in report order.
        n_runs: Attempts per row the eval asked for.
        pass_threshold: Score at or above which an attempt passes.
        models: ``model_tag -> model`` when a baseline was compared (adds ``model_summaries``).

    Example:
        >>> report = build_report(Path(log), eval_fns=["m:f"], n_runs=1, pass_threshold=1.0)  # doctest: +SKIP
    """
    result = summarize_results_by_model(
        log_path, pass_threshold=pass_threshold, n_runs=n_runs, failed="zero", nonfinite="fail"
    )
    by_tag = result.models
    primary = by_tag.get(_PRIMARY)
    summaries, errors = _function_tables(primary, eval_fns, n_runs)
    model_summaries = []
    for tag, model in (models or {}).items():
        found = by_tag.get(tag or _PRIMARY)
        tables = _function_tables(found, eval_fns, n_runs)
        entry: dict[str, Any] = {
            "model": model,
            "model_tag": tag or _PRIMARY,
            "total_runs": found.runs if found else 0,
            "total_tokens": found.tokens if found else 0,
            "total_duration_ms": found.duration_ms if found else 0.0,
            "eval_fns": tables[0],
        }
        if tables[1]:
            entry["eval_fn_errors"] = tables[1]
        model_summaries.append(entry)
    everything = list(by_tag.values())
    return EvalReport(
        summaries=summaries,
        model_summaries=model_summaries,
        total_rows=primary.rows if primary else 0,
        total_runs=sum(m.runs for m in everything),
        failed_runs=sum(m.failed_runs for m in everything),
        eval_error_runs=sum(m.eval_error_runs for m in everything),
        total_tokens=sum(m.tokens for m in everything),
        eval_fn_errors=errors,
        log_path=log_path,
        n_runs=n_runs,
        with_tags=bool(models),
    )
