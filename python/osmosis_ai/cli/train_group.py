"""`osmosis train ...`: training runs on the platform (`train submit` for now)."""

from __future__ import annotations

import click

from osmosis_ai.cli.main import LazyCommands, LazyGroup

# Subcommands of `osmosis train`, imported on first use: name -> (module, attribute, one-line help).
TRAIN_COMMANDS: LazyCommands = {
    "submit": ("osmosis_ai.cli.submit", "train_submit", "Check a training config and submit the run."),
}


@click.group("train", cls=LazyGroup, lazy_commands=TRAIN_COMMANDS, invoke_without_command=True)
@click.pass_context
def train_group(ctx: click.Context) -> None:
    """Submit training runs."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(1)
