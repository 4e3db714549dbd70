"""``osmosis eval rubric``: the newer spelling, with an inline rubric and chat-style records.

Shares the engine, options, Ctrl+C handling and exit rules of ``eval-rubric`` (see ``cli/eval_rubric.py``);
its results file has 0.3's layout (``rubric.report.layout_0_3``), written where ``eval-rubric`` writes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli import bounds
from osmosis_ai.cli.eval_rubric import _common_judge_options, _finish, _judge_records, _overrides
from osmosis_ai.cli.output import emit_result, json_result
from osmosis_ai.errors import CLIError

_INFERRED_PROVIDERS = (
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "gemini"),
    ("grok", "xai"),
)


def _split_model(model: str, base_url: str | None) -> tuple[str, str]:
    model = model.strip()
    if not model:
        raise CLIError("--model cannot be empty.")
    if "/" in model:
        provider, _, name = model.partition("/")
        return provider.lower(), name
    for prefix, provider in _INFERRED_PROVIDERS:
        if model.lower().startswith(prefix):
            return provider, model
    if base_url or any(os.environ.get(n, "").strip() for n in ("OPENAI_BASE_URL", "OPENAI_API_BASE")):
        return "openai", model  # any OpenAI-compatible server
    raise CLIError(f"Cannot infer the provider of model '{model}'; use PROVIDER/MODEL (e.g. openai/{model}).")


def _read_rubric(text: str) -> str:
    if text.startswith("@"):
        path = Path(text[1:])
        if not path.exists():
            raise CLIError(f"Rubric file '{path}' does not exist.")
        if path.is_dir():
            raise CLIError(f"Rubric file '{path}' is a directory.")
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            raise CLIError(f"Rubric file '{path}' is empty.")
    if not text.strip():
        raise CLIError("Rubric cannot be empty.")
    return text


@click.command("rubric")
@click.option(
    "-d",
    "--dataset",
    "--data",
    "data_path",
    required=True,
    type=click.Path(path_type=Path),
    help="JSONL records: 'messages' (last assistant message is judged) or 'solution_str'.",
)
@click.option(
    "-r", "--rubric", "rubric_text", required=True, help="Rubric text, or @FILE to read it from a file."
)
@click.option("--model", required=True, help="Judge model in LiteLLM form, e.g. openai/gpt-4o-mini.")
@click.option(
    "-o",
    "--output",
    "output_path",
    default=None,
    metavar="PATH",
    help="Results file, or a directory (a trailing / or an existing one) for rubric_eval_result.json "
    "(default: ~/.cache/osmosis/eval_result/rubric/).",
)
@click.option("--api-key", default=None, help="Deprecated: set the provider's API key variable instead.")
@click.option("--score-min", type=bounds.finite(), default=0.0, show_default=True)
@click.option("--score-max", type=bounds.finite(), default=1.0, show_default=True)
@_common_judge_options
@json_result
def eval_rubric_inline(
    data_path: Path,
    rubric_text: str,
    model: str,
    number: int,
    output_path: str | None,
    api_key: str | None,
    score_min: float,
    score_max: float,
    concurrency: int,
    base_url: str | None,
    timeout: float | None,
    max_retries: int | None,
    temperature: float | None,
    seed: int | None,
    log_path: str | None,
    resume_path: str | None,
    backend: str,
    ray_address: str | None,
    ray_workers: int | None,
) -> None:
    """Score JSONL conversations against an inline rubric with an LLM judge."""
    from osmosis_ai.cli.backend_options import backend_from_options
    from osmosis_ai.cli.run_log import check_log_options
    from osmosis_ai.errors import DatasetFormatError
    from osmosis_ai.rubric.config import RubricEntry
    from osmosis_ai.rubric.judge import DEFAULT_API_KEY_ENV, ensure_api_key_available
    from osmosis_ai.rubric.records import load_chat_records
    from osmosis_ai.rubric.remote import JudgeExecutorSpec
    from osmosis_ai.rubric.report import (
        build_payload,
        layout_0_3,
        print_report,
        resolve_output_path_0_3,
        write_json,
    )
    from osmosis_ai.rubric.runner import build_evaluators
    from osmosis_ai.rubric.session import log_config

    check_log_options(log_path, resume_path)
    backend_choice = backend_from_options(backend, ray_address, ray_workers)

    if number < 1:
        raise click.UsageError("Number of runs must be a positive integer.")
    if score_max <= score_min:
        raise click.UsageError("--score-max must be greater than --score-min.")
    if not data_path.exists():
        raise CLIError(f"Data path '{data_path}' does not exist.")
    if data_path.is_dir():
        raise CLIError(f"Expected a JSONL file but received directory '{data_path}'.")
    rubric = _read_rubric(rubric_text)
    provider, name = _split_model(model, base_url)
    model_info: dict[str, Any] = {"provider": provider, "model": name}
    if api_key:
        click.echo(
            "DEPRECATION: --api-key is deprecated; set the provider's API key variable instead.", err=True
        )
        model_info["api_key"] = api_key
    elif provider not in DEFAULT_API_KEY_ENV:
        model_info["api_key_env"] = f"{provider.upper()}_API_KEY"
    overrides = _overrides(base_url, timeout, max_retries, temperature, seed)
    ensure_api_key_available({**model_info, **overrides})
    try:
        records = load_chat_records(data_path)
    except DatasetFormatError as exc:
        raise CLIError(str(exc)) from None
    out, identifier = resolve_output_path_0_3(output_path)
    entry = RubricEntry(
        id="rubric",
        rubric=rubric,
        model_info=model_info,
        score_min=score_min,
        score_max=score_max,
        source_label="--rubric",
    )
    echo = click.echo
    echo(f"Model: {provider}/{name}")
    echo(f"Evaluated {len(records)} record(s) from {data_path}")
    echo(f"Runs per record: {number}")
    evaluators, previews = build_evaluators(entry, records, overrides=overrides)
    state = _judge_records(
        kind_config=log_config("rubric", rubric, {**model_info, **overrides}, number, None),
        rubric_id="rubric",
        records=records,
        number=number,
        evaluators=evaluators,
        previews=previews,
        concurrency=concurrency,
        data_path=data_path,
        log_path=log_path,
        resume_path=resume_path,
        backend=backend_choice,
        spec=JudgeExecutorSpec("rubric", entry, records, overrides, None, concurrency),
    )
    payload = build_payload(
        rubric_id="rubric",
        source_label=entry.source_label,
        model_info={**model_info, **{k: v for k, v in overrides.items() if v is not None}},
        number=number,
        config_path=None,
        data_path=data_path,
        records=records,
        state=state,
        identifier=identifier,
        concurrency=concurrency,
        rubric=rubric,
    )
    document = layout_0_3(payload, model=model.strip(), rubric=rubric)
    write_json(out, document)
    print_report(payload, echo)
    echo(state.health.line())
    emit_result({**document, **({"backend": state.backend} if state.backend else {})})
    _finish(state, out, echo)
