"""`osmosis eval -m MODULE:ATTR -d DATA --model M --eval-fn MOD:FN`: the local evaluation command.

Order: argument checks → header → check and open the dataset → load agent → load eval functions → API key present →
1-token preflight → run → report → write output (the established command checked the key and the model
before loading anything local, so a typo in ``-m`` or ``-d`` cost a network round trip). Beyond the established
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


def _check_arguments(o: dict[str, Any]) -> None:
    """Command-line mistakes are usage errors (exit 2), found before anything is loaded."""
    for name, flag in (("n_runs", "--n"), ("batch_size", "--batch-size"), ("max_turns", "--max-turns")):
        if o[name] < 1:
            raise click.UsageError(f"{flag} must be >= 1.")
    if o["offset"] < 0:
        raise click.UsageError("--offset must be >= 0.")
    if o["limit"] is not None and o["limit"] < 1:
        raise click.UsageError("--limit must be >= 1.")
    if o["run_timeout"] is not None and o["run_timeout"] <= 0:
        raise click.UsageError("--run-timeout must be > 0.")
    from osmosis_ai.cli.agent_source import check_agent_source
    from osmosis_ai.cli.run_log import check_log_options

    check_log_options(o["log_path"], o["resume_path"])
    from osmosis_ai.cli.bounds import check_output_file

    check_output_file(o["output"])  # before the run: a bad -o must not cost the whole eval

    from osmosis_ai.cli.backend_options import backend_from_options

    o["backend_choice"] = backend_from_options(o["backend"], o["ray_address"], o["ray_workers"])

    check_agent_source(o["module"], o["mcp_dir"], o["tool_timeout"])
    missing = [flag for key, flag in (("dataset", "-d/--dataset"), ("model", "--model")) if not o[key]]
    if missing:
        raise click.UsageError(f"Missing required option(s): {', '.join(missing)}")
    if not o["eval_fns"]:
        raise click.UsageError(
            "At least one --eval-fn MODULE:FN is required (e.g. --eval-fn reward_fn.compute_reward:numbers_match_reward)"
        )
    if (o["baseline_base_url"] or o["baseline_api_key"]) and not o["baseline_model"]:
        raise click.UsageError("--baseline-base-url and --baseline-api-key require --baseline-model.")


def _endpoint(model: str, base_url: str | None, api_key: str | None) -> Any:
    """Resolves where the model's requests go; a missing key is reported before any row runs."""
    from osmosis_ai.errors import MissingAPIKeyError
    from osmosis_ai.llm.providers import resolve_endpoint

    try:
        return resolve_endpoint(model, base_url=base_url, api_key=api_key)
    except MissingAPIKeyError as exc:
        raise CLIError(str(exc)) from exc


def _log_config(o: dict[str, Any]) -> dict[str, Any]:
    """What makes logged runs comparable; a resume with any of it changed is refused."""
    from osmosis_ai.redact import safe_url

    params = {k: o[k] for k in ("temperature", "max_tokens") if o[k] is not None}
    return {
        "agent": o["module"] or f"mcp:{Path(o['mcp_dir']).resolve()}",
        "model": o["model"],
        "base_url": safe_url(o["base_url"]),
        "eval_fns": list(o["eval_fns"]),
        "max_turns": o["max_turns"],
        "completion_params": params,
        "baseline_model": o["baseline_model"],
        "baseline_base_url": safe_url(o["baseline_base_url"]),
        "n_runs": o["n_runs"],
        "offset": o["offset"],
        "limit": o["limit"],
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
        from osmosis_ai.redact import safe_url

        _echo(quiet, f"Endpoint: {safe_url(o['base_url'])}")
    _echo(quiet, f"Model: {o['model']}")
    _echo(quiet)
    return asyncio.run(_run(o, quiet))


def _endpoints(o: dict[str, Any]) -> dict[str, Any]:
    endpoints = {"": _endpoint(o["model"], o["base_url"], o["api_key"])}
    if o["baseline_model"]:
        endpoints = {
            "primary": endpoints[""],
            "baseline": _endpoint(o["baseline_model"], o["baseline_base_url"], o["baseline_api_key"]),
        }
    return endpoints


async def _run(o: dict[str, Any], quiet: bool) -> int:
    from osmosis_ai.llm.transport import make_transport

    # Local inputs first (agent, dataset, eval functions): a typo is reported before any key check or
    # network round trip.
    inputs = _load_inputs(o, quiet)
    endpoints = _endpoints(o)
    pool = max(1, o["batch_size"] // len(endpoints))
    transports = {tag: make_transport(ep, max_connections=pool) for tag, ep in endpoints.items()}
    try:
        if not o["no_preflight"]:
            for tag, transport in transports.items():
                await _preflight(transport, endpoints[tag], quiet)
        return await _evaluate(o, quiet, endpoints, transports, *inputs)
    finally:
        for transport in transports.values():
            await transport.aclose()


async def _preflight(transport: Any, endpoint: Any, quiet: bool) -> None:
    """One 1-token request: a bad key, model or URL stops here instead of failing every run."""
    from osmosis_ai.llm.retry import RetryPolicy

    try:
        # One retry only: a typo in --base-url should not wait out the runs' full backoff.
        message = [{"role": "user", "content": "hi"}]
        await transport.complete(message, None, {"max_tokens": 1}, policy=RetryPolicy(max_retries=1))
    except SystemicProviderError as exc:
        raise CLIError(f"Preflight check failed for model '{endpoint.model}': {exc}") from exc
    except ProviderError as exc:
        # Rate limits and slow replies prove the endpoint is there; the run's retries deal with them.
        _echo(
            quiet, f"Warning: preflight request for '{endpoint.model}' did not succeed ({exc}); continuing."
        )


def _select_rows(o: dict[str, Any], quiet: bool) -> tuple[Any, int]:
    from osmosis_ai.datasets import read_dataset, validate_dataset

    path = o["dataset"]
    _echo(quiet, f"Loading dataset: {path}")
    # The whole file is checked before the first run: rows stream during the run, and a bad row found
    # there (an integer ground_truth, say) would stop the eval half-way with a partial log.
    report = validate_dataset(path, contract="eval", max_problems=_SHOWN_PROBLEMS)
    if not report.ok:
        raise CLIError(_dataset_problems(path, report))
    total = report.rows
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


_SHOWN_PROBLEMS = 10


def _dataset_problems(path: str, report: Any) -> str:
    lines = [
        f"{path} does not meet the eval dataset contract ({report.total_problems} problem(s) in "
        f"{report.bad_rows} row(s)); nothing was run:"
    ]
    lines += [f"  {problem}" for problem in report.problems]
    if report.total_problems > len(report.problems):
        lines.append(f"  ... and {report.total_problems - len(report.problems)} more")
    lines.append(
        "Each row needs system_prompt, user_prompt and ground_truth as non-empty strings "
        '(write "ground_truth": "4", not 4); `osmosis dataset validate FILE` lists every problem.'
    )
    return "\n".join(lines)


def _load_inputs(o: dict[str, Any], quiet: bool) -> tuple[Any, Any, int, list[Any]]:
    from osmosis_ai.cli.agent_source import load_agent
    from osmosis_ai.eval.functions import load_eval_functions

    # The dataset first: it is the cheapest check, and a missing file should not be hidden behind an
    # agent that cannot load (an MCP folder without the `mcp` extra, say).
    rows, selected = _select_rows(o, quiet)
    _echo(quiet, f"Loading agent: {o['module'] or o['mcp_dir']}")
    agent = load_agent(o["module"], o["mcp_dir"], quiet=o["quiet"], tool_timeout=o["tool_timeout"])
    _echo(quiet, f"  Agent name: {agent.name}")
    _echo(quiet, f"Loading eval functions: {', '.join(o['eval_fns'])}")
    eval_fns = load_eval_functions(list(o["eval_fns"]))
    for fn in eval_fns:
        _echo(quiet, f"  {fn.name} ({fn.mode} mode)")
    return agent, rows, selected, eval_fns


async def _evaluate(
    o: dict[str, Any],
    quiet: bool,
    endpoints: dict[str, Any],
    transports: dict[str, Any],
    agent: Any,
    rows: Any,
    selected: int,
    eval_fns: list[Any],
) -> int:
    from osmosis_ai.cli.run_log import interrupted_message
    from osmosis_ai.eval.remote import AgentExecutorSpec
    from osmosis_ai.runs.backends import BackendReport, start_backend

    params = {k: o[k] for k in ("temperature", "max_tokens") if o[k] is not None}
    spec = AgentExecutorSpec(
        o["module"],
        str(Path(o["mcp_dir"]).resolve()) if o["mcp_dir"] else None,
        tuple(o["eval_fns"]),
        endpoints,
        max_connections=max(1, o["batch_size"] // len(endpoints)),
        max_turns=o["max_turns"],
        completion_params=params,
        tool_timeout=o["tool_timeout"],
    )
    o["backend_report"] = report = BackendReport()
    # The backend first: an unreachable cluster or workers that cannot import the job's code stop the
    # command before a results log exists. A resumed log exists already: it is read first, so a session
    # with nothing left to run starts no backend.
    log = _open_log(o, quiet) if o["resume_path"] else None
    pending = None if log is None else selected * o["n_runs"] * len(transports) - len(log.done)
    try:
        async with start_backend(
            o["backend_choice"],
            spec,
            concurrency=o["batch_size"],
            item_timeout=o["run_timeout"],
            report=report,
            pending=pending,
        ) as backend:
            started = time.monotonic()
            outcome, log_path = await _drive(
                o, quiet, backend, transports, agent, rows, selected, eval_fns, params, log
            )
    finally:
        if log is not None:
            log.close()
    if report.name != "local":
        _echo(quiet, f"Backend {report.describe()}")
    duration_ms = (time.monotonic() - started) * 1000.0
    if outcome.interrupted:
        if o["output"]:  # what finished, marked as such: the log stays the way to continue
            _write_output(Path(o["output"]), _report(o, log_path, endpoints), o, duration_ms, outcome)
            _echo(quiet, f"Results so far written to: {o['output']} (interrupted: true)")
        finished = f"{outcome.executed + outcome.skipped} finished runs"
        click.echo(interrupted_message(log_path, finished, outcome.interrupted_exit_code), err=True)
        return outcome.interrupted_exit_code
    return _finish(o, quiet, log_path, outcome, duration_ms, endpoints)


async def _drive(
    o: dict[str, Any],
    quiet: bool,
    backend: Any,
    transports: dict[str, Any],
    agent: Any,
    rows: Any,
    selected: int,
    eval_fns: list[Any],
    params: dict[str, Any],
    log: Any = None,
) -> tuple[Any, Path]:
    """Runs the engine (on ``backend`` when given) into ``log``, opened here unless given; returns the
    outcome."""
    from osmosis_ai.eval.runner import AgentExecutor
    from osmosis_ai.llm.chat import ExternalLLMClient
    from osmosis_ai.runs.engine import RunEngine, work_items

    if log is None:
        log = _open_log(o, quiet)
    tags = tuple(transports)
    total = selected * o["n_runs"] * len(tags)
    executor = AgentExecutor(
        agent,
        eval_fns,
        lambda tag: ExternalLLMClient(transports[tag]),
        max_turns=o["max_turns"],
        completion_params=params,
    )
    progress = _progress(total, quiet)
    engine = RunEngine(
        executor,
        log,
        concurrency=backend.slots() if backend is not None else o["batch_size"],
        item_timeout=o["run_timeout"],
        on_record=progress,
        isolate=backend is None,  # on Ray, the worker isolates (AgentExecutorSpec.isolate)
        backend=backend,
    )
    runs_text = f" x{o['n_runs']} runs" if o["n_runs"] > 1 else ""
    batch_text = f", batch_size={o['batch_size']}" if o["batch_size"] > 1 else ""
    _echo(quiet)
    _echo(quiet, f"Running evaluation ({selected} rows{runs_text}{batch_text})...")
    try:
        outcome = await engine.run(work_items(rows, o["n_runs"], tags, log.done, engine.outcome))
    finally:
        progress.close()
        log.close()
    return outcome, log.path


def _open_log(o: dict[str, Any], quiet: bool) -> Any:
    from osmosis_ai.cli.run_log import open_log

    echo = lambda text: _echo(quiet, text)  # noqa: E731
    return open_log("eval", _log_config(o), Path(o["dataset"]), o["log_path"], o["resume_path"], echo)


def _progress(total: int, quiet: bool) -> Any:
    from osmosis_ai.eval.report import format_progress_line, format_tokens
    from osmosis_ai.runs.progress import Progress

    def extra(outcome: Any) -> list[str]:
        mean = outcome.running_mean()
        parts = [f"{format_tokens(outcome.tokens)} tokens"]
        return parts + ([f"mean {mean:.3f}"] if mean is not None else [])

    return Progress(total, extra=extra, plain_line=format_progress_line, quiet=quiet)


def _finish(
    o: dict[str, Any],
    quiet: bool,
    log_path: Path,
    outcome: Any,
    duration_ms: float,
    endpoints: dict[str, Any],
) -> int:
    from osmosis_ai.eval.report import format_duration, format_results_table, format_tokens

    report = _report(o, log_path, endpoints)
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
    from osmosis_ai.cli.output import STATE, emit_result

    if STATE.mode == "json":  # the envelope holds every row: built only when asked for
        document = report.to_json(
            config=_output_config(o),
            duration_ms=duration_ms,
            stopped_early=outcome.stopped_early,
            stop_reason=outcome.stop_reason,
        )
        backend = o.get("backend_report")
        spread = {"backend": backend.as_dict()} if backend is not None and backend.name != "local" else {}
        emit_result({**document, "results_log": str(log_path), **spread})
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


def _report(o: dict[str, Any], log_path: Path, endpoints: dict[str, Any]) -> Any:
    from osmosis_ai.eval.summary import build_report

    models = {tag: ep.model for tag, ep in endpoints.items()} if len(endpoints) > 1 else None
    return build_report(
        log_path,
        eval_fns=list(o["eval_fns"]),
        n_runs=o["n_runs"],
        pass_threshold=o["pass_threshold"],
        models=models,
    )


def _output_config(o: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {
        "model": o["model"],
        "n_runs": o["n_runs"],
        "pass_threshold": o["pass_threshold"],
        "eval_fns": list(o["eval_fns"]),
    }
    if o["baseline_model"]:
        config["baseline_model"] = o["baseline_model"]
    return config


def _write_output(path: Path, report: Any, o: dict[str, Any], duration_ms: float, outcome: Any) -> None:
    # The rows are streamed from the log to the file: memory does not grow with the rows.
    report.write_json(
        path,
        config=_output_config(o),
        duration_ms=duration_ms,
        stopped_early=outcome.stopped_early,
        stop_reason=outcome.stop_reason,
        interrupted=outcome.interrupted,
    )
