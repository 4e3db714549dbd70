"""`osmosis eval -m MODULE:ATTR -d DATA --model M --eval-fn MOD:FN`: the local evaluation command.

The work is the library's :func:`osmosis_ai.eval.session.run_eval`; this module maps the click options to
:class:`~osmosis_ai.eval.session.EvalOptions`, prints the steps and the progress the session reports, then
renders its :class:`~osmosis_ai.eval.session.EvalResult` (the table, the result model's warnings, the
``--json`` envelope) and turns it into the exit code: an eval function with no scored run, or errored runs
(``--max-failure-rate`` tolerates some), make it 1; Ctrl+C gives 130 with the command that resumes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai._version import __version__
from osmosis_ai.cli.run_support import AGENT_FLAGS, BACKEND_FLAGS, LOG_FLAGS, EchoObserver, library_errors

if TYPE_CHECKING:
    from osmosis_ai.eval.session import EvalOptions, EvalResult
    from osmosis_ai.eval.summary import EvalReport
    from osmosis_ai.runs.progress import Progress
    from osmosis_ai.runs.work import RunOutcome

FLAGS = {
    **LOG_FLAGS,
    **BACKEND_FLAGS,
    **AGENT_FLAGS,
    "n_runs": "--n",
    "batch_size": "--batch-size",
    "max_turns": "--max-turns",
    "offset": "--offset",
    "limit": "--limit",
    "run_timeout": "--run-timeout",
    "output": "-o/--output",
    "dataset": "-d/--dataset",
    "model": "--model",
    "eval_fns": "--eval-fn",
    "baseline_model": "--baseline-model",
    "baseline_base_url": "--baseline-base-url",
    "baseline_api_key": "--baseline-api-key",
}

# Click options that are not options of the session: how this command shows and judges it.
_CLI_ONLY = ("debug", "quiet", "max_failure_rate", "no_preflight", "ray_address", "ray_workers")


def _options(o: dict[str, Any]) -> EvalOptions:
    from osmosis_ai.eval.session import EvalOptions
    from osmosis_ai.runs.backends import BackendOptions

    fields = {k: v for k, v in o.items() if k not in _CLI_ONLY}
    fields.update(
        dataset=o["dataset"] or "",
        model=o["model"] or "",
        backend=BackendOptions(o["backend"], ray_address=o["ray_address"], ray_workers=o["ray_workers"]),
        preflight=not o["no_preflight"],
    )
    return EvalOptions(**fields)


def _progress(quiet: bool) -> Callable[[int], Progress]:
    from osmosis_ai.eval.report import format_progress_line, format_tokens
    from osmosis_ai.runs.progress import Progress

    def extra(outcome: RunOutcome) -> list[str]:
        mean = outcome.running_mean()
        parts = [f"{format_tokens(outcome.tokens)} tokens"]
        return parts + ([f"mean {mean:.3f}"] if mean is not None else [])

    return lambda total: Progress(total, extra=extra, plain_line=format_progress_line, quiet=quiet)


def run_local_eval(**o: Any) -> int:
    """Runs the command; returns the exit code. Errors of the input raise :class:`CLIError`."""
    from osmosis_ai.eval.session import run_eval

    with library_errors(FLAGS):
        options = _options(o)
    from dotenv import find_dotenv, load_dotenv

    load_dotenv(find_dotenv(usecwd=True))
    if o["debug"]:
        import logging

        logging.basicConfig(level=logging.DEBUG)
        os.environ["OSMOSIS_DEBUG"] = "1"
    quiet = o["quiet"]
    observer = EchoObserver(quiet=quiet, progress=_progress(quiet))
    observer.message(f"osmosis-eval v{__version__}")
    if o["base_url"]:
        from osmosis_ai.redact import safe_url

        observer.message(f"Endpoint: {safe_url(o['base_url'])}")
    observer.message(f"Model: {o['model']}")
    observer.message("")
    with library_errors(FLAGS):
        result = run_eval(options, observer)
    return _finish(result, quiet, o["max_failure_rate"])


def _finish(result: EvalResult, quiet: bool, max_failure_rate: float) -> int:
    from osmosis_ai.cli.output import STATE, emit_result
    from osmosis_ai.cli.run_log import interrupted_message
    from osmosis_ai.eval.report import format_warnings

    if result.backend.name != "local" and not quiet:
        click.echo(f"Backend {result.backend.describe()}")
    outcome = result.outcome
    report = result.summary
    assert report is not None, "an eval session ends with its summary"
    if STATE.mode == "json":  # the envelope holds every row (marked interrupted): built only when asked for
        emit_result(result.to_json())
    if outcome.interrupted:
        if result.output is not None and not quiet:  # what finished, marked as such; the log continues
            click.echo(f"Results so far written to: {result.output} (interrupted: true)")
        if not quiet:  # what never ran: the planned rows and runs the log does not hold
            for line in format_warnings([w for w in report.warnings if w.code == "incomplete"]):
                click.echo(line, err=True)
        finished = f"{outcome.executed + outcome.skipped} finished runs"
        click.echo(interrupted_message(result.log_path, finished, outcome.interrupted_exit_code), err=True)
        return outcome.interrupted_exit_code
    if not quiet:
        _print_results(result, report)
    if result.output is not None and not quiet:
        click.echo(f"Results written to: {result.output}")
    if outcome.stopped_early:
        click.echo(f"Error: evaluation stopped early: {outcome.stop_reason}", err=True)
        return 1
    if report.nothing_scored:
        click.echo(f"Error: {report.nothing_scored[0].message}", err=True)
        return 1
    if report.total_runs and result.failure_rate > max_failure_rate:
        click.echo(
            f"Error: {result.failed_runs} of {report.total_runs} runs errored (allowed: {max_failure_rate:.0%}; "
            "see --max-failure-rate)",
            err=True,
        )
        return 1
    return 0


def _duration(report: EvalReport, result: EvalResult) -> str:
    from osmosis_ai.eval.report import format_duration

    if report.duration_ms is None:
        return format_duration(result.duration_ms)
    invocations = len(report.result.durations.invocations) if report.result else 1
    if invocations <= 1:
        return format_duration(report.duration_ms)
    return (
        f"{format_duration(report.duration_ms)} over {invocations} invocations "
        f"(this one {format_duration(result.duration_ms)})"
    )


def _print_results(result: EvalResult, report: EvalReport) -> None:
    from osmosis_ai.eval.report import format_results_table, format_tokens, format_warnings

    outcome = result.outcome
    click.echo()
    click.echo("Evaluation Results:")
    click.echo(f"  Rows: {report.total_rows}")
    click.echo(f"  Runs per row: {result.options.n_runs}")
    click.echo(f"  Total runs: {report.total_runs}")
    if outcome.skipped:
        click.echo(
            f"  Resumed: {outcome.skipped} run(s) kept from the log, {outcome.executed} run(s) done now"
        )
    click.echo(f"  Errored runs: {report.failed_runs}")
    if report.eval_error_runs:
        click.echo(f"  Runs with eval-function errors: {report.eval_error_runs}")
    click.echo(f"  Duration: {_duration(report, result)}")
    click.echo(f"  Total tokens: {format_tokens(report.total_tokens)}")
    click.echo()
    for line in format_results_table(report.summaries, report.eval_fn_errors):
        click.echo(line)
    for summary in report.model_summaries:
        click.echo()
        click.echo(f"Model {summary['model']} ({summary['model_tag']}):")
        for line in format_results_table(summary["eval_fns"], summary.get("eval_fn_errors")):
            click.echo(line)
    if report.warnings:
        click.echo()
        for line in format_warnings(report.warnings):
            click.echo(line)
    if outcome.stopped_early:
        click.echo(f"\nStopped early: {outcome.stop_reason}")
    click.echo(f"\nResults log: {result.log_path}")
