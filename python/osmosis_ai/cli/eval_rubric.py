"""``osmosis eval-rubric`` (YAML rubric configs) and the pieces ``osmosis eval rubric`` shares with it.

Both commands (the newer spelling lives in ``cli/eval_rubric_inline.py``) judge JSONL records
concurrently through the same engine, show progress on a terminal, print a judge-health line, and always
write what finished, also when runs fail or Ctrl+C stops the session. The exit code is non-zero when any
run was not scored (the established CLI exited 0 even then).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai.cli import bounds
from osmosis_ai.cli.backend_options import backend_options
from osmosis_ai.cli.output import emit_result_streamed, json_result
from osmosis_ai.cli.run_log import log_options
from osmosis_ai.cli.run_support import BACKEND_FLAGS, LOG_FLAGS, library_errors
from osmosis_ai.errors import CLIError

if TYPE_CHECKING:
    from osmosis_ai.cli.run_support import EchoObserver
    from osmosis_ai.rubric.run import InlineRubricOptions, RubricEvalOptions, RubricEvalResult
    from osmosis_ai.rubric.session import RubricSession
    from osmosis_ai.runs.backends import BackendReport
    from osmosis_ai.runs.work import RunOutcome


def _common_judge_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "-n",
            "--n",
            "--number",
            "number",
            type=bounds.capped(bounds.MAX_RUNS),
            default=1,
            show_default=True,
            help="Judge runs per record (as `osmosis eval --n`; not a record limit).",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(min=1, max=bounds.MAX_CONCURRENCY),
            default=8,
            show_default=True,
            help="Judge calls in flight at once.",
        ),
        click.option(
            "--base-url",
            default=None,
            help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL and the like, else the provider).",
        ),
        click.option(
            "--timeout",
            type=bounds.timeout_seconds(),
            default=None,
            help="Seconds per judge request (default per provider, 30 for most).",
        ),
        click.option(
            "--max-retries",
            type=click.IntRange(min=0, max=100),
            default=None,
            help="Retries on 429/5xx/timeouts per call (default 3, honouring Retry-After).",
        ),
        click.option(
            "--temperature", type=bounds.temperature(), default=None, help="Judge temperature (default 0)."
        ),
        click.option("--seed", type=int, default=None, help="Judge seed, where the provider accepts one."),
    ]
    for option in reversed(options):
        func = option(func)
    return backend_options(log_options(func))


FLAGS = {
    **LOG_FLAGS,
    **BACKEND_FLAGS,
    "repeat": "--repeat",
    "number": "--number",
    "output": "-o/--output",
    "model": "--model",
    "score_max": "--score-max",
    "score_min": "--score-min",
    "concurrency": "--concurrency",
}


def judge_fields(o: dict[str, Any]) -> dict[str, Any]:
    """The judge's settings among a rubric command's click options, as options fields."""
    from osmosis_ai.runs.backends import BackendOptions

    names = ("number", "concurrency", "base_url", "timeout", "max_retries", "temperature", "seed")
    return {
        **{name: o[name] for name in (*names, "log_path", "resume_path")},
        "backend": BackendOptions(o["backend"], ray_address=o["ray_address"], ray_workers=o["ray_workers"]),
    }


def observer() -> EchoObserver:
    """Steps on stdout, the progress bar (scored judgements) on stderr."""
    from osmosis_ai.cli.run_support import EchoObserver
    from osmosis_ai.runs.progress import Progress

    def extra(outcome: RunOutcome) -> list[str]:
        return [f"scored {outcome.executed + outcome.skipped - outcome.failed}"]

    return EchoObserver(progress=lambda total: Progress(total, extra=extra))


def judge_and_report(options: RubricEvalOptions | InlineRubricOptions) -> RubricEvalResult:
    """Runs the evaluation, its console report's records printed as the results document is written: the
    records are read back once for both."""
    from osmosis_ai.rubric.report import RecordEcho
    from osmosis_ai.rubric.run import run_rubric_eval

    shown = RecordEcho(click.echo)

    def report_rows(backend: BackendReport) -> RecordEcho:
        if backend.name != "local":
            click.echo(f"Backend {backend.describe()}")
        return shown

    try:
        return run_rubric_eval(options, observer(), report_rows=report_rows)
    finally:
        shown.flush()


def render(
    result: RubricEvalResult, extra_lines: Callable[[dict[str, Any]], list[str]] | None = None
) -> None:
    """After :func:`judge_and_report`: prints the report's end, judge health and ``extra_lines``; emits the
    ``--json`` result; then ends the command as the session ended (130/143 when interrupted, exit 1 when a
    run produced no score)."""
    echo = click.echo
    from osmosis_ai.rubric.report import overall_lines

    for line in overall_lines(result.summary):
        echo(line)
    echo(result.session.health.line())
    for line in extra_lines(result.summary) if extra_lines is not None else []:
        echo(line)
    head, records, tail = result.document_parts()  # the records stream into the --json envelope
    emit_result_streamed(head, "records", records, lambda: tail)
    _finish(result.session, result.output, echo)


def _finish(state: RubricSession, output_path: Path | None, echo: Callable[[str], None]) -> None:
    from osmosis_ai.cli.run_log import resume_command
    from osmosis_ai.stop_signals import stop_word

    # A session of run_rubric_eval is read back from its log (RubricSession.from_log): it has one.
    assert state.log_path is not None
    if output_path is not None:
        echo(f"Wrote evaluation results to {output_path}")
    echo(f"Results log: {state.log_path}")
    if state.interrupted:
        click.echo(
            f"Evaluation {stop_word(state.interrupted_exit_code, ctrl_c='cancelled by user')}"
            f" after {state.health.runs} of {state.total} run(s); "
            f"finished runs are saved in {state.log_path}.\n"
            f"Continue with: {resume_command(state.log_path)}",
            err=True,
        )
        sys.exit(state.interrupted_exit_code)
    if state.session_error:
        raise CLIError(
            f"The session stopped early after {state.health.runs} of {state.total} run(s) "
            f"({state.session_error}); finished runs were written."
        )
    failed = state.health.errors + state.health.unscored
    if failed:
        raise CLIError(
            f"{failed} of {state.health.runs} evaluation(s) produced no score "
            f"({state.health.errors} error(s), {state.health.unscored} unscored); "
            "see the results for details."
        )


@click.command("eval-rubric")
@click.option("-r", "--rubric", "rubric_id", required=True, help="Rubric id declared in the config.")
@click.option(
    "-d",
    "--dataset",
    "--data",
    "data_path",
    required=True,
    type=click.Path(path_type=Path),
    help="JSONL records (rubric_id, solution_str, ...).",
)
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Rubric YAML (default: rubric_configs.yaml next to the data, in ., or in ./examples; optional with -f).",
)
@click.option(
    "-o",
    "--output",
    "output_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Results file (with a suffix) or directory (default: ~/.cache/osmosis/eval_result/<rubric>/).",
)
@click.option(
    "-b",
    "--baseline",
    "baseline_path",
    type=click.Path(path_type=Path),
    default=None,
    help="A previous results JSON to compare with.",
)
@click.option(
    "-f",
    "--function",
    "function_spec",
    default=None,
    help="MODULE:ATTR of an @osmosis_rubric function to score with instead of the config's judge.",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=2),
    default=None,
    metavar="K",
    help="Judge each record K times and report the judge's self-disagreement (per-record variance).",
)
@click.option(
    "--gold",
    "gold_path",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help='Human labels (JSONL of {"id", "score"}): report MAE, bias, Spearman and kappa against them.',
)
@click.option(
    "--gold-threshold",
    type=float,
    default=0.5,
    show_default=True,
    help="Pass/fail threshold of both sides for Cohen's kappa with --gold.",
)
@_common_judge_options
@json_result
def eval_rubric(**o: Any) -> None:
    """Score JSONL records against a rubric from a YAML config with an LLM judge."""
    from osmosis_ai.rubric.run import RubricEvalOptions

    with library_errors(FLAGS):
        options = RubricEvalOptions(
            rubric_id=o["rubric_id"],
            data_path=o["data_path"],
            config_path=o["config_path"],
            output=o["output_path"],
            baseline_path=o["baseline_path"],
            function=o["function_spec"],
            repeat=o["repeat"],
            gold_path=o["gold_path"],
            gold_threshold=o["gold_threshold"],
            **judge_fields(o),
        )
        result = judge_and_report(options)
    render(result, _calibration_lines)


def _calibration_lines(payload: dict[str, Any]) -> list[str]:
    noise, gold = payload.get("judge_noise"), payload.get("gold_agreement")
    if noise is None and gold is None:
        return []
    from osmosis_ai.rubric.calibration import lines

    return lines(noise, gold)
