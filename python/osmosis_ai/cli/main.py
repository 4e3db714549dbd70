"""Entry point of the `osmosis` command (also installed as `osmosis-ai` and `osmosis_ai`).

The group imports no command module until that command runs, so `osmosis --help` and `--version` stay
fast. Errors of ours are printed as ``Error: <message>`` without a traceback (``--debug`` or
``OSMOSIS_DEBUG=1`` shows it) and exit 1.
"""

from __future__ import annotations

import importlib
import itertools
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from osmosis_ai.cli.commands import COMMANDS, HIDDEN, ROOT_HELP, ROOT_OPTIONS, LazyCommands

# Root options that take a value (skipped when looking for the command's name).
_ROOT_VALUE_OPTIONS = {"--platform", "--env-file"}
# Commands with a `--json` of their own (their established report shape); it is not hoisted for them.
_OWN_JSON = {("dataset", "validate"), ("config", "validate")}


class LazyGroup(click.Group):
    """A click group whose subcommands (in ``lazy_commands``) are imported on first use."""

    def __init__(self, *args: Any, lazy_commands: LazyCommands | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = COMMANDS if lazy_commands is None else lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_help_option_names(self, ctx: click.Context) -> list[str]:
        # click (8.1.8+) builds the help option once per command, from the first context that asks, and keeps
        # it: asked through a bare click.Context(cli) (a docs generator, a test) it would stay `--help` without
        # `-h` for the rest of the process. The root's names are its own, whoever asks first.
        names = self.context_settings.get("help_option_names", ctx.help_option_names)
        taken = {name for param in self.params for name in (*param.opts, *param.secondary_opts)}
        return [name for name in dict.fromkeys(names) if name not in taken]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands:
            module_name, attribute, _ = self.lazy_commands[cmd_name]
            command: click.Command = getattr(importlib.import_module(module_name), attribute)
            return command
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, text) for name, (_, _, text) in self.lazy_commands.items() if name not in HIDDEN]
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
    help=ROOT_HELP,
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
    help=ROOT_OPTIONS["version"][1],
)
@click.option("--debug", is_flag=True, help=ROOT_OPTIONS["debug"][1])
@click.option("--json", "json_mode", is_flag=True, help=ROOT_OPTIONS["json"][1])
@click.option("--plain", "plain_mode", is_flag=True, help=ROOT_OPTIONS["plain"][1])
@click.option("--platform", metavar="URL", default=None, help=ROOT_OPTIONS["platform"][1])
@click.option(
    "--env-file",
    metavar="PATH",
    envvar="OSMOSIS_ENV_FILE",
    default=None,
    help=ROOT_OPTIONS["env_file"][1],
)
@click.pass_context
def cli(
    ctx: click.Context,
    debug: bool,
    json_mode: bool,
    plain_mode: bool,
    platform: str | None,
    env_file: str | None,
) -> None:
    from osmosis_ai.cli.output import STATE, help_without_subcommand

    if debug:
        os.environ["OSMOSIS_DEBUG"] = "1"
    if json_mode and plain_mode:
        raise click.UsageError("--json and --plain cannot be used together.")
    if json_mode or plain_mode:  # else keep what main() saw: a command's own --json (config validate)
        STATE.mode = "json" if json_mode else "plain"
    STATE.platform, STATE.env_file = platform, env_file
    help_without_subcommand(ctx)


def _command_words(args: Sequence[str]) -> list[str]:
    """The command path's words in ``args`` (``["eval", "list"]``), skipping options and their values."""
    words: list[str] = []
    skip = False
    for token in args:
        if token == "--":
            break
        if skip:
            skip = False
        elif token in _ROOT_VALUE_OPTIONS:
            skip = True
        elif token.startswith("-"):
            if words:  # options of the command itself: its name is complete
                break
        else:
            words.append(token)
            if len(words) == 2:
                break
    return words


def hoist_root_flags(args: Sequence[str]) -> list[str]:
    """Moves ``--json`` / ``--plain`` from anywhere (before a literal ``--``) to the front.

    Example:
        >>> hoist_root_flags(["eval", "list", "--json"])
        ['--json', 'eval', 'list']
    """
    if tuple(_command_words(args)) in _OWN_JSON:
        return list(args)
    end = list(args).index("--") if "--" in args else len(args)
    flags = [a for a in args[:end] if a in ("--json", "--plain")]
    rest = [a for a in args[:end] if a not in ("--json", "--plain")]
    return [*dict.fromkeys(flags), *rest, *args[end:]]


def _command_name(args: Sequence[str]) -> str:
    words = _command_words(args)
    if words and words[0] not in COMMANDS:
        return "<root>"
    return " ".join(words) or "<root>"


def _report_error(exc: BaseException, args: Sequence[str], code: str | None = None) -> None:
    from osmosis_ai.cli.output import STATE, error_envelope

    if _debug_enabled():
        import traceback

        traceback.print_exc()
    if STATE.mode == "json":
        details = getattr(exc, "details", None)
        click.echo(
            error_envelope(
                _command_name(args),
                code or getattr(exc, "code", None) or "VALIDATION",
                str(exc) if code != "INTERNAL" else f"Unexpected internal error ({type(exc).__name__}).",
                details if isinstance(details, dict) else {"exception_type": type(exc).__name__},
            ),
            err=True,
        )
    else:
        click.echo(f"Error: {exc}", err=True)


def _suggest_command(exc: click.ClickException) -> click.ClickException:
    """click's "No such command 'auht'." with "Did you mean 'auth'?" added (the established CLI suggests);
    ``exc`` itself otherwise."""
    import difflib
    import re

    found = re.fullmatch(r"No such command '(.+)'\.", exc.message)
    ctx = getattr(exc, "ctx", None)
    if found is None or ctx is None or not isinstance(ctx.command, click.Group):
        return exc
    names = ctx.command.list_commands(ctx)
    close = difflib.get_close_matches(found.group(1), names, n=1, cutoff=0.6)
    if not close:
        return exc
    # click declares ``message`` Final: a usage error of the same context carries the longer message.
    return click.UsageError(f"{exc.message} Did you mean '{close[0]}'?", ctx)


def _redact_output(args: Sequence[str]) -> None:
    """Everything the CLI prints (messages, warnings, tracebacks) or logs passes the one redaction gate,
    which knows the secrets of the environment and of the command line from the start.

    Left installed on purpose: a traceback of an unexpected error is printed after ``main`` returns.
    """
    from osmosis_ai.cli.run_log import SECRET_OPTIONS
    from osmosis_ai.redact import redact_log_records, redact_std_streams, remember, remember_environment

    redact_std_streams()
    redact_log_records()
    remember_environment()
    values = [b for a, b in itertools.pairwise(args) if a in SECRET_OPTIONS]
    values += [a.split("=", 1)[1] for a in args if a.startswith(tuple(f"{o}=" for o in SECRET_OPTIONS))]
    remember(values)
    if any(name.lower().endswith("_proxy") for name in os.environ):
        from osmosis_ai.llm.network import network_settings

        network_settings()  # learns the proxy credentials: masked even where printed without their URL


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI and returns its exit code (the console scripts pass it to ``sys.exit``)."""
    from osmosis_ai.cli.output import STATE
    from osmosis_ai.errors import OsmosisError
    from osmosis_ai.stop_signals import sigterm_raises, stop_word

    STATE.reset()
    args = hoist_root_flags(list(sys.argv[1:] if argv is None else argv))
    _redact_output(args)
    options = args[: args.index("--")] if "--" in args else args
    if "--json" in options:  # known before click parses, so even a usage error gets an envelope
        STATE.mode = "json"
    try:
        # Every command, not only those on the run engine: SIGTERM unwinds like Ctrl+C and is named below.
        with sigterm_raises():
            result = cli.main(args=args, prog_name="osmosis", standalone_mode=False)
    except click.exceptions.Abort as exc:
        # click turns a KeyboardInterrupt into Abort; a Terminated (SIGTERM) or an ImportInterrupted (the file
        # being imported) keeps its own message and code.
        if isinstance(exc.__cause__, KeyboardInterrupt) and str(exc.__cause__):
            click.echo(f"{exc.__cause__}.", err=True)
            return getattr(exc.__cause__, "exit_code", 130)
        click.echo("Aborted.", err=True)
        return 130
    except KeyboardInterrupt as exc:
        code = getattr(exc, "exit_code", 130)
        click.echo(f"{exc or stop_word(code, starts_sentence=True)}.", err=True)
        return code
    except click.ClickException as exc:
        shown = _suggest_command(exc)
        if STATE.mode == "json":
            _report_error(shown, args, code="VALIDATION")
        else:
            shown.show()
        return shown.exit_code
    except (OsmosisError, OSError) as exc:
        _report_error(exc, args)
        return 1
    except ImportError as exc:
        from osmosis_ai.extras import missing_extra

        needed = missing_extra(exc, f"osmosis {_command_name(args)}")
        if needed is None and STATE.mode != "json":
            raise
        _report_error(needed or exc, args, code=None if needed else "INTERNAL")
        return 1
    except Exception as exc:
        if STATE.mode != "json":
            raise
        _report_error(exc, args, code="INTERNAL")
        return 1
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
