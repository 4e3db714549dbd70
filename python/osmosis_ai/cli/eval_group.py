"""`osmosis eval ...`: the group that local evaluation, `eval rubric` and `eval submit` hang from."""

from __future__ import annotations

import click

from osmosis_ai.cli.main import LazyCommands, LazyGroup

# Subcommands of `osmosis eval`, imported on first use: name -> (module, attribute, one-line help).
EVAL_COMMANDS: LazyCommands = {
    "rubric": (
        "osmosis_ai.cli.eval_rubric_inline",
        "eval_rubric_inline",
        "Score JSONL conversations against a rubric with an LLM judge.",
    ),
}


@click.group("eval", cls=LazyGroup, lazy_commands=EVAL_COMMANDS, invoke_without_command=True)
@click.pass_context
def eval_group(ctx: click.Context) -> None:
    """Evaluate agents and judges locally; submit evals."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(1)
