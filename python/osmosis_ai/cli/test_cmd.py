"""`osmosis test`: run an agent loop once per dataset row (batch), or step through a row (`--interactive`).

Batch mode prints ``[i/n] Row R: OK|FAILED (...)`` per row, a summary, and exits 1 when any row failed;
``-o`` writes the established ``{"summary", "results"}`` JSON. Interactive mode pauses after every LLM
call: Enter/``n`` next step, ``c`` continue, ``m`` messages, ``t`` tools, ``q`` quit, ``?`` help.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai._version import __version__
from osmosis_ai.cli import bounds
from osmosis_ai.cli.agent_options import agent_options
from osmosis_ai.cli.output import json_result
from osmosis_ai.cli.run_support import AGENT_FLAGS, EchoObserver, library_errors

if TYPE_CHECKING:
    from osmosis_ai.eval.options import TestOptions
    from osmosis_ai.eval.test_session import TestResult
    from osmosis_ai.runs.work import RunOutcome

FLAGS = {
    **AGENT_FLAGS,
    "offset": "--offset",
    "limit": "--limit",
    "max_turns": "--max-turns",
    "output": "-o/--output",
}
# Click options that are not options of the session: how this command shows it, and the console.
_CLI_ONLY = ("debug", "quiet", "interactive", "row")


@click.command("test", context_settings={"help_option_names": ["-h", "--help"]})
@agent_options
@click.option(
    "-d",
    "--dataset",
    "--data",
    "dataset",
    required=True,
    metavar="FILE",
    help="Dataset: .jsonl, .json, .csv or .parquet (--data: the established spelling).",
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
    from osmosis_ai.eval.options import TestOptions
    from osmosis_ai.eval.test_session import run_test

    with library_errors(FLAGS):
        options = TestOptions(**{k: v for k, v in o.items() if k not in _CLI_ONLY})
    if o["row"] is not None and not o["interactive"]:
        raise click.UsageError("--row can only be used with --interactive mode")
    from dotenv import find_dotenv, load_dotenv

    load_dotenv(find_dotenv(usecwd=True))
    if o["debug"]:
        import logging

        logging.basicConfig(level=logging.DEBUG)
        os.environ["OSMOSIS_DEBUG"] = "1"
    if not o["quiet"]:
        suffix = " (Interactive Mode)" if o["interactive"] else ""
        click.echo(f"osmosis-rollout-test v{__version__}{suffix}\n")
    observer = EchoObserver(quiet=o["quiet"], progress=lambda total: _RowLines(total, o["quiet"]))
    with library_errors(FLAGS):
        if o["interactive"]:
            code = asyncio.run(_interactive(options, observer, o["row"]))
        else:
            code = _render(run_test(options, observer), o["quiet"])
    raise SystemExit(code)


class _ClickConsole:
    """The interactive session's console here: click writes (colour only on a terminal)."""

    def echo(self, text: str = "") -> None:
        click.echo(text)

    def style(self, text: str, fg: str) -> str:
        return click.style(text, fg=fg)


async def _interactive(options: TestOptions, observer: EchoObserver, start_row: int | None) -> int:
    from osmosis_ai.eval.interactive import InteractiveSession
    from osmosis_ai.eval.test_session import open_test_inputs

    async with open_test_inputs(options, observer) as inputs:
        rows, transport = inputs.rows, inputs.transport
        session = InteractiveSession(
            inputs.agent, transport, rows, options, start_row, console=_ClickConsole()
        )
        return await session.run()


class _RowLines:
    """One line per finished row: ``[i/n] Row R: OK|FAILED (duration, tokens) - error``."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total, self.quiet = total, quiet

    def __call__(self, record: dict[str, Any], outcome: RunOutcome) -> None:
        from osmosis_ai.eval.report import format_duration
        from osmosis_ai.terminal_text import one_line

        if self.quiet:
            return
        status = "OK" if record["success"] else "FAILED"
        line = (
            f"[{outcome.executed}/{self.total}] Row {record['row_index']}: {status} "
            f"({format_duration(record['duration_ms'])}, {record['tokens']} tokens)"
        )
        if record.get("error"):
            line += " - " + one_line(record["error"], 200)
        click.echo(line)

    def close(self) -> None:
        """Nothing to close."""


def _render(result: TestResult, quiet: bool) -> int:
    from osmosis_ai.cli.output import emit_result
    from osmosis_ai.eval.report import format_duration, format_tokens

    passed, failed = result.passed, result.failed
    if not quiet:
        click.echo("\nSummary:")
        click.echo(f"  Total: {len(result.records)}")
        click.echo(f"  Passed: {click.style(str(passed), fg='green') if passed else passed}")
        click.echo(f"  Failed: {click.style(str(failed), fg='red') if failed else failed}")
        click.echo(f"  Duration: {format_duration(result.duration_ms)}")
        click.echo(f"  Total tokens: {format_tokens(result.document['summary']['total_tokens'])}")
        if result.outcome.stopped_early:
            click.echo(f"  Stopped early: {result.outcome.stop_reason}")
        if result.output is not None:
            click.echo(f"\nResults written to: {result.output}")
    emit_result(result.document)
    if result.outcome.interrupted:
        from osmosis_ai.cli.run_log import stopped_label

        label = stopped_label(result.outcome.interrupted_exit_code)
        click.echo(f"\n{label}: {len(result.records)} row(s) finished.", err=True)
        return result.outcome.interrupted_exit_code
    return 1 if failed or result.outcome.stopped_early else 0
