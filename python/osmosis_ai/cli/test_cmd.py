"""`osmosis test`: run an agent loop once per dataset row (batch), or step through a row (`--interactive`).

Batch mode prints ``[i/n] Row R: OK|FAILED (...)`` per row, a summary, and exits 1 when any row failed;
``-o`` writes the established ``{"summary", "results"}`` JSON. Interactive mode pauses after every LLM
call: Enter/``n`` next step, ``c`` continue, ``m`` messages, ``t`` tools, ``q`` quit, ``?`` help.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import click

from osmosis_ai._version import __version__
from osmosis_ai.cli import bounds
from osmosis_ai.cli.agent_options import agent_options
from osmosis_ai.cli.output import json_result
from osmosis_ai.errors import CLIError


@click.command("test", context_settings={"help_option_names": ["-h", "--help"]})
@agent_options
@click.option(
    "-d", "--dataset", required=True, metavar="FILE", help="Dataset: .jsonl, .json, .csv or .parquet."
)
@click.option(
    "--model", default="gpt-5-mini", show_default=True, help="LiteLLM model or the endpoint's model name."
)
@click.option("--limit", type=int, default=None, help="At most this many rows.")
@click.option("--offset", type=int, default=0, show_default=True, help="Skip this many rows first.")
@click.option("--api-key", default=None, help="API key (else the provider's environment variable).")
@click.option("--base-url", default=None, metavar="URL", help="Any OpenAI-compatible server.")
@click.option(
    "--max-turns",
    type=bounds.capped(bounds.MAX_TURNS),
    default=10,
    show_default=True,
    help="Turn limit put into each request.",
)
@click.option(
    "--max-tokens", type=bounds.capped(bounds.MAX_TOKENS, 1), default=None, help="Max tokens per LLM call."
)
@click.option("--temperature", type=bounds.temperature(), default=None, help="Sampling temperature.")
@click.option("--debug", is_flag=True, help="Debug logging and tracebacks.")
@click.option("-o", "--output", default=None, metavar="FILE", help="Write results JSON here.")
@click.option("-q", "--quiet", is_flag=True, help="No progress or summary.")
@click.option("-i", "--interactive", is_flag=True, help="Step through a row one LLM call at a time.")
@click.option("--row", type=int, default=None, help="Interactive mode: the row to start with.")
@click.option(
    "--run-timeout",
    type=bounds.timeout_seconds(),
    default=600.0,
    show_default=True,
    help="Seconds one row may take.",
)
@json_result
def test_command(**o: Any) -> None:
    """Run an agent loop on dataset rows against a model, without scoring."""
    from osmosis_ai.cli.agent_source import check_agent_source

    check_agent_source(o["module"], o["mcp_dir"], o["tool_timeout"])
    if o["row"] is not None and not o["interactive"]:
        raise click.UsageError("--row can only be used with --interactive mode")
    if o["offset"] < 0:
        raise click.UsageError("--offset must be >= 0.")
    if o["limit"] is not None and o["limit"] < 1:
        raise click.UsageError("--limit must be >= 1.")
    if o["max_turns"] < 1:
        raise click.UsageError("--max-turns must be >= 1.")
    from osmosis_ai.cli.bounds import check_output_file

    check_output_file(o["output"])
    from dotenv import find_dotenv, load_dotenv

    load_dotenv(find_dotenv(usecwd=True))
    if o["debug"]:
        import logging

        logging.basicConfig(level=logging.DEBUG)
        os.environ["OSMOSIS_DEBUG"] = "1"
    if not o["quiet"]:
        suffix = " (Interactive Mode)" if o["interactive"] else ""
        click.echo(f"osmosis-rollout-test v{__version__}{suffix}\n")
    code = asyncio.run(_main(o))
    raise SystemExit(code)


def _load_rows(o: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    from osmosis_ai.datasets import read_dataset

    if not o["quiet"]:
        click.echo(f"Loading dataset: {o['dataset']}")
    rows = [
        (o["offset"] + i, row)
        for i, row in enumerate(read_dataset(o["dataset"], limit=o["limit"], offset=o["offset"]))
    ]
    if not rows:
        raise CLIError("No rows to test")
    if not o["quiet"]:
        click.echo(f"  Total rows: {len(rows)}")
    return rows


async def _main(o: dict[str, Any]) -> int:
    from osmosis_ai.cli.agent_source import load_agent
    from osmosis_ai.cli.eval_local import _endpoint
    from osmosis_ai.llm.transport import make_transport

    if not o["quiet"]:
        click.echo(f"Loading agent: {o['module'] or o['mcp_dir']}")
    agent = load_agent(o["module"], o["mcp_dir"], quiet=o["quiet"], tool_timeout=o["tool_timeout"])
    if not o["quiet"]:
        click.echo(f"  Agent name: {agent.name}")
    rows = _load_rows(o)
    # Local inputs are checked first: a typo in -m or -d is reported before the key lookup.
    transport = make_transport(_endpoint(o["model"], o["base_url"], o["api_key"]), max_connections=4)
    try:
        if o["interactive"]:
            from osmosis_ai.cli.test_interactive import InteractiveSession

            return await InteractiveSession(agent, transport, rows, o).run()
        return await _batch(agent, transport, rows, o)
    finally:
        await transport.aclose()


async def _batch(
    agent: Any, transport: Any, rows: list[tuple[int, dict[str, Any]]], o: dict[str, Any]
) -> int:
    from osmosis_ai.eval.report import format_duration, format_tokens
    from osmosis_ai.eval.runner import AgentExecutor
    from osmosis_ai.llm.chat import ExternalLLMClient
    from osmosis_ai.runs.engine import MemorySink, RunEngine, work_items

    quiet = o["quiet"]
    sink = MemorySink()

    def show(record: dict[str, Any], outcome: Any) -> None:
        if quiet:
            return
        status = "OK" if record["success"] else "FAILED"
        line = (
            f"[{outcome.executed}/{len(rows)}] Row {record['row_index']}: {status} "
            f"({format_duration(record['duration_ms'])}, {record['tokens']} tokens)"
        )
        if record.get("error"):
            line += " - " + " ".join(str(record["error"]).split())[:200]
        click.echo(line)

    params = {k: o[k] for k in ("temperature", "max_tokens") if o[k] is not None}
    executor = AgentExecutor(
        agent,
        [],
        lambda _tag: ExternalLLMClient(transport),
        max_turns=o["max_turns"],
        completion_params=params,
        mode="test",
    )
    engine = RunEngine(executor, sink, item_timeout=o["run_timeout"], on_record=show, isolate=True)
    if not quiet:
        click.echo(f"\nRunning {len(rows)} row(s)...")
    started = time.monotonic()
    outcome = await engine.run(work_items(rows, 1, ("",), sink.done, engine.outcome))
    duration_ms = (time.monotonic() - started) * 1000.0
    records = sorted(sink.records, key=lambda r: r["row_index"])
    passed = sum(1 for r in records if r["success"])
    failed = len(records) - passed
    tokens = sum(r["tokens"] for r in records)
    if not quiet:
        click.echo("\nSummary:")
        click.echo(f"  Total: {len(records)}")
        click.echo(f"  Passed: {click.style(str(passed), fg='green') if passed else passed}")
        click.echo(f"  Failed: {click.style(str(failed), fg='red') if failed else failed}")
        click.echo(f"  Duration: {format_duration(duration_ms)}")
        click.echo(f"  Total tokens: {format_tokens(tokens)}")
        if outcome.stopped_early:
            click.echo(f"  Stopped early: {outcome.stop_reason}")
    document = _results_document(records, duration_ms, outcome)
    if outcome.interrupted:  # the rows that finished, marked as such
        document = {"interrupted": True, **document}
    if o["output"]:
        path = Path(o["output"])
        from osmosis_ai._files import write_json_atomic

        write_json_atomic(path, document)
        if not quiet:
            click.echo(f"\nResults written to: {o['output']}")
    from osmosis_ai.cli.output import emit_result

    emit_result(document)
    if outcome.interrupted:
        from osmosis_ai.cli.run_log import stopped_label

        click.echo(
            f"\n{stopped_label(outcome.interrupted_exit_code)}: {len(records)} row(s) finished.", err=True
        )
        return outcome.interrupted_exit_code
    return 1 if failed or outcome.stopped_early else 0


def _results_document(records: list[dict[str, Any]], duration_ms: float, outcome: Any) -> dict[str, Any]:
    """The established ``{"summary", "results"}`` document (``-o`` and the ``--json`` envelope's data)."""

    summary: dict[str, Any] = {
        "total": len(records),
        "passed": sum(1 for r in records if r["success"]),
        "failed": sum(1 for r in records if not r["success"]),
        "total_duration_ms": duration_ms,
        "total_tokens": sum(r["tokens"] for r in records),
    }
    if outcome.stopped_early:
        summary["stopped_early"] = True
        summary["stop_reason"] = outcome.stop_reason
    results = [
        {
            "row_index": r["row_index"],
            "success": r["success"],
            "error": r.get("error"),
            "duration_ms": r["duration_ms"],
            "token_usage": {
                "prompt_tokens": r["prompt_tokens"],
                "completion_tokens": r["completion_tokens"],
                "total_tokens": r["tokens"],
                "num_llm_calls": r["num_llm_calls"],
            },
            "reward": r.get("reward"),
            "finish_reason": r.get("finish_reason"),
            **({"tool_calls": r["tool_calls"]} if r.get("tool_calls") else {}),
        }
        for r in records
    ]
    return {"summary": summary, "results": results}
