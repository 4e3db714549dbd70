"""``osmosis grade``: run an OpenAI grader config locally on samples, or on the saved runs of a results log."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai.cli.run_log import log_options
from osmosis_ai.cli.run_support import LOG_FLAGS, EchoObserver, library_errors
from osmosis_ai.errors import CLIError
from osmosis_ai.graders.models import DEFAULT_EMBEDDING_MODEL

if TYPE_CHECKING:
    from osmosis_ai.graders.core import Grader

FLAGS = {**LOG_FLAGS, "data_path": "--data", "source_log": "--from-log"}


@click.command("grade")
@click.option(
    "--grader",
    "grader_path",
    required=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="OpenAI grader config (JSON).",
)
@click.option(
    "-d",
    "--data",
    "--dataset",
    "data_path",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help="Samples: the item's fields plus output_text (or messages ending with the answer).",
)
@click.option(
    "--from-log",
    "source_log",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help="Grade the saved runs of this results log instead of --data.",
)
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint for model graders and embeddings.")
@click.option(
    "--embedding-model",
    default=DEFAULT_EMBEDDING_MODEL,
    show_default=True,
    help="Embedding model of text_similarity 'cosine'.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds a python grader may run per sample.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Samples graded at once (model graders: requests in flight).",
)
@log_options
def grade_command(
    grader_path: Path,
    data_path: Path | None,
    source_log: Path | None,
    base_url: str | None,
    embedding_model: str,
    time_limit: float,
    concurrency: int,
    log_path: str | None,
    resume_path: str | None,
) -> None:
    """Grade samples with an OpenAI grader config (string_check, text_similarity, score_model, label_model,
    python, multi), locally."""
    from osmosis_ai.cli.output import STATE, emit_detail
    from osmosis_ai.cli.run_log import exit_interrupted
    from osmosis_ai.graders.session import GradeRunOptions, run_grade

    quiet = STATE.mode == "json"
    with library_errors(FLAGS):
        options = GradeRunOptions(
            grader_path=grader_path,
            data_path=data_path,
            source_log=source_log,
            base_url=base_url,
            embedding_model=embedding_model,
            time_limit=time_limit,
            concurrency=concurrency,
            log_path=log_path,
            resume_path=resume_path,
        )
        result = run_grade(options, EchoObserver(quiet=quiet))
    summary, grader = result.summary, result.grader
    if result.outcome.interrupted:
        exit_interrupted(result.log_path, "the graded samples", result.outcome.interrupted_exit_code, summary)
    if quiet:
        emit_detail(summary, [])
    else:
        _print_summary(summary, grader)
    # Exit codes as in text mode: the JSON document is printed first, the error after it.
    if result.problems:
        raise CLIError(
            f"{summary['errors']} grading error(s), {summary['without_output']} record(s) without output"
        )
    if not summary["graded"]:
        raise CLIError("no sample was graded: the mean and pass rate are n/a")


def _print_summary(summary: dict[str, Any], grader: Grader) -> None:
    click.echo(f"Grader '{grader.name}' ({grader.config['type']}): {summary['graded']} sample(s) graded")
    if summary["graded"]:
        click.echo(
            f"  mean {summary['mean']:.4f}  std {summary['std']:.4f}  min {summary['min']:g}  max {summary['max']:g}"
        )
        if summary["passed"] is not None:
            click.echo(
                f"  passed {summary['passed']}/{summary['graded']} (score >= {grader.config['pass_threshold']})"
            )
    from osmosis_ai.terminal_text import one_line

    for line in summary["error_examples"]:  # a grader's error may quote the sample or the model
        click.echo(f"  error: {one_line(line)}", err=True)
    for warning in summary["warnings"]:
        click.echo(f"Warning: {warning['message']}")
