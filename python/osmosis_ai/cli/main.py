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

# name -> (module, attribute, one-line help). Help text lives here so `--help` imports nothing.
LazyCommands = dict[str, tuple[str, str, str]]

COMMANDS: LazyCommands = {
    "test": (
        "osmosis_ai.cli.test_cmd",
        "test_command",
        "Run an agent loop on dataset rows (batch or --interactive).",
    ),
    "eval": (
        "osmosis_ai.cli.eval_group",
        "eval_group",
        "Evaluate agents and judges locally; submit and follow evals on the platform.",
    ),
    "preview": (
        "osmosis_ai.cli.preview",
        "preview",
        "Show a rubric config or the records of a dataset file.",
    ),
    "dataset": (
        "osmosis_ai.cli.dataset",
        "dataset_group",
        "Check dataset files; upload and manage platform datasets.",
    ),
    "eval-rubric": (
        "osmosis_ai.cli.eval_rubric",
        "eval_rubric",
        "Score JSONL records against a YAML rubric with an LLM judge.",
    ),
    "report": (
        "osmosis_ai.cli.report_cmd",
        "report_command",
        "Write one self-contained HTML page with plots for results files.",
    ),
    "compare": (
        "osmosis_ai.cli.compare_cmd",
        "compare_command",
        "Compare two runs on the same rows: paired intervals, flips, McNemar.",
    ),
    "view": (
        "osmosis_ai.cli.view_cmd",
        "view_command",
        "Serve the report page of a results log of any size (or compare two) on 127.0.0.1.",
    ),
    "config": ("osmosis_ai.cli.config_cmd", "config_group", "Check eval and training configs."),
    "grade": (
        "osmosis_ai.cli.grade_cmd",
        "grade_command",
        "Run an OpenAI grader config (JSON) locally on samples or a results log.",
    ),
    "reward": (
        "osmosis_ai.cli.reward_cmd",
        "reward_group",
        "Will this reward train? Probe rewards with negative controls; diff two versions on a log.",
    ),
    "check": (
        "osmosis_ai.cli.check_cmd",
        "check_command",
        "Check a local-rollout repository: MCP tools, reward/rubric functions, dataset.",
    ),
    "train": (
        "osmosis_ai.cli.train_group",
        "train_group",
        "Submit, list, inspect and stop training runs on the platform.",
    ),
    "init": (
        "osmosis_ai.cli.init_cmd",
        "init_command",
        "Create a workspace with a rollout, configs and data.",
    ),
    "doctor": (
        "osmosis_ai.cli.doctor_cmd",
        "doctor_command",
        "Check a workspace (layout, guide files, configs); --fix adds what is missing.",
    ),
    "template": (
        "osmosis_ai.cli.template_cmd",
        "template_group",
        "List the bundled example rollouts; apply one to this workspace.",
    ),
    "serve": ("osmosis_ai.cli.serve", "serve", "Serve an agent loop to TrainGate (remote rollout server)."),
    "validate": ("osmosis_ai.cli.validate", "validate", "Validate an agent loop (name, tools, async run)."),
    "auth": (
        "osmosis_ai.cli.auth_cmd",
        "auth_group",
        "Log in to the Osmosis platform, log out, show who you are.",
    ),
    "login": ("osmosis_ai.cli.auth_cmd", "login_alias", "Log in to the Osmosis platform (= auth login)."),
    "logout": ("osmosis_ai.cli.auth_cmd", "logout_alias", "Log out (= auth logout)."),
    "whoami": ("osmosis_ai.cli.auth_cmd", "whoami_alias", "Show the logged-in account (= auth whoami)."),
    "workspace": (
        "osmosis_ai.cli.workspace_cmd",
        "workspace_group",
        "Show the platform workspace of this repository; list your workspaces.",
    ),
    "secret": ("osmosis_ai.cli.secret_cmd", "secret_group", "Manage platform secrets (provider keys)."),
    "model": ("osmosis_ai.cli.model_cmd", "model_group", "List, inspect and deploy platform models."),
    "rollout": (
        "osmosis_ai.cli.model_cmd",
        "rollout_group",
        "Create a rollout in this workspace; list the rollouts the platform synced.",
    ),
    "quickstart": (
        "osmosis_ai.cli.quickstart_cmd",
        "quickstart_command",
        "Set this machine up for a platform workspace; get a prompt for your coding agent.",
    ),
    "upgrade": (
        "osmosis_ai.cli.upgrade_cmd",
        "upgrade_command",
        "Upgrade osmosis-ai to the newest release (uv tool, pipx or pip, as installed).",
    ),
    "dev": ("osmosis_ai.cli.dev_cmd", "dev_group", "Development helpers on the platform (hidden)."),
    "benchmark": (
        "osmosis_ai.cli.benchmark_cmd",
        "benchmark_group",
        "Browse benchmarks; submit benchmark runs, follow, stop and download them.",
    ),
}

# Commands left out of `osmosis --help`, as in the established CLI (they still run).
HIDDEN = frozenset({"dev"})
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
@click.option(
    "--json", "json_mode", is_flag=True, help="Platform commands: one JSON envelope (anywhere on the line)."
)
@click.option(
    "--plain", "plain_mode", is_flag=True, help="Platform commands: tab-separated, script-friendly text."
)
@click.option("--platform", metavar="URL", default=None, help="Platform URL (else OSMOSIS_PLATFORM_URL).")
@click.option(
    "--env-file",
    metavar="PATH",
    envvar="OSMOSIS_ENV_FILE",
    default=None,
    help="dotenv file for platform commands (else the nearest .env).",
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
    """osmosis: rewards, rubric judges, agent evals and pass@k for LLM post-training."""
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

    STATE.reset()
    args = hoist_root_flags(list(sys.argv[1:] if argv is None else argv))
    _redact_output(args)
    options = args[: args.index("--")] if "--" in args else args
    if "--json" in options:  # known before click parses, so even a usage error gets an envelope
        STATE.mode = "json"
    try:
        result = cli.main(args=args, prog_name="osmosis", standalone_mode=False)
    except click.exceptions.Abort as exc:
        # click turns a KeyboardInterrupt into Abort; an ImportInterrupted (the file being imported, 143 for
        # SIGTERM) keeps its own message and code.
        if isinstance(exc.__cause__, KeyboardInterrupt) and str(exc.__cause__):
            click.echo(f"{exc.__cause__}.", err=True)
            return getattr(exc.__cause__, "exit_code", 130)
        click.echo("Aborted.", err=True)
        return 130
    except KeyboardInterrupt as exc:
        click.echo(f"{exc}." if str(exc) else "Interrupted.", err=True)
        return getattr(exc, "exit_code", 130)
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
