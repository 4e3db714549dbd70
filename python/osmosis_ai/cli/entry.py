"""The `osmosis` console script: `osmosis`, `osmosis --help` and `--version` answered without click.

Loading click is most of the CLI's start-up, and these three are what a user types first. The root help
is the text click would print (the same layout, wrapping and terminal width; `tests/cli/test_cli_entry.py`
compares them at many widths), made from the table `main.py` builds the click group from. Anything else
goes to `main.main`. The text printed here is fixed (no user data, no environment), so it needs no pass
through the redactor.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from osmosis_ai.cli.commands import COMMANDS, HIDDEN, ROOT_HELP, ROOT_OPTIONS

_HELP: tuple[list[str], ...] = (["--help"], ["-h"], [])
_VERSION = (["--version"], ["-V"])


def _terminal_width() -> int:
    """The help width click uses: the terminal's columns (COLUMNS first, 80 unknown), at most 80, minus 2."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__  # None without a console (pythonw)
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return max(min(columns or 80, 80) - 2, 50)


def _wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    import textwrap

    wrapper = textwrap.TextWrapper(
        width, initial_indent=first, subsequent_indent=rest, replace_whitespace=False
    )
    return wrapper.wrap(text)


def _definitions(rows: list[tuple[str, str]], width: int) -> list[str]:
    """Two columns, as click's ``HelpFormatter.write_dl`` lays them out (indent 2, first column <= 30)."""
    first_col = min(max(len(term) for term, _ in rows), 30) + 2
    lines = []
    for term, text in rows:
        wrapped = _wrap(text, max(width - first_col - 2, 10))
        if len(term) <= first_col - 2:
            lines.append(f"  {term}{' ' * (first_col - len(term))}{wrapped[0]}")
        else:
            lines += [f"  {term}", f"{' ' * (first_col + 2)}{wrapped[0]}"]
        lines += [f"{' ' * (first_col + 2)}{line}" for line in wrapped[1:]]
    return lines


def root_help(width: int | None = None) -> str:
    """`osmosis --help` as click prints it, at ``width`` (default: click's, from the terminal)."""
    width = _terminal_width() if width is None else width
    commands = sorted((name, text) for name, (_, _, text) in COMMANDS.items() if name not in HIDDEN)
    lines = [
        "Usage: osmosis [OPTIONS] [COMMAND] [ARGS]...",
        "",
        *_wrap(ROOT_HELP, width, "  ", "  "),
        "",
        "Options:",
        *_definitions(list(ROOT_OPTIONS.values()), width),
        "",
        "Commands:",
        *_definitions(commands, width),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI and returns its exit code (the console scripts pass it to ``sys.exit``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Shell completion (`_OSMOSIS_COMPLETE=...`, no arguments) is click's.
    completing = any(k.startswith("_OSMOSIS") and k.endswith("_COMPLETE") for k in os.environ)
    if args in _HELP and not completing:
        sys.stdout.write(root_help() + "\n")
        return 0
    if args in _VERSION:
        from osmosis_ai._version import __version__

        sys.stdout.write(f"osmosis-ai {__version__}\n")
        return 0
    from osmosis_ai.cli.main import main as run

    return run(args)
