"""`osmosis eval ...`: local evaluation of an agent loop, and the group `eval rubric` / `eval submit` hang from.

``osmosis eval -m module:agent -d data.jsonl --model M --eval-fn mod:fn`` runs the agent over the dataset
(the established command). The options live on the group so that spelling keeps working; the work itself
is the library's (:mod:`osmosis_ai.eval.session`), called and rendered by :mod:`osmosis_ai.cli.eval_local`,
imported only when an eval runs.
"""

from __future__ import annotations

from typing import Any

import click

from osmosis_ai.cli import bounds
from osmosis_ai.cli.agent_options import agent_options
from osmosis_ai.cli.backend_options import backend_options
from osmosis_ai.cli.commands import LazyCommands
from osmosis_ai.cli.main import LazyGroup
from osmosis_ai.cli.output import json_result
from osmosis_ai.cli.run_log import log_options

# Subcommands of `osmosis eval`, imported on first use: name -> (module, attribute, one-line help).
EVAL_COMMANDS: LazyCommands = {
    "rubric": (
        "osmosis_ai.cli.eval_rubric_inline",
        "eval_rubric_inline",
        "Score JSONL conversations against an inline rubric with an LLM judge.",
    ),
    "run": (
        "osmosis_ai.cli.eval_run",
        "eval_run",
        "Run an eval config locally over a dataset file; running the same --name again resumes it.",
    ),
    "upload": (
        "osmosis_ai.cli.eval_upload",
        "eval_upload",
        "Import a finished local eval run into the platform (resumes an interrupted upload).",
    ),
    "submit": ("osmosis_ai.cli.submit", "eval_submit", "Check an eval config and submit the run."),
    "list": ("osmosis_ai.cli.runs_cmd", "eval_list", "List the workspace's evaluation runs."),
    "info": ("osmosis_ai.cli.runs_cmd", "eval_info", "Show an evaluation run: status, metrics, pass@k."),
    "logs": ("osmosis_ai.cli.runs_cmd", "eval_logs", "Show an evaluation run's log entries."),
    "stop": ("osmosis_ai.cli.runs_cmd", "eval_stop", "Stop an evaluation run."),
    "download": ("osmosis_ai.cli.runs_cmd", "eval_download", "Download an evaluation run's outputs."),
}


@click.group(
    "eval",
    cls=LazyGroup,
    lazy_commands=EVAL_COMMANDS,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@agent_options
# Required for a local eval but not for the subcommands, so click cannot enforce them: the help says so
# and a missing one is a usage error (exit 2) before anything loads.
@click.option(
    "-d", "--dataset", "--data", metavar="FILE", help="Dataset: .jsonl, .json, .csv or .parquet.  [required]"
)
@click.option(
    "--model",
    metavar="MODEL",
    help="LiteLLM model (provider/model) or the endpoint's model name.  [required]",
)
@click.option(
    "--eval-fn",
    "eval_fns",
    multiple=True,
    metavar="MODULE:FN",
    help="Eval function (repeatable).  [required]",
)
@click.option(
    "--n",
    "-n",
    "--number",
    "n_runs",
    type=bounds.capped(bounds.MAX_RUNS),
    default=1,
    show_default=True,
    help="Runs per row, the n of pass@k (not a row limit: see --limit).",
)
@click.option(
    "--pass-threshold",
    type=bounds.finite(),
    metavar="SCORE",
    default=1.0,
    show_default=True,
    help="A run passes at score >= this.",
)
@click.option(
    "--max-turns",
    type=bounds.capped(bounds.MAX_TURNS),
    default=10,
    show_default=True,
    help="Most agent turns (LLM calls) per run.",
)
@click.option(
    "--temperature",
    type=bounds.temperature(),
    default=None,
    help="Sampling temperature for the agent's calls.",
)
@click.option(
    "--max-tokens", type=bounds.capped(bounds.MAX_TOKENS, 1), default=None, help="Max tokens per LLM call."
)
@click.option(
    "--api-key", default=None, metavar="KEY", help="API key (else the provider's environment variable)."
)
@click.option(
    "--base-url",
    default=None,
    metavar="URL",
    help="Any OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1.",
)
@click.option("-o", "--output", default=None, metavar="FILE", help="Write results JSON here.")
@click.option("--debug", is_flag=True, help="Debug logging and tracebacks.")
@click.option("-q", "--quiet", is_flag=True, help="No progress or report.")
@click.option("--limit", type=int, default=None, help="At most this many rows.")
@click.option("--offset", type=int, default=0, show_default=True, help="Skip this many rows first.")
@click.option(
    "--batch-size",
    type=bounds.capped(bounds.MAX_CONCURRENCY),
    default=1,
    show_default=True,
    help="Runs in flight at once.",
)
@click.option(
    "--baseline-model",
    default=None,
    metavar="MODEL",
    help="Also run every row against this model and compare.",
)
@click.option("--baseline-base-url", default=None, metavar="URL", help="Base URL for the baseline model.")
@click.option("--baseline-api-key", default=None, metavar="KEY", help="API key for the baseline model.")
@log_options
@backend_options
@click.option(
    "--run-timeout",
    type=bounds.timeout_seconds(),
    default=600.0,
    show_default=True,
    help="Seconds one run may take.",
)
@click.option(
    "--max-failure-rate",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="Exit 0 while at most this fraction of runs failed.",
)
@click.option("--no-preflight", is_flag=True, help="Skip the 1-token reachability check before the run.")
@click.pass_context
@json_result
def eval_group(ctx: click.Context, **options: Any) -> None:
    """Evaluate an agent loop over a dataset (with `--n` runs and pass@k), or run a subcommand.

    \b
    osmosis eval -m my_agent:agent -d data.jsonl --model openai/gpt-4o-mini --eval-fn rewards:exact --n 5
    osmosis eval -m my_agent:agent -d data.jsonl --base-url http://127.0.0.1:8000/v1 --model org/model --eval-fn rewards:exact
    """
    if ctx.invoked_subcommand is not None:
        return
    if not any(options[name] for name in ("module", "mcp_dir", "dataset", "eval_fns", "resume_path")):
        click.echo(ctx.get_help())
        ctx.exit(0)
    from osmosis_ai.cli.eval_local import run_local_eval

    ctx.exit(run_local_eval(**options))
