"""From the results log to the established results JSON (`-o FILE`) and per-function summaries.

The log is the single source of truth: an interrupted and resumed eval summarises exactly like one that
ran straight through. Every number is the result model's (:func:`osmosis_ai.results.read_results`,
computed once in the Rust core from the log, so memory does not grow with it); this module only lays it
out in the established ``-o`` shape, adding (never renaming) ``warnings``. The ``rows`` of the ``-o`` file
are streamed from the log to disk.

Per eval function: mean / population std / min / max, and pass@k for the established k (1, 3, 5, 10 up to
n) with runs missing from the log counted as did not pass. A run that errored (the agent failed or timed
out) is a 0.0 in mean / std / min / max (the established rule) and never passes; a run where the eval
function raised is errored for that function and in none of its statistics. When no run of a function
was scored, its numbers are null (never 0), and a warning says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_ai import _core
from osmosis_ai.results import FunctionResult, ModelResult, ResultSummary, ResultWarning, read_results
from osmosis_ai.results._model import result_of
from osmosis_ai.runs.log import iter_runs
from osmosis_ai.runs.log_read import numbered_from_0
from osmosis_ai.stats import DEFAULT_KS

if TYPE_CHECKING:
    from osmosis_ai._core import EvalOutputRows
    from osmosis_ai._files import LaidOutList

__all__ = ["EvalReport", "build_report", "established_scores", "iter_rows"]

_PRIMARY = "primary"


def established_scores(function: FunctionResult, n_runs: int) -> dict[str, Any]:
    """One eval function of the established ``-o``: ``mean``, ``std``, ``min``, ``max`` and, when n > 1,
    ``pass_at_<k>`` for k in 1, 3, 5, 10 up to n; each None (null, "n/a") when no run was scored. When
    runs are missing from the log, ``pass_at_k_observed`` (added) has the same k over the runs present."""
    out: dict[str, Any] = {
        "mean": function.mean,
        "std": function.std,
        "min": function.min,
        "max": function.max,
    }
    if n_runs > 1:
        ks = [k for k in DEFAULT_KS if k <= n_runs]
        out.update({f"pass_at_{k}": function.pass_at_k.get(k) for k in ks})
        if function.runs.missing:
            out["pass_at_k_observed"] = {str(k): function.pass_at_k_observed.get(k) for k in ks}
    return out


def _errors(function: FunctionResult, warnings: Sequence[ResultWarning]) -> dict[str, Any]:
    said = [w.message for w in warnings if w.code == "function_errors" and w.function == function.name]
    return {
        "count": function.runs.errored_function,
        "messages": list(function.error_messages),
        "excluded": said[0] if said else "",
    }


def _function_tables(
    model: ModelResult | None, eval_fns: Sequence[str], n_runs: int, warnings: Sequence[ResultWarning]
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Per eval function: the established summary, and the errors of the functions that raised."""
    if model is None:
        return {}, {}
    by_name = {f.name: f for f in model.functions}
    summaries, errors = {}, {}
    mine = [w for w in warnings if w.model_tag == model.model_tag]
    for name in [*eval_fns, *(n for n in by_name if n not in eval_fns)]:
        function = by_name.get(name)
        if function is None or function.runs.finished == 0:
            continue
        summaries[name] = established_scores(function, n_runs)
        if function.runs.errored_function:
            errors[name] = _errors(function, mine)
    return summaries, errors


def _model(result: ResultSummary, tag: str) -> ModelResult | None:
    return next((m for m in result.models if m.model_tag == tag), None)


@dataclass
class EvalReport:
    """Everything the terminal report and the output JSON need: the result model of the log, laid out.

    ``total_runs``, ``failed_runs`` (runs that errored: the established name), ``eval_error_runs`` and
    ``total_tokens`` count every model's runs (rows x n x models, as the established output);
    ``total_rows`` and ``summaries`` are the primary model's, and ``model_summaries`` has each model's
    own. ``duration_ms`` is wall time over every invocation of the log (resumes added up), None when the
    log does not record it. ``warnings`` are the model's, worded once: print each ``message`` as it is.
    ``result`` is the model itself.
    """

    summaries: dict[str, dict[str, Any]]
    model_summaries: list[dict[str, Any]]
    total_rows: int
    total_runs: int
    failed_runs: int
    eval_error_runs: int
    total_tokens: int
    eval_fn_errors: dict[str, dict[str, Any]] = field(default_factory=dict)
    planned_rows: int | None = None
    planned_runs: int | None = None
    log_path: Path | None = None
    n_runs: int = 1
    with_tags: bool = False
    duration_ms: float | None = None
    warnings: tuple[ResultWarning, ...] = ()
    result: ResultSummary | None = None
    # The `-o` rows the result model's pass laid out (`build_report(with_rows=True)`), for one write.
    _pass_rows: EvalOutputRows | None = field(default=None, repr=False, compare=False)

    @property
    def nothing_scored(self) -> list[ResultWarning]:
        """The warnings of functions (of any model) where no run was scored: the command exits 1."""
        return [w for w in self.warnings if w.code == "nothing_scored"]

    def _summary(self, duration_ms: float, stopped_early: bool, stop_reason: str | None) -> dict[str, Any]:
        summary: dict[str, Any] = {
            "total_rows": self.total_rows,
            "total_runs": self.total_runs,
            # Ours (added): what the session set out to do, so rows that never finished a run are seen.
            "planned_rows": self.planned_rows,
            "planned_runs": self.planned_runs,
            "eval_fns": self.summaries,
            "total_tokens": self.total_tokens,
            "total_duration_ms": duration_ms if self.duration_ms is None else self.duration_ms,
            "failed_runs": self.failed_runs,
            "eval_error_runs": self.eval_error_runs,
            "warnings": [{"code": w.code, "message": w.message} for w in self.warnings],
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
        return iter_rows(self.log_path, self._runs_per_row(), self.with_tags)

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
        :mod:`osmosis_ai._files` (never half a file; ``-`` is standard output; secrets masked).

        The rows of a file are laid out by the core straight from the log (no Python object per run); when
        it meets a record it cannot write byte for byte as this module would, the file is written again
        this module's way (the first attempt never appears: an ``-o`` file is renamed into place whole)."""
        from osmosis_ai._files import STDOUT, write_json_streamed

        head = {
            "config": dict(config),
            **({"interrupted": True} if interrupted else {}),
            "summary": self._summary(duration_ms, stopped_early, stop_reason),
        }
        tail = {"model_summaries": self.model_summaries} if self.model_summaries else {}
        if self.log_path is not None and str(path) != STDOUT:
            pass_rows, self._pass_rows = self._pass_rows, None
            laid_out = (
                _laid_out_pieces(pass_rows)
                if pass_rows is not None
                else _laid_out_rows(self.log_path, self._runs_per_row(), self.with_tags)
            )
            if laid_out is not None:
                try:
                    write_json_streamed(path, head, "rows", laid_out, lambda: tail)
                    return
                except _Unrendered:
                    pass
        write_json_streamed(path, head, "rows", self.rows(), lambda: tail)

    def _runs_per_row(self) -> int:
        return self.n_runs * max(1, len(self.model_summaries))


# What iter_rows reads of a record (the rest, most of all its conversation, is never built): the core's list,
# which its own writer of the rows reads too.
_ROW_FIELDS = tuple(_core.EVAL_ROW_FIELDS)


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


class _Unrendered(Exception):
    """The core met a record it cannot lay out as :func:`iter_rows` and ``json_block`` would."""


def _laid_out_rows(log_path: Path, runs_per_row: int, with_tags: bool) -> LaidOutList | None:
    """:func:`iter_rows`'s rows as the ``-o`` file's text, laid out by the core (``osmosis_ai._core.
    EvalOutputRows``); None when the log is not numbered from 0. Reading the pieces raises
    :class:`_Unrendered` at a record the core hands back."""
    from osmosis_ai._core import EvalOutputRows

    if not numbered_from_0(log_path):
        return None
    return _laid_out_pieces(EvalOutputRows(str(log_path), runs_per_row, with_tags))


def _laid_out_pieces(rows: EvalOutputRows) -> LaidOutList:
    """The pieces of the core's rows as the ``-o`` writer's list, raising :class:`_Unrendered` at a record the
    core hands back."""
    from osmosis_ai._files import LaidOutList

    def pieces() -> Iterator[bytes]:
        for piece in rows:
            if piece is None:
                raise _Unrendered
            yield piece

    return LaidOutList(pieces(), lambda: rows.rows)


def iter_rows(log_path: Path, runs_per_row: int, with_tags: bool) -> Iterator[dict[str, Any]]:
    """``{"row_index", "runs"}`` per row of a results log, in the order the log first mentions the rows.

    A row is handed out once it has ``runs_per_row`` runs and every row mentioned before it has been;
    rows still incomplete at the end of the log follow. Memory holds the rows between the oldest
    incomplete row and the newest, which the run engine's bounded concurrency keeps small, and of each
    run only its public part (never the conversation a record carries).
    """
    pending: dict[int, dict[tuple[str, int], dict[str, Any]]] = {}
    order: list[int] = []
    head = 0

    def row(index: int) -> dict[str, Any]:
        runs = pending.pop(index)
        return {
            "row_index": index,
            "runs": [runs[key] for key in sorted(runs)] if len(runs) > 1 else [*runs.values()],
        }

    for record in iter_runs(log_path, _ROW_FIELDS):
        index = int(record["row_index"])
        runs = pending.get(index)
        if runs is None:
            runs = pending[index] = {}
            order.append(index)
        runs[(record.get("model_tag") or "", int(record["run_index"]))] = _public_run(record, with_tags)
        if index != order[head] or len(runs) < runs_per_row:
            continue  # the oldest row still waits (the one that just grew is another, or incomplete)
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
    with_rows: bool = False,
) -> EvalReport:
    """Lays out the result model of a results log (:func:`osmosis_ai.results.read_results`).

    Args:
        log_path: The results log (any order of runs; a repeated run replaces the earlier one).
        eval_fns: Eval function names, in report order.
        n_runs: Attempts per row the eval asked for.
        pass_threshold: Score at or above which an attempt passes.
        models: ``model_tag -> model`` when a baseline was compared (adds ``model_summaries``).
        with_rows: Also lay out the ``-o`` rows in the same pass over the log, for one
            :meth:`EvalReport.write_json` to a file (a log not numbered from 0 is read again then).

    Example:
        >>> report = build_report(Path(log), eval_fns=["m:f"], n_runs=1, pass_threshold=1.0)  # doctest: +SKIP
    """
    pass_rows = None
    if with_rows and numbered_from_0(log_path):
        runs_per_row = n_runs * max(1, len(models or {}))
        raw, pass_rows = _core.result_model_with_rows(
            str(log_path), runs_per_row, bool(models), float(pass_threshold), int(n_runs), "zero"
        )
        result = result_of(raw)
    else:
        result = read_results(log_path, pass_threshold=pass_threshold, n_runs=n_runs, failed="zero")
    warnings = result.warnings
    summaries, errors = _function_tables(_model(result, _PRIMARY), eval_fns, n_runs, warnings)
    model_summaries = []
    for tag, model in (models or {}).items():
        found = _model(result, tag or _PRIMARY)
        tables = _function_tables(found, eval_fns, n_runs, warnings)
        entry: dict[str, Any] = {
            "model": model,
            "model_tag": tag or _PRIMARY,
            "total_runs": found.total_runs if found else 0,
            "total_tokens": found.total_tokens if found else 0,
            # The established name; the runs of two models interleave, so this is their own time added up.
            "total_duration_ms": found.run_time_ms if found else 0.0,
            "eval_fns": tables[0],
        }
        if tables[1]:
            entry["eval_fn_errors"] = tables[1]
        model_summaries.append(entry)
    primary = _model(result, _PRIMARY)
    return EvalReport(
        summaries=summaries,
        model_summaries=model_summaries,
        total_rows=primary.total_rows if primary else 0,
        total_runs=sum(m.total_runs for m in result.models),
        failed_runs=sum(m.failed_runs for m in result.models),
        eval_error_runs=sum(m.eval_error_runs for m in result.models),
        total_tokens=sum(m.total_tokens for m in result.models),
        eval_fn_errors=errors,
        planned_rows=primary.planned_rows if primary else None,
        planned_runs=_planned_runs(result.models),
        log_path=log_path,
        n_runs=n_runs,
        with_tags=bool(models),
        duration_ms=result.durations.total_duration_ms,
        warnings=result.warnings,
        result=result,
        _pass_rows=pass_rows,
    )


def _planned_runs(models: Sequence[ModelResult]) -> int | None:
    """Every model's planned runs added up; None when one of them does not know its own."""
    planned = [m.planned_runs for m in models]
    return None if not planned or None in planned else sum(p for p in planned if p is not None)
