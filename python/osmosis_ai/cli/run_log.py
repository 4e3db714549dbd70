"""The results-log options every engine command shares (``--log`` / ``--resume``) and the resume hint.

Opening the log is the library's (:mod:`osmosis_ai.runs.session_log`)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

__all__ = ["continue_command", "exit_interrupted", "log_options", "resume_command"]


def log_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Adds ``--log FILE`` and ``--resume FILE`` (stored as ``log_path`` / ``resume_path``)."""
    func = click.option(
        "--resume",
        "resume_path",
        default=None,
        metavar="FILE",
        help="Continue the session recorded in this results log (same arguments otherwise).",
    )(func)
    return click.option(
        "--log",
        "log_path",
        default=None,
        metavar="FILE",
        help="Results log to write (JSONL, one line per finished run; default: a new file in $OSMOSIS_LOG_DIR or ~/.cache/osmosis/eval_logs/).",
    )(func)


# Options whose value is a secret: a printed command shows a placeholder, never the value, and the
# redaction gate knows the values before anything runs (cli.main).
SECRET_OPTIONS = ("--api-key", "--baseline-api-key", "--token")


def continue_command(
    argv: list[str] | None = None,
    *,
    drop_options: tuple[str, ...] = (),
    drop_switches: tuple[str, ...] = (),
    add: tuple[str, ...] = (),
) -> str:
    """The command line that continues this session, as the user can paste it.

    The user's own arguments (``sys.argv`` unless ``argv``), without the options in ``drop_options`` (with
    their values, ``--opt v`` or ``--opt=v``) and the switches in ``drop_switches``, then ``add``. A secret
    given on the command line (``--api-key``) shows as a placeholder.

    Example:
        >>> continue_command(["eval", "run", "c.toml", "--fresh", "--api-key", "sk-1"], drop_switches=("--fresh",))
        "osmosis eval run c.toml --api-key '<your API key>'"
    """
    args = iter(sys.argv[1:] if argv is None else argv)
    kept: list[str] = []
    for arg in args:
        name, has_value, _ = arg.partition("=")
        if name in drop_options or name in SECRET_OPTIONS:
            if not has_value:
                next(args, None)
            if name in SECRET_OPTIONS:
                kept += [name, "<your API key>"]
        elif arg not in drop_switches:
            kept.append(arg)
    return shlex.join(["osmosis", *kept, *add])


def resume_command(log_path: Path, argv: list[str] | None = None) -> str:
    """The command line that continues this session: the same arguments, ``--resume`` instead of ``--log``."""
    return continue_command(argv, drop_options=("--log", "--resume"), add=("--resume", str(log_path)))


def stopped_label(exit_code: int) -> str:
    """How a stop by a signal starts its message: ``Terminated (SIGTERM)`` (exit 143), else ``Interrupted``
    (:func:`osmosis_ai.stop_signals.stop_word`)."""
    from osmosis_ai.stop_signals import stop_word

    return stop_word(exit_code, starts_sentence=True)


def interrupted_message(log_path: Path, finished: str, exit_code: int) -> str:
    """What a command a signal stopped says: where ``finished`` (e.g. "12 graded samples") are, and the
    command that continues."""
    return (
        f"\n{stopped_label(exit_code)}: {finished} are saved in {log_path}.\n"
        f"Continue with: {resume_command(log_path)}"
    )


def exit_interrupted(
    log_path: Path, finished: str, exit_code: int, result: dict[str, Any] | None = None
) -> NoReturn:
    """Ends a command a signal stopped (:func:`interrupted_message`) with the exit code of the signal
    (130 for Ctrl+C, 143 for SIGTERM). With ``--json``, ``result`` (the command's envelope data over what
    finished) is printed first, marked ``interrupted: true`` as `osmosis eval --json` marks its own."""
    from osmosis_ai.cli.output import STATE, emit_detail

    if result is not None and STATE.mode == "json":
        emit_detail({**result, "interrupted": True}, [])
    click.echo(interrupted_message(log_path, finished, exit_code), err=True)
    sys.exit(exit_code)
