"""What every run command shares between its click options and the library run it calls.

:func:`library_errors` shows a library error in the CLI's words: the options fields a message names
(``{n_runs}``) become the command's flags (``--n``), an :class:`~osmosis_ai.errors.OptionsError` is a usage
error (exit 2) and any other :class:`~osmosis_ai.errors.RunError` an ``Error:`` line (exit 1).
:class:`EchoObserver` prints what a run reports.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping

import click

from osmosis_ai.errors import CLIError, OptionsError, RunError
from osmosis_ai.runs.observer import ProgressHook, RunObserver

__all__ = ["AGENT_FLAGS", "BACKEND_FLAGS", "LOG_FLAGS", "EchoObserver", "library_errors"]

LOG_FLAGS = {"log_path": "--log", "resume_path": "--resume"}
BACKEND_FLAGS = {"backend": "--backend", "ray_address": "--ray-address", "ray_workers": "--ray-workers"}
AGENT_FLAGS = {"module": "--module", "mcp_dir": "--mcp", "tool_timeout": "--mcp-tool-timeout"}

# Established wordings that name a flag with its short form as well.
_ESTABLISHED = {"Either --module or --mcp is required.": "Either --module (-m) or --mcp is required."}


def render(error: RunError, flags: Mapping[str, str]) -> str:
    """The error's message with its fields shown as ``flags``."""
    text = error.render(dict(flags))
    return _ESTABLISHED.get(text, text)


@contextlib.contextmanager
def library_errors(flags: Mapping[str, str]) -> Iterator[None]:
    """Re-raises library run errors as the CLI reports them (see the module docstring)."""
    try:
        yield
    except OptionsError as exc:
        raise click.UsageError(render(exc, flags)) from exc
    except RunError as exc:
        raise CLIError(render(exc, flags), code=exc.code, details=exc.details) from exc


class EchoObserver(RunObserver):
    """Prints a run's steps on stdout (none when ``quiet``), notices on stderr, and draws its progress
    with ``progress`` (a factory taking the session's item count)."""

    def __init__(self, *, quiet: bool = False, progress: Callable[[int], ProgressHook] | None = None) -> None:
        self.quiet = quiet
        self._progress = progress

    def message(self, text: str) -> None:
        if not self.quiet:
            click.echo(text)

    def notice(self, text: str) -> None:
        click.echo(text, err=True)

    def progress(self, total: int, *, title: str | None = None) -> ProgressHook:
        return self._progress(total) if self._progress is not None else super().progress(total)
