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
from typing import Any

import click

from osmosis_ai.cli import bounds
from osmosis_ai.cli.backend_options import backend_options
from osmosis_ai.cli.output import emit_result, json_result
from osmosis_ai.cli.run_log import log_options
from osmosis_ai.errors import CLIError


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


def _overrides(
    base_url: str | None,
    timeout: float | None,
    max_retries: int | None,
    temperature: float | None,
    seed: int | None,
) -> dict[str, Any]:
    return {
        "base_url": base_url,
        "timeout": timeout,
        "max_retries": max_retries,
        "temperature": temperature,
        "seed": seed,
    }


def _judge_records(
    *,
    kind_config: dict[str, Any],
    rubric_id: str,
    records: list[Any],
    number: int,
    evaluators: dict[int, Any],
    previews: dict[int, str],
    concurrency: int,
    data_path: Path,
    log_path: str | None,
    resume_path: str | None,
    backend: Any = None,
    spec: Any = None,
) -> Any:
    """Runs the session on the engine with its results log; returns the session read back from the log."""
    from osmosis_ai.cli.run_log import open_log
    from osmosis_ai.rubric.session import RubricSession, run_session
    from osmosis_ai.runs.backends import BackendError, BackendOptions, BackendReport, backend_session
    from osmosis_ai.runs.progress import Progress

    options = backend or BackendOptions()
    if options.name != "local" and spec is None:
        raise BackendError(f"--backend {options.name} needs an executor spec for the workers")
    total = len(records) * number

    def extra(outcome: Any) -> list[str]:
        return [f"scored {outcome.executed + outcome.skipped - outcome.failed}"]

    report = BackendReport()
    # The backend first (as `osmosis eval`): an unreachable cluster, or workers that cannot import the
    # --function, stop the command before its results log exists. A resumed log exists already: it is
    # read first, so a session with nothing left to run starts no backend.
    opened = (
        open_log("rubric", kind_config, data_path, log_path, resume_path, click.echo) if resume_path else None
    )
    pending = None if opened is None else total - len(opened.done)
    session = backend_session(
        options, spec, concurrency=concurrency, item_timeout=None, report=report, pending=pending
    )
    try:
        with session as (loop, remote):
            log = (
                opened
                if opened is not None
                else open_log("rubric", kind_config, data_path, log_path, None, click.echo)
            )
            progress = Progress(total, extra=extra)
            try:
                outcome = run_session(
                    rubric_id=rubric_id,
                    records=records,
                    number=number,
                    evaluators=evaluators,
                    previews=previews,
                    log=log,
                    concurrency=concurrency,
                    progress=progress,
                    loop=loop,
                    backend=remote,
                )
            finally:
                progress.close()
                log.close()
    finally:
        if opened is not None:
            opened.close()  # also when the backend did not start
    session = RubricSession.from_log(log.path, total, outcome)
    if report.name != "local":
        click.echo(f"Backend {report.describe()}")
        session.backend = report.as_dict()
    return session


def _load_function(spec: str) -> Callable[..., Any]:
    from osmosis_ai.importer import import_object

    func = import_object(spec, what="--function", example="rubrics:score_politeness", error=CLIError)
    if not callable(func):
        raise CLIError(f"'{spec}' is not callable (it is a {type(func).__name__}).")
    return func


def _finish(state: Any, output_path: Path | None, echo: Callable[[str], None]) -> None:
    from osmosis_ai.cli.run_log import resume_command

    if output_path is not None:
        echo(f"Wrote evaluation results to {output_path}")
    echo(f"Results log: {state.log_path}")
    if state.interrupted:
        click.echo(
            f"Evaluation {'terminated (SIGTERM)' if state.interrupted_exit_code == 143 else 'cancelled by user'}"
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
    help="Rubric YAML (default: rubric_configs.yaml next to the data, in ., or in ./examples).",
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
def eval_rubric(
    rubric_id: str,
    data_path: Path,
    number: int,
    config_path: Path | None,
    output_path: Path | None,
    baseline_path: Path | None,
    function_spec: str | None,
    concurrency: int,
    base_url: str | None,
    timeout: float | None,
    max_retries: int | None,
    temperature: float | None,
    seed: int | None,
    log_path: str | None,
    resume_path: str | None,
    backend: str = "local",
    ray_address: str | None = None,
    ray_workers: int | None = None,
    repeat: int | None = None,
    gold_path: Path | None = None,
    gold_threshold: float = 0.5,
) -> None:
    """Score JSONL records against a rubric from a YAML config with an LLM judge."""
    from osmosis_ai.cli.backend_options import backend_from_options
    from osmosis_ai.cli.run_log import check_log_options
    from osmosis_ai.errors import DatasetFormatError
    from osmosis_ai.rubric.config import find_config, load_rubric_configs
    from osmosis_ai.rubric.judge import ensure_api_key_available
    from osmosis_ai.rubric.records import load_rubric_records
    from osmosis_ai.rubric.remote import JudgeExecutorSpec
    from osmosis_ai.rubric.report import (
        baseline_comparison,
        build_payload,
        load_baseline,
        print_report,
        resolve_output_path,
        write_json,
    )
    from osmosis_ai.rubric.runner import build_evaluators
    from osmosis_ai.rubric.session import log_config

    check_log_options(log_path, resume_path)
    if repeat is not None:
        if number not in (1, repeat):
            raise CLIError(f"--repeat {repeat} and --number {number} disagree: give one of them.")
        number = repeat
    backend_choice = backend_from_options(backend, ray_address, ray_workers)
    rubric_id = rubric_id.strip()
    if not rubric_id:
        raise click.UsageError("Rubric identifier cannot be empty.")
    if number < 1:
        raise click.UsageError("Number of runs must be a positive integer.")
    if not data_path.exists():
        raise CLIError(f"Data path '{data_path}' does not exist.")
    if data_path.is_dir():
        raise CLIError(f"Expected a JSONL file but received directory '{data_path}'.")
    config = find_config(data_path, config_path)
    entries = load_rubric_configs(config)
    if rubric_id not in entries:
        available = ", ".join(sorted(entries)) or "none"
        raise CLIError(f"Rubric '{rubric_id}' was not found in {config}. Available: {available}")
    entry = entries[rubric_id]
    overrides = _overrides(base_url, timeout, max_retries, temperature, seed)
    function = _load_function(function_spec) if function_spec else None
    model_info = {**entry.model_info, **{k: v for k, v in overrides.items() if v is not None}}
    if function is None:
        ensure_api_key_available(model_info)
    try:
        records, others, unlabelled = load_rubric_records(data_path, rubric_id)
    except DatasetFormatError as exc:
        raise CLIError(str(exc)) from None
    if not records:
        raise CLIError(f"No records in '{data_path}' reference rubric '{rubric_id}'.")
    baseline = load_baseline(baseline_path) if baseline_path else None
    gold = None
    if gold_path is not None:
        from osmosis_ai.rubric.calibration import load_gold

        gold = load_gold(gold_path)
    out, identifier = resolve_output_path(output_path, rubric_id)
    from osmosis_ai.cli.bounds import check_output_file

    check_output_file(out)  # an unwritable results file is refused before any judge call

    echo = click.echo
    echo(
        f"Rubric '{rubric_id}' ({entry.source_label}) -> "
        f"provider '{model_info.get('provider') or '<unknown>'}' "
        f"model '{model_info.get('model') or '<unspecified>'}'"
    )
    echo(f"Loaded {len(records)} matching record(s) from {data_path}")
    if others or unlabelled:
        echo(f"Skipped {others} record(s) of other rubrics and {unlabelled} without a rubric_id")
    echo(f"Running {number} evaluation(s) per record, {concurrency} at a time")
    echo("")
    evaluators, previews = build_evaluators(entry, records, overrides=overrides, function=function)
    state = _judge_records(
        kind_config=log_config(rubric_id, entry.rubric, model_info, number, function_spec),
        rubric_id=rubric_id,
        records=records,
        number=number,
        evaluators=evaluators,
        previews=previews,
        concurrency=concurrency,
        data_path=data_path,
        log_path=log_path,
        resume_path=resume_path,
        backend=backend_choice,
        spec=JudgeExecutorSpec(rubric_id, entry, records, overrides, function_spec, concurrency),
    )
    payload = build_payload(
        rubric_id=rubric_id,
        source_label=entry.source_label,
        model_info=model_info,
        number=number,
        config_path=config,
        data_path=data_path,
        records=records,
        state=state,
        identifier=identifier,
        concurrency=concurrency,
        baseline=None,
        rubric=entry.rubric,
    )
    if baseline is not None and baseline_path is not None:
        payload["baseline_comparison"] = baseline_comparison(
            baseline_path, baseline, payload["overall_statistics"]
        )
    noise = gold_figures = None
    if repeat is not None or gold is not None:
        from osmosis_ai.rubric.calibration import gold_agreement, judge_noise, lines

        if repeat is not None:
            noise = payload["judge_noise"] = judge_noise(records, state.runs_of)
        if gold is not None:
            gold_figures = payload["gold_agreement"] = gold_agreement(
                records, state.runs_of, gold, threshold=gold_threshold
            )
    write_json(out, payload)
    print_report(payload, echo)
    echo(state.health.line())
    if noise is not None or gold_figures is not None:
        for line in lines(noise, gold_figures):
            echo(line)
    emit_result({**payload, **({"backend": state.backend} if state.backend else {})})
    _finish(state, out, echo)
