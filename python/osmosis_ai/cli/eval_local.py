"""`osmosis eval -m MODULE:ATTR -d DATA --model M --eval-fn MOD:FN`: the local evaluation command.

Order (as established): argument checks → header → pre-run checks (API key present, 1-token preflight) →
load agent → load dataset → load eval functions → run → report → write output. Beyond the established
command: runs are logged as they finish (``--log`` / ``--resume``), a run has a timeout, failed runs make
the exit code non-zero (``--max-failure-rate`` tolerates some), and Ctrl+C keeps everything finished.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import click

from osmosis_ai._version import __version__
from osmosis_ai.errors import CLIError, ProviderError, SystemicProviderError

# provider prefix -> the environment variable its key is read from (LITELLM_API_KEY works for all).
PROVIDER_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "cohere": "COHERE_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "fireworks_ai": "FIREWORKS_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "xai": "XAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "perplexity": "PERPLEXITYAI_API_KEY",
    "replicate": "REPLICATE_API_KEY",
    "deepinfra": "DEEPINFRA_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "ai21": "AI21_API_KEY",
    "sambanova": "SAMBANOVA_API_KEY",
    "nvidia_nim": "NVIDIA_NIM_API_KEY",
    "github": "GITHUB_API_KEY",
}


def _check_arguments(o: dict[str, Any]) -> None:
    for name, flag in (("n_runs", "--n"), ("batch_size", "--batch-size"), ("max_turns", "--max-turns")):
        if o[name] < 1:
            raise CLIError(f"{flag} must be >= 1.")
    if o["offset"] < 0:
        raise CLIError("--offset must be >= 0.")
    if o["limit"] is not None and o["limit"] < 1:
        raise CLIError("--limit must be >= 1.")
    if o["run_timeout"] is not None and o["run_timeout"] <= 0:
        raise CLIError("--run-timeout must be > 0.")
    from osmosis_ai.cli.agent_source import check_agent_source

    check_agent_source(o["module"], o["mcp_dir"], o["tool_timeout"])
    missing = [flag for key, flag in (("dataset", "-d/--dataset"), ("model", "--model")) if not o[key]]
    if missing:
        raise CLIError(f"Missing required option(s): {', '.join(missing)}")
    if not o["eval_fns"]:
        raise CLIError(
            "At least one --eval-fn MODULE:FN is required (e.g. --eval-fn reward_fn.compute_reward:numbers_match_reward)"
        )
    if (o["baseline_base_url"] or o["baseline_api_key"]) and not o["baseline_model"]:
        raise CLIError("--baseline-base-url and --baseline-api-key require --baseline-model.")
    if o["log_path"] and o["resume_path"]:
        raise CLIError("Use either --log (a new results log) or --resume (an existing one), not both.")


def _check_api_key(model: str, base_url: str | None, api_key: str | None) -> None:
    """A missing key is reported before any row runs (skipped for --base-url / --api-key)."""
    if base_url or api_key:
        return
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    env = PROVIDER_KEY_ENV.get(provider)
    if env and not os.environ.get(env) and not os.environ.get("LITELLM_API_KEY"):
        raise CLIError(
            f"No API key for provider '{provider}': set {env} (or LITELLM_API_KEY), pass --api-key, "
            "or put it in a .env file in the current directory."
        )


def _default_log_path() -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path.home() / ".cache" / "osmosis" / "eval_logs" / f"eval-{stamp}-{os.getpid()}.jsonl"


def _log_config(o: dict[str, Any]) -> dict[str, Any]:
    """What makes logged runs comparable; a resume with any of it changed is refused."""
    params = {k: o[k] for k in ("temperature", "max_tokens") if o[k] is not None}
    return {
        "agent": o["module"] or f"mcp:{Path(o['mcp_dir']).resolve()}",
        "model": o["model"],
        "base_url": o["base_url"],
        "eval_fns": list(o["eval_fns"]),
        "max_turns": o["max_turns"],
        "completion_params": params,
        "baseline_model": o["baseline_model"],
        "baseline_base_url": o["baseline_base_url"],
    }


def _echo(quiet: bool, text: str = "") -> None:
    if not quiet:
        click.echo(text)


def run_local_eval(**o: Any) -> int:
    """Runs the command; returns the exit code. Errors of the input raise :class:`CLIError`."""
    _check_arguments(o)
    from dotenv import find_dotenv, load_dotenv

    load_dotenv(find_dotenv(usecwd=True))
    if o["debug"]:
        import logging

        logging.basicConfig(level=logging.DEBUG)
        os.environ["OSMOSIS_DEBUG"] = "1"
    quiet = o["quiet"]
    _echo(quiet, f"osmosis-eval v{__version__}")
    if o["base_url"]:
        _echo(quiet, f"Endpoint: {o['base_url']}")
    _echo(quiet, f"Model: {o['model']}")
    _echo(quiet)
    _check_api_key(o["model"], o["base_url"], o["api_key"])
    if o["baseline_model"]:
        _check_api_key(o["baseline_model"], o["baseline_base_url"], o["baseline_api_key"])
    return asyncio.run(_run(o, quiet))


async def _run(o: dict[str, Any], quiet: bool) -> int:
    from osmosis_ai.eval.llm_client import ExternalLLMClient, LLMEndpoint, make_transport

    endpoints = {"": LLMEndpoint(o["model"], o["base_url"], o["api_key"])}
    if o["baseline_model"]:
        endpoints = {
            "primary": endpoints[""],
            "baseline": LLMEndpoint(o["baseline_model"], o["baseline_base_url"], o["baseline_api_key"]),
        }
    pool = max(1, o["batch_size"] // len(endpoints))
    transports = {tag: make_transport(ep, max_connections=pool) for tag, ep in endpoints.items()}
    try:
        if not o["no_preflight"]:
            for tag, transport in transports.items():
                await _preflight(ExternalLLMClient(transport), endpoints[tag], quiet)
        return await _evaluate(o, quiet, endpoints, transports)
    finally:
        for transport in transports.values():
            await transport.aclose()


async def _preflight(client: Any, endpoint: Any, quiet: bool) -> None:
    """One 1-token request: a bad key, model or URL stops here instead of failing every run."""
    try:
        await client.chat_completions([{"role": "user", "content": "hi"}], max_tokens=1)
    except SystemicProviderError as exc:
        raise CLIError(f"Preflight check failed for model '{endpoint.model}': {exc}") from exc
    except ProviderError as exc:
        # Rate limits and slow replies prove the endpoint is there; the run's retries deal with them.
        _echo(
            quiet, f"Warning: preflight request for '{endpoint.model}' did not succeed ({exc}); continuing."
        )


def _select_rows(o: dict[str, Any], quiet: bool) -> tuple[Any, int]:
    from osmosis_ai.datasets import count_rows, read_dataset

    path = o["dataset"]
    _echo(quiet, f"Loading dataset: {path}")
    total = count_rows(path)
    available = max(total - o["offset"], 0)
    selected = available if o["limit"] is None else min(o["limit"], available)
    if selected == 0:
        raise CLIError(f"No rows to evaluate in {path} (it has {total} rows; --offset {o['offset']}).")
    if o["limit"] is not None:
        _echo(quiet, f"  Total rows: {total} (evaluating {selected})")
    else:
        _echo(quiet, f"  Total rows: {selected}")
    rows = read_dataset(path, limit=selected, offset=o["offset"])
    return ((o["offset"] + i, row) for i, row in enumerate(rows)), selected


async def _evaluate(
    o: dict[str, Any], quiet: bool, endpoints: dict[str, Any], transports: dict[str, Any]
) -> int:
    from osmosis_ai.cli.agent_source import load_agent
    from osmosis_ai.eval.functions import load_eval_functions
    from osmosis_ai.eval.llm_client import ExternalLLMClient
    from osmosis_ai.eval.progress import EvalProgress
    from osmosis_ai.eval.results_log import ResultsLog
    from osmosis_ai.eval.runner import EvalRunner

    _echo(quiet, f"Loading agent: {o['module'] or o['mcp_dir']}")
    agent = load_agent(o["module"], o["mcp_dir"], quiet=o["quiet"], tool_timeout=o["tool_timeout"])
    _echo(quiet, f"  Agent name: {agent.name}")
    rows, selected = _select_rows(o, quiet)
    _echo(quiet, f"Loading eval functions: {', '.join(o['eval_fns'])}")
    eval_fns = load_eval_functions(list(o["eval_fns"]))
    for fn in eval_fns:
        _echo(quiet, f"  {fn.name} ({fn.mode} mode)")

    config = _log_config(o)
    if o["resume_path"]:
        log = ResultsLog.resume(Path(o["resume_path"]), config)
        _echo(quiet, f"Resuming results log: {log.path} ({len(log.done)} runs already done)")
    else:
        log = ResultsLog.create(Path(o["log_path"]) if o["log_path"] else _default_log_path(), config)
        _echo(quiet, f"Results log: {log.path}")

    tags = tuple(endpoints)
    total = selected * o["n_runs"] * len(tags)
    progress = EvalProgress(total, quiet=quiet)
    params = {k: o[k] for k in ("temperature", "max_tokens") if o[k] is not None}
    runner = EvalRunner(
        agent,
        eval_fns,
        lambda tag: ExternalLLMClient(transports[tag]),
        log,
        n_runs=o["n_runs"],
        model_tags=tags,
        max_turns=o["max_turns"],
        completion_params=params,
        batch_size=o["batch_size"],
        run_timeout=o["run_timeout"],
        on_run=progress,
    )
    runs_text = f" x{o['n_runs']} runs" if o["n_runs"] > 1 else ""
    batch_text = f", batch_size={o['batch_size']}" if o["batch_size"] > 1 else ""
    _echo(quiet)
    _echo(quiet, f"Running evaluation ({selected} rows{runs_text}{batch_text})...")
    started = time.monotonic()
    try:
        outcome = await runner.run(rows)
    except (KeyboardInterrupt, asyncio.CancelledError):
        progress.close()
        log.close()
        click.echo(
            f"\nInterrupted: {runner.outcome.executed} finished runs are saved in {log.path}.\n"
            f"Continue with the same command plus: --resume {log.path}",
            err=True,
        )
        return 130
    finally:
        progress.close()
        log.close()
    duration_ms = (time.monotonic() - started) * 1000.0
    return _finish(o, quiet, log.path, outcome, duration_ms, endpoints)


def _finish(
    o: dict[str, Any],
    quiet: bool,
    log_path: Path,
    outcome: Any,
    duration_ms: float,
    endpoints: dict[str, Any],
) -> int:
    from osmosis_ai.eval.report import format_duration, format_results_table, format_tokens
    from osmosis_ai.eval.summary import build_report

    models = {tag: ep.model for tag, ep in endpoints.items()} if len(endpoints) > 1 else None
    report = build_report(
        log_path,
        eval_fns=list(o["eval_fns"]),
        n_runs=o["n_runs"],
        pass_threshold=o["pass_threshold"],
        models=models,
    )
    if not quiet:
        click.echo()
        click.echo("Evaluation Results:")
        click.echo(f"  Rows: {report.total_rows}")
        click.echo(f"  Runs per row: {o['n_runs']}")
        click.echo(f"  Total runs: {report.total_runs}")
        if outcome.skipped:
            click.echo(f"  Resumed: {outcome.skipped} runs taken from the log, {outcome.executed} run now")
        click.echo(f"  Failed runs: {report.failed_runs}")
        if report.eval_error_runs:
            click.echo(f"  Runs with eval-function errors: {report.eval_error_runs}")
        click.echo(f"  Duration: {format_duration(duration_ms)}")
        click.echo(f"  Total tokens: {format_tokens(report.total_tokens)}")
        click.echo()
        for line in format_results_table(report.summaries, report.eval_fn_errors):
            click.echo(line)
        for summary in report.model_summaries:
            click.echo()
            click.echo(f"Model {summary['model']} ({summary['model_tag']}):")
            for line in format_results_table(summary["eval_fns"], summary.get("eval_fn_errors")):
                click.echo(line)
        if outcome.stopped_early:
            click.echo(f"\nStopped early: {outcome.stop_reason}")
        click.echo(f"\nResults log: {log_path}")
    if o["output"]:
        _write_output(Path(o["output"]), report, o, duration_ms, outcome)
        _echo(quiet, f"Results written to: {o['output']}")
    failed = report.failed_runs + report.eval_error_runs
    if outcome.stopped_early:
        click.echo(f"Error: evaluation stopped early: {outcome.stop_reason}", err=True)
        return 1
    if report.total_runs and failed / report.total_runs > o["max_failure_rate"]:
        click.echo(
            f"Error: {failed} of {report.total_runs} runs failed (allowed: {o['max_failure_rate']:.0%}; "
            "see --max-failure-rate)",
            err=True,
        )
        return 1
    return 0


def _write_output(path: Path, report: Any, o: dict[str, Any], duration_ms: float, outcome: Any) -> None:
    config: dict[str, Any] = {
        "model": o["model"],
        "n_runs": o["n_runs"],
        "pass_threshold": o["pass_threshold"],
        "eval_fns": list(o["eval_fns"]),
    }
    if o["baseline_model"]:
        config["baseline_model"] = o["baseline_model"]
    if path.is_dir():
        raise CLIError(f"Output path {path} is a directory; give a file name such as {path / 'results.json'}")
    # The rows are streamed from the log to the file: memory does not grow with the rows.
    report.write_json(
        path,
        config=config,
        duration_ms=duration_ms,
        stopped_early=outcome.stopped_early,
        stop_reason=outcome.stop_reason,
    )
