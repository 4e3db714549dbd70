"""The end of ``eval run``: the run directory's files refreshed from the results log, and the result object.

Every invocation (also one that ran nothing, or was interrupted) rewrites ``index.jsonl``,
``summary.jsonl``, ``progress.json`` and ``metrics.json`` from the log, so they always describe the run
as the log holds it. The numbers are the log's result model laid out under the platform's names
(:func:`osmosis_ai.eval.run_metrics.metrics_summary`), carried in :attr:`EvalRunResult.summary`.
"""

from __future__ import annotations

import datetime as _dt
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.results import ResultSummary
from osmosis_ai.runs.backends import BackendReport
from osmosis_ai.runs.work import RunOutcome
from osmosis_ai.stop_signals import stop_word

__all__ = ["EvalRunResult", "WorkCounts", "finish_run"]


@dataclass(frozen=True)
class WorkCounts:
    """The run's work items by their latest result (``total`` is rows selected x n)."""

    total: int
    succeeded: int = 0
    failed: int = 0
    skipped: int = 0

    @property
    def done(self) -> int:
        return self.succeeded + self.failed + self.skipped


@dataclass
class EvalRunResult:
    """What an ``eval run`` invocation did, and the run as its results log holds it.

    Attributes:
        options: The options it ran with (an :class:`~osmosis_ai.eval.run_session.EvalRunOptions`).
        run_name: The run's name (pass it again to resume).
        run_path: The run directory.
        results_log: The run's results log.
        local_run_id: The run's id in its manifest.
        status: ``finished``, ``incomplete`` (interrupted, stopped early, items without a result) or
            ``cancelled`` (the cost question was answered no; nothing ran, no file was refreshed).
        outcome: What this invocation ran (None when it ran nothing).
        summary: The run's metrics (``pass_rate``, ``reward_stats``, ``pass_at_k``, tokens, ``warnings``;
            ``pass_rate`` null when nothing was scored).
        result: The result model they are laid out from (None when nothing was refreshed).
        counts: Work items by their latest result.
        duration_ms: The run's wall time over all its invocations.
        failed_rows: The items whose latest result is not a success, with their error and folder.
        resumed: Results this invocation carried over (not those it ran again).
        dataset_source: ``explicit`` (a dataset file), ``cache`` or ``download`` (the platform's).
        backend: How the items were spread.
        message: One line saying how the run ended (also the last line of its ``logs.txt``).
    """

    options: Any
    run_name: str
    run_path: Path
    results_log: Path
    local_run_id: str | None = None
    status: str = "finished"
    outcome: RunOutcome | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    counts: WorkCounts = field(default_factory=lambda: WorkCounts(0))
    duration_ms: float = 0.0
    failed_rows: list[dict[str, Any]] = field(default_factory=list)
    resumed: int = 0
    dataset_source: str = "explicit"
    backend: BackendReport = field(default_factory=BackendReport)
    message: str = ""
    result: ResultSummary | None = None

    @classmethod
    def cancelled_run(cls, options: Any, run_dir: Any) -> EvalRunResult:
        """The result of a run whose cost question was answered no."""
        return cls(options, run_dir.name, run_dir.path, run_dir.log_path, status="cancelled")

    @property
    def incomplete(self) -> bool:
        """Interrupted, stopped early, or items without a result (a resume continues it)."""
        return self.status == "incomplete"

    def to_json(self) -> dict[str, Any]:
        """The run as the ``--json`` envelope's ``resource`` describes it."""
        outcome = self.outcome
        return {
            "run_name": self.run_name,
            "local_run_id": self.local_run_id,
            "output_path": str(self.run_path),
            "results_log": str(self.results_log),
            "dataset_source": self.dataset_source,
            "total_work_items": self.counts.total,
            "dispatched": outcome.executed if outcome else 0,
            "succeeded": self.counts.succeeded,
            "failed": self.counts.failed,
            "skipped": self.counts.skipped,
            "resumed": self.resumed,
            "cancelled": bool(outcome and outcome.interrupted),
            "duration_ms": self.duration_ms,
            "metrics": self.summary,
            "failed_rows": self.failed_rows,
            **({"backend": self.backend.as_dict()} if self.backend.name != "local" else {}),
        }


def _eval_run(plan: Any, outcome: RunOutcome | None, incomplete: bool) -> dict[str, Any]:
    """``metrics.json``'s ``eval_run``: the run's wall time over all its invocations; a rerun that ran
    nothing keeps its completion time."""
    run_dir = plan.run_dir
    earlier = run_dir.earlier_eval_run()
    duration_ms = float(earlier.get("duration_ms") or 0.0) + (outcome.duration_ms if outcome else 0.0)
    now = _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if outcome is None and earlier.get("status") == "finished" and earlier.get("completed_at"):
        now = earlier["completed_at"]
    return {
        "id": run_dir.manifest.get("local_run_id"),
        "name": run_dir.name,
        "status": "incomplete" if incomplete else "finished",
        "dataset_name": plan.dataset.name,
        "model_name": plan.config.experiment.model_path,
        "rollout_name": plan.config.experiment.rollout,
        "duration_ms": duration_ms,
        "started_at": run_dir.manifest.get("created_at"),
        **({} if incomplete else {"completed_at": now}),
    }


def _failed_row(run_path: Path, r: dict[str, Any]) -> dict[str, Any]:
    return {
        "row_index": r["row_index"],
        "source_row_index": r.get("source_row_index"),
        "run_index": r["run_index"],
        "rollout_id": r.get("rollout_id"),
        "error_type": r.get("error_type"),
        "error": r.get("error"),
        "rollout_dir": str(run_path / "rollout_trials" / str(r.get("rollout_id"))),
    }


class _Tally:
    """What the end of a run needs of its records, taken as they stream past (none is kept): the rewards
    for the median, counts by status, the failed items and how many were carried over."""

    def __init__(self, run_path: Path, carried_ids: set[str]) -> None:
        from osmosis_ai.eval.run_metrics import index_reward

        self.run_path, self.carried_ids, self.index_reward = run_path, carried_ids, index_reward
        self.rewards = array("d")  # 8 bytes a reward, not a float object's 32
        self.statuses: dict[Any, int] = {}
        self.failed_rows: list[dict[str, Any]] = []
        self.resumed = 0

    def add(self, record: dict[str, Any]) -> None:
        reward = self.index_reward(record)
        if reward is not None:
            self.rewards.append(reward)
        status = record.get("status")
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if status != "success":
            self.failed_rows.append(_failed_row(self.run_path, record))
        self.resumed += record.get("rollout_id") in self.carried_ids

    @property
    def records(self) -> int:
        return sum(self.statuses.values())


def _message(run_path: Path, counts: WorkCounts, incomplete: bool, outcome: RunOutcome | None) -> str:
    if incomplete:
        code = outcome.interrupted_exit_code if outcome is not None and outcome.interrupted else 0
        return f"Evaluation run {stop_word(code)}: {run_path}"
    if counts.failed:
        items = "work item" if counts.failed == 1 else "work items"
        return f"Evaluation run finished ({counts.failed} {items} failed): {run_path}"
    return f"Evaluation run finished: {run_path}"


def finish_run(
    plan: Any, outcome: RunOutcome | None, carried_ids: set[str], logs: Any, backend: BackendReport
) -> EvalRunResult:
    """Writes index/summary/progress/metrics from the log; returns the run's result.

    Only an incomplete run (cancelled, stopped, items without a result) is ``incomplete``; failed items
    are results, reported in ``failed_rows`` (a retry re-runs them).
    """
    from osmosis_ai.eval.run_metrics import metrics_summary

    run_dir = plan.run_dir
    tally = _Tally(run_dir.path, carried_ids)
    run_dir.write_outputs(plan.settings.n, carried_ids, tally.add)
    summary, result = metrics_summary(run_dir.log_path, plan.settings.pass_threshold, tally.rewards)
    counts = WorkCounts(
        plan.selected * plan.settings.n,
        succeeded=tally.statuses.get("success", 0),
        failed=tally.statuses.get("failed", 0),
        skipped=tally.statuses.get("skipped", 0),
    )
    interrupted = bool(outcome and (outcome.interrupted or outcome.stopped_early))
    incomplete = interrupted or tally.records < counts.total
    eval_run = _eval_run(plan, outcome, incomplete)
    files = {
        "progress.json": {
            "total_runs": counts.total,
            "sampled_rows": plan.selected,
            "total_dataset_rows": plan.total_rows,
        },
        "metrics.json": {"eval_run": eval_run, "summary": summary},
    }
    run_dir.write_files(files)
    message = _message(run_dir.path, counts, incomplete, outcome)
    if logs is not None:
        logs.line(
            "INFO",
            "run",
            message,
            {"succeeded": counts.succeeded, "failed": counts.failed, "skipped": counts.skipped},
        )
    return EvalRunResult(
        plan.options,
        run_dir.name,
        run_dir.path,
        run_dir.log_path,
        local_run_id=run_dir.manifest.get("local_run_id"),
        status="incomplete" if incomplete else "finished",
        outcome=outcome,
        summary=summary,
        counts=counts,
        duration_ms=eval_run["duration_ms"],
        failed_rows=tally.failed_rows,
        resumed=tally.resumed,
        dataset_source=plan.dataset_source,
        backend=backend,
        message=message,
        result=result,
    )
