"""`osmosis train ...`: training runs on the platform (submit, list, info, logs, stop)."""

from __future__ import annotations

import click

from osmosis_ai.cli.commands import LazyCommands
from osmosis_ai.cli.main import LazyGroup
from osmosis_ai.cli.output import help_without_subcommand

# Subcommands of `osmosis train`, imported on first use: name -> (module, attribute, one-line help).
TRAIN_COMMANDS: LazyCommands = {
    "submit": ("osmosis_ai.cli.submit", "train_submit", "Check a training config and submit the run."),
    "list": ("osmosis_ai.cli.runs_cmd", "train_list", "List the workspace's training runs."),
    "info": ("osmosis_ai.cli.runs_cmd", "train_info", "Show a training run: status, checkpoints, metrics."),
    "logs": ("osmosis_ai.cli.runs_cmd", "train_logs", "Show a training run's log entries."),
    "stop": ("osmosis_ai.cli.runs_cmd", "train_stop", "Stop a training run."),
}


@click.group("train", cls=LazyGroup, lazy_commands=TRAIN_COMMANDS, invoke_without_command=True)
@click.pass_context
def train_group(ctx: click.Context) -> None:
    """Submit and follow training runs on the platform."""
    help_without_subcommand(ctx)
