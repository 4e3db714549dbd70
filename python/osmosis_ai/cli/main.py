"""Entry point of the `osmosis` command (also installed as `osmosis-ai` and `osmosis_ai`).

The group imports no command module until that command runs, so `osmosis --help` and `--version` stay
fast. Errors of ours are printed as ``Error: <message>`` without a traceback (``--debug`` or
``OSMOSIS_DEBUG=1`` shows it) and exit 1.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

import click

# name -> (module, attribute, one-line help). Help text lives here so `--help` imports nothing.
LazyCommands = dict[str, tuple[str, str, str]]

COMMANDS: LazyCommands = {
    "test": (
        "osmosis_ai.cli.test_cmd",
        "test_command",
        "Run an agent loop on dataset rows (batch or --interactive).",
    ),
    "eval": ("osmosis_ai.cli.eval_group", "eval_group", "Evaluate agents and judges locally; submit evals."),
    "preview": (
        "osmosis_ai.cli.preview",
        "preview",
        "Show a rubric config or the records of a dataset file.",
    ),
    "dataset": (
        "osmosis_ai.cli.dataset",
        "dataset_group",
        "Check dataset files (JSONL, JSON, CSV, Parquet).",
    ),
    "eval-rubric": (
        "osmosis_ai.cli.eval_rubric",
        "eval_rubric",
        "Score JSONL records against a YAML rubric with an LLM judge.",
    ),
    "config": ("osmosis_ai.cli.config_cmd", "config_group", "Check eval and training configs."),
    "check": (
        "osmosis_ai.cli.check_cmd",
        "check_command",
        "Check a local-rollout repository: MCP tools, reward/rubric functions, dataset.",
    ),
    "train": ("osmosis_ai.cli.train_group", "train_group", "Submit training runs."),
    "init": (
        "osmosis_ai.cli.init_cmd",
        "init_command",
        "Create a workspace with a rollout, configs and data.",
    ),
    "serve": ("osmosis_ai.cli.serve", "serve", "Serve an agent loop to TrainGate (remote rollout server)."),
    "validate": ("osmosis_ai.cli.validate", "validate", "Validate an agent loop (name, tools, async run)."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands (in ``lazy_commands``) are imported on first use."""

    def __init__(self, *args: object, lazy_commands: LazyCommands | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy_commands = COMMANDS if lazy_commands is None else lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands:
            module_name, attribute, _ = self.lazy_commands[cmd_name]
            return getattr(importlib.import_module(module_name), attribute)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, _, help_text) in self.lazy_commands.items()]
        rows += [(name, cmd.get_short_help_str()) for name, cmd in sorted(self.commands.items())]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # Read only when asked: the version comes from the compiled core, which `--help` need not load.
    if not value or ctx.resilient_parsing:
        return
    from osmosis_ai._version import __version__

    click.echo(f"osmosis-ai {__version__}")
    ctx.exit()


def _debug_enabled() -> bool:
    return os.environ.get("OSMOSIS_DEBUG", "").strip().lower() in {"1", "true", "yes", "on"}


@click.group(
    "osmosis",
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "-V",
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors (or set OSMOSIS_DEBUG=1).")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """osmosis: rewards, rubric judges, agent evals and pass@k for LLM post-training."""
    if debug:
        os.environ["OSMOSIS_DEBUG"] = "1"
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(1)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI and returns its exit code (the console scripts pass it to ``sys.exit``)."""
    from osmosis_ai.errors import OsmosisError

    try:
        args = list(argv) if argv is not None else None
        result = cli.main(args=args, prog_name="osmosis", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (OsmosisError, OSError) as exc:
        if _debug_enabled():
            import traceback

            traceback.print_exc()
        click.echo(f"Error: {exc}", err=True)
        return 1
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
