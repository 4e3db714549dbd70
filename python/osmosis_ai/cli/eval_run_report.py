"""The end of ``osmosis eval run``: refresh the run directory's files, print the table, the ``--json`` envelope."""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli.run_log import continue_command


def _table(
    summary: dict[str, Any],
    counts: dict[str, int],
    duration_ms: float,
    out: Path,
    incomplete: bool,
    backend: Any = None,
) -> list[str]:
    done = counts["succeeded"] + counts["failed"] + counts["skipped"]
    work = f"{done}/{counts['total']} complete · {counts['succeeded']} ok · {counts['failed']} failed"
    if counts["skipped"]:
        work += f" · {counts['skipped']} skipped"
    rate = (
        f"{summary['pass_rate'] * 100:.1f}% ({summary['passed']}/{summary['completed_samples']} scored, "
        f"threshold {summary['pass_threshold']:g})"
    )
    lines = [
        f"Results{' (incomplete)' if incomplete else ''}",
        f"  Work Items:  {work}",
        f"  Pass Rate:   {rate}",
    ]
    stats = summary.get("reward_stats")
    if stats:
        lines.append(
            f"  Reward:      mean {stats['mean']:.3f} · median {stats['median']:.3f} · std {stats['std']:.3f}"
            f" · min {stats['min']:.3f} · max {stats['max']:.3f}"
        )
    if summary.get("pass_at_k"):
        lines.append(
            "  pass@k:      " + " · ".join(f"k={p['k']} {p['value']:.2f}" for p in summary["pass_at_k"])
        )
    if backend is not None:
        lines.append(f"  Backend:     {backend.describe()}")
    lines += [
        f"  Tokens Used: {summary['tokens_used']}",
        f"  Duration:    {duration_ms / 1000:.1f}s",
        f"  Output:      {out}",
    ]
    return lines


def _upload_step(run_path: Path, incomplete: bool, resource: dict[str, Any], steps: list[Any]) -> str:
    """`--upload`: imports a complete run (the caller holds its lock); returns what the message adds.

    A failed upload keeps every local result and says how to retry.
    """
    from osmosis_ai.cli.eval_upload import retry_command, upload_run
    from osmosis_ai.errors import CLIError

    if incomplete:
        return " Upload skipped because the local evaluation is incomplete."
    try:
        uploaded = upload_run(run_path, locked=True)
    except CLIError as exc:
        raise CLIError(
            f"The run finished and its results are kept in {run_path}, but the upload failed: {exc}\n"
            f"Retry with: {retry_command(run_path)}"
        ) from exc
    resource["upload"] = {k: uploaded[k] for k in (
        "session_id", "eval_run_id", "eval_run_name", "status", "expected_files", "uploaded_files"
    )}  # fmt: skip
    resource["platform_url"] = uploaded["platform_url"]
    name = uploaded["eval_run_name"]
    steps.append((f"osmosis eval info {name}", {"action": "eval_info", "name": name}))
    return f" Uploaded as {name}."


def continue_run_command(run_name: str, *, retry_failed: bool = False) -> str:
    """The command that continues this run: the user's own, with ``--name``, never ``--fresh`` (it would
    archive the run), and ``--retry-failed`` when asked or already given (an interrupted retry goes on)."""
    given = "--retry-failed" in sys.argv
    add = ("--name", run_name, *(("--retry-failed",) if retry_failed and not given else ()))
    return continue_command(drop_options=("--name",), drop_switches=("--fresh",), add=add)


def report(
    run_dir: Any,
    config: Any,
    settings: dict[str, Any],
    dataset: Path,
    outcome: Any,
    carried_ids: set[str],
    selected: int,
    total_rows: int,
    o: dict[str, Any],
    logs: Any = None,
) -> int:
    """Writes index/summary/progress/metrics from the log, prints the outcome; returns the exit code."""
    from osmosis_ai.cli.output import STATE, emit_operation
    from osmosis_ai.eval.run_metrics import aggregate_metrics

    records = run_dir.latest_records()
    summary = aggregate_metrics(records, settings["pass_threshold"])
    total = selected * settings["n"]
    counts = {
        "total": total,
        "succeeded": sum(r.get("status") == "success" for r in records),
        "failed": sum(r.get("status") == "failed" for r in records),
        "skipped": sum(r.get("status") == "skipped" for r in records),
    }
    interrupted = bool(outcome and (outcome.interrupted or outcome.stopped_early))
    # How the items were spread, when they ran on a remote backend (`local` says nothing new).
    backend = o.get("backend_report")
    backend = backend if backend is not None and backend.name != "local" else None
    incomplete = interrupted or len(records) < total
    # The run's wall time over all its invocations; a rerun that ran nothing keeps its completion time.
    earlier = run_dir.earlier_eval_run()
    duration_ms = float(earlier.get("duration_ms") or 0.0) + (outcome.duration_ms if outcome else 0.0)
    now = _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if outcome is None and earlier.get("status") == "finished" and earlier.get("completed_at"):
        now = earlier["completed_at"]
    eval_run = {
        "id": run_dir.manifest.get("local_run_id"),
        "name": run_dir.name,
        "status": "incomplete" if incomplete else "finished",
        "dataset_name": dataset.name,
        "model_name": config.experiment.model_path,
        "rollout_name": config.experiment.rollout,
        "duration_ms": duration_ms,
        "started_at": run_dir.manifest.get("created_at"),
        **({} if incomplete else {"completed_at": now}),
    }
    files = {
        "progress.json": {"total_runs": total, "sampled_rows": selected, "total_dataset_rows": total_rows},
        "metrics.json": {"eval_run": eval_run, "summary": summary},
    }
    run_dir.write_outputs(records, carried_ids, files)
    failed_rows = [
        {
            "row_index": r["row_index"],
            "source_row_index": r.get("source_row_index"),
            "run_index": r["run_index"],
            "rollout_id": r.get("rollout_id"),
            "error_type": r.get("error_type"),
            "error": r.get("error"),
            "rollout_dir": str(run_dir.path / "rollout_trials" / str(r.get("rollout_id"))),
        }
        for r in records
        if r.get("status") != "success"
    ]
    if STATE.mode == "rich":
        if failed_rows:
            click.echo("\nFailed rows")
            for f in failed_rows:
                click.echo(
                    f"  row {f['row_index']} (source {f['source_row_index']}) run {f['run_index']}: "
                    f"error_type={f['error_type'] or 'unknown'} -> {f['rollout_dir']}\n    "
                    + "\n    ".join(str(f["error"]).splitlines())
                )
        click.echo()
        for line in _table(summary, counts, duration_ms, run_dir.path, incomplete, backend):
            click.echo(line)
        if outcome and outcome.stopped_early:
            click.echo(f"\nStopped early: {outcome.stop_reason}", err=True)
    steps = []
    if incomplete:
        # Stopped early (a refused key, no server): the items in flight then failed for that reason alone,
        # so the resume re-runs failed items too.
        again = continue_run_command(
            run_dir.name, retry_failed=bool(outcome and outcome.stopped_early and counts["failed"])
        )
        steps.append((again, {"action": "resume", "run_name": run_dir.name, "command": again}))
    elif counts["failed"]:
        again = continue_run_command(run_dir.name, retry_failed=True)
        steps.append((again, {"action": "retry_failed", "run_name": run_dir.name, "command": again}))
    resource = {
        "run_name": run_dir.name,
        "local_run_id": run_dir.manifest.get("local_run_id"),
        "output_path": str(run_dir.path),
        "results_log": str(run_dir.log_path),
        "dataset_source": o.get("dataset_source", "explicit"),
        "total_work_items": total,
        "dispatched": outcome.executed if outcome else 0,
        **{k: counts[k] for k in ("succeeded", "failed", "skipped")},
        # Results this invocation carried over (not those it ran again with --retry-failed).
        "resumed": sum(r.get("rollout_id") in carried_ids for r in records),
        "cancelled": bool(outcome and outcome.interrupted),
        "duration_ms": duration_ms,
        "metrics": summary,
        "failed_rows": failed_rows,
        **({"backend": backend.as_dict()} if backend is not None else {}),
    }
    # Spec §4.9: only an incomplete run (cancelled, stopped, items without a result) is partial (exit 1);
    # failed items are results, reported in the table, `failed_rows` and the next step `--retry-failed`.
    if incomplete:
        message = f"Evaluation run interrupted: {run_dir.path}"
    elif counts["failed"]:
        items = "work item" if counts["failed"] == 1 else "work items"
        message = f"Evaluation run finished ({counts['failed']} {items} failed): {run_dir.path}"
    else:
        message = f"Evaluation run finished: {run_dir.path}"
    if logs is not None:
        logs.line("INFO", "run", message, {k: counts[k] for k in ("succeeded", "failed", "skipped")})
    if o.get("upload"):
        message += _upload_step(run_dir.path, incomplete, resource, steps)
    emit_operation(
        "eval.run",
        status_="partial" if incomplete else "success",
        message=message,
        resource=resource,
        next_steps=steps,
    )
    return 1 if incomplete else 0
