"""The end of ``osmosis eval run``: the run's table, its failed rows, the ``--json`` envelope, the next step.

The run directory's files were refreshed by the library (:mod:`osmosis_ai.eval.run_outputs`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai.cli.run_log import continue_command
from osmosis_ai.terminal_text import terminal_safe

if TYPE_CHECKING:
    from osmosis_ai.eval.run_outputs import EvalRunResult, WorkCounts
    from osmosis_ai.runs.backends import BackendReport

# A next step: the command to show, and its ``--json`` form.
Step = tuple[str, dict[str, Any]]


def _pass_rate(summary: dict[str, Any]) -> str:
    """``20.0% (1 of 5 runs passed; 5 scored, threshold 1)``; ``n/a`` when nothing was scored."""
    threshold = f"threshold {summary['pass_threshold']:g}"
    if summary["pass_rate"] is None:
        return f"n/a (no run was scored; {threshold})"
    return (
        f"{summary['pass_rate'] * 100:.1f}% ({summary['passed']} of {summary['completed_samples']} runs "
        f"passed; {summary['graded']} scored, {threshold})"
    )


def pass_at_k_lines(summary: dict[str, Any]) -> list[str]:
    """The pass@k line, and beside it the observed-only values when runs are missing."""

    def points(key: str) -> str:
        return " · ".join(
            f"k={p['k']} {'n/a' if p['value'] is None else format(p['value'], '.2f')}" for p in summary[key]
        )

    lines = [f"  pass@k:      {points('pass_at_k')}"] if summary.get("pass_at_k") else []
    if lines and summary.get("pass_at_k_observed"):
        lines.append(f"  (observed):  {points('pass_at_k_observed')} (over the runs present only)")
    return lines


def _table(
    summary: dict[str, Any],
    counts: WorkCounts,
    duration_ms: float,
    out: Path,
    incomplete: bool,
    backend: BackendReport | None = None,
) -> list[str]:
    work = f"{counts.done}/{counts.total} complete · {counts.succeeded} ok · {counts.failed} errored"
    if counts.skipped:
        work += f" · {counts.skipped} skipped"
    lines = [
        f"Results{' (incomplete)' if incomplete else ''}",
        f"  Work Items:  {work}",
        f"  Pass Rate:   {_pass_rate(summary)}",
    ]
    stats = summary.get("reward_stats")
    if stats:
        lines.append(
            f"  Reward:      mean {stats['mean']:.3f} · median {stats['median']:.3f} · std {stats['std']:.3f}"
            f" · min {stats['min']:.3f} · max {stats['max']:.3f}"
        )
    lines += pass_at_k_lines(summary)
    if backend is not None:
        lines.append(f"  Backend:     {backend.describe()}")
    lines += [
        f"  Tokens Used: {summary['tokens_used']}",
        f"  Duration:    {duration_ms / 1000:.1f}s",
        f"  Output:      {out}",
    ]
    return lines + [f"Warning: {terminal_safe(w['message'])}" for w in summary.get("warnings", ())]


def _upload_step(run_path: Path, incomplete: bool, resource: dict[str, Any], steps: list[Step]) -> str:
    """`--upload`: imports a complete run (under its lock, taken again); returns what the message adds.

    A failed upload keeps every local result and says how to retry.
    """
    from osmosis_ai.cli.eval_upload import retry_command, upload_run
    from osmosis_ai.errors import CLIError

    if incomplete:
        return " Upload skipped because the local evaluation is incomplete."
    try:
        uploaded = upload_run(run_path, locked=False)
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


def render(result: EvalRunResult, *, upload: bool = False) -> int:
    """Prints the run's failed rows and table (rich mode) and the operation envelope; returns the exit
    code (1 when the run is incomplete: a resume continues it; 1 when no run was scored)."""
    from osmosis_ai.cli.output import STATE, emit_operation

    counts, outcome = result.counts, result.outcome
    backend = result.backend if result.backend.name != "local" else None
    if STATE.mode == "rich":
        if result.failed_rows:
            click.echo("\nFailed rows")
            for f in result.failed_rows:
                click.echo(
                    f"  row {f['row_index']} (source {f['source_row_index']}) run {f['run_index']}: "
                    f"error_type={f['error_type'] or 'unknown'} -> {f['rollout_dir']}\n    "
                    + "\n    ".join(terminal_safe(line) for line in str(f["error"]).splitlines())
                )
        click.echo()
        for line in _table(
            result.summary, counts, result.duration_ms, result.run_path, result.incomplete, backend
        ):
            click.echo(line)
        if outcome and outcome.stopped_early:
            click.echo(f"\nStopped early: {outcome.stop_reason}", err=True)
    steps: list[Step] = []
    if result.incomplete:
        # Stopped early (a refused key, no server): the items in flight then failed for that reason alone,
        # so the resume re-runs failed items too.
        again = continue_run_command(
            result.run_name, retry_failed=bool(outcome and outcome.stopped_early and counts.failed)
        )
        steps.append((again, {"action": "resume", "run_name": result.run_name, "command": again}))
    elif counts.failed:
        again = continue_run_command(result.run_name, retry_failed=True)
        steps.append((again, {"action": "retry_failed", "run_name": result.run_name, "command": again}))
    message, resource = result.message, result.to_json()
    if upload:
        message += _upload_step(result.run_path, result.incomplete, resource, steps)
    emit_operation(
        "eval.run",
        status_="partial" if result.incomplete else "success",
        message=message,
        resource=resource,
        next_steps=steps,
    )
    if result.incomplete:
        return 1
    nothing = [w for w in result.summary.get("warnings", ()) if w["code"] == "nothing_scored"]
    if nothing:
        click.echo(f"Error: {nothing[0]['message']}", err=True)
        return 1
    return 0
