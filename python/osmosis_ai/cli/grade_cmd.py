"""``osmosis grade``: run an OpenAI grader config locally on samples, or on the saved runs of a results log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli.run_log import log_options
from osmosis_ai.errors import CLIError
from osmosis_ai.graders.models import DEFAULT_EMBEDDING_MODEL


def _summary(log_path: Path, name: str) -> dict[str, Any]:
    from osmosis_ai.runs.log import iter_runs
    from osmosis_ai.stats import score_statistics

    scores, passed, errors, missing = [], 0, [], 0
    for record in iter_runs(log_path):
        if name in (record.get("scores") or {}):
            scores.append(record["scores"][name])
            passed += bool(record.get("passed"))
        elif record.get("eval_errors"):
            errors.append(f"row {record['row_index']}: {record['eval_errors'].get(name)}")
        else:
            missing += 1
    stats = score_statistics(scores)
    return {
        "grader": name,
        "graded": len(scores),
        "mean": stats.mean,
        "std": stats.std,
        "min": stats.min,
        "max": stats.max,
        "passed": passed,
        "errors": len(errors),
        "error_examples": errors[:3],
        "without_output": missing,
    }


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
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
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
    from osmosis_ai.cli.run_log import check_log_options, exit_interrupted, open_log
    from osmosis_ai.datasets import read_dataset
    from osmosis_ai.graders import ModelSettings, load_grader
    from osmosis_ai.graders.session import log_samples, run_grading, sample_items

    check_log_options(log_path, resume_path)
    if (data_path is None) == (source_log is None):
        raise CLIError("Give exactly one of --data (samples) or --from-log (a results log's runs).")
    settings = ModelSettings(base_url=base_url, embedding_model=embedding_model)
    grader = load_grader(grader_path, settings=settings, time_limit=time_limit)
    quiet = STATE.mode == "json"
    echo = (lambda _m: None) if quiet else click.echo
    source = data_path or source_log
    assert source is not None
    config = {
        "grader": grader.config,
        "source": "log" if source_log else "samples",
        "embedding_model": embedding_model,
    }
    log = open_log("grade", config, source, log_path, resume_path, echo)
    if source_log is not None:
        items = log_samples(source_log)
    else:
        items = sample_items(enumerate(read_dataset(source, contract="any")))
    try:
        outcome = run_grading(grader, items, log, concurrency=concurrency)
    finally:
        log.close()
    if outcome.interrupted:
        exit_interrupted(log.path, "the graded samples", outcome.interrupted_exit_code)
    summary = {**_summary(log.path, grader.name), "log": str(log.path)}
    if quiet:
        emit_detail(summary, [])
        return
    click.echo(f"Grader '{grader.name}' ({grader.config['type']}): {summary['graded']} sample(s) graded")
    if summary["graded"]:
        click.echo(
            f"  mean {summary['mean']:.4f}  std {summary['std']:.4f}  min {summary['min']:g}  max {summary['max']:g}"
        )
        if "pass_threshold" in grader.config:
            click.echo(
                f"  passed {summary['passed']}/{summary['graded']} (score >= {grader.config['pass_threshold']})"
            )
    for line in summary["error_examples"]:
        click.echo(f"  error: {line}", err=True)
    if summary["errors"] or summary["without_output"]:
        raise CLIError(
            f"{summary['errors']} grading error(s), {summary['without_output']} record(s) without output"
        )
