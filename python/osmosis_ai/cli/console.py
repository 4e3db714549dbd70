"""``osmosis_ai.cli.console.Console`` (the 0.3 import path): terminal output for scripts built on the CLI.

Plain text with optional colour through click (no Rich dependency). In ``--json`` mode the CLI keeps stdout
for its one envelope, so a console made without ``file`` writes to stderr then.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import click

__all__ = ["Console"]


class Console:
    """Writes lines to a terminal or a file, with colour only where it helps and is allowed.

    Args:
        file: Where to write (default: stdout, or stderr in ``--json`` mode).
        force_terminal: Treat ``file`` as a terminal (colours on) or not, whatever it is.
        no_color: Never colour (the ``NO_COLOR`` convention).
        width: Wrap width for :meth:`rule`; the terminal's width when None.

    Example:
        >>> Console(no_color=True).print("ready")  # doctest: +SKIP
        ready
    """

    def __init__(
        self,
        *,
        file: TextIO | None = None,
        force_terminal: bool | None = None,
        no_color: bool = False,
        width: int | None = None,
    ) -> None:
        self._file = file
        self.no_color = no_color
        self.force_terminal = force_terminal
        self._width = width

    @property
    def file(self) -> TextIO:
        if self._file is not None:
            return self._file
        from osmosis_ai.cli.output import STATE

        return sys.stderr if STATE.mode == "json" else sys.stdout

    @property
    def is_terminal(self) -> bool:
        if self.force_terminal is not None:
            return self.force_terminal
        return bool(getattr(self.file, "isatty", lambda: False)())

    @property
    def width(self) -> int:
        import shutil

        return self._width or shutil.get_terminal_size((80, 24)).columns

    def _color(self) -> bool:
        return self.is_terminal and not self.no_color

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", style: str | None = None) -> None:
        """Prints ``objects`` like ``print``; ``style`` is a click colour name (``"red"``, ``"green"``...)."""
        text = sep.join(str(o) for o in objects)
        if style:
            text = click.style(text, fg=style)
        click.echo(text, file=self.file, nl=False, color=self._color())
        click.echo(end, file=self.file, nl=False, color=self._color())

    def error(self, message: str) -> None:
        """``Error: message`` in red on a terminal."""
        self.print(f"Error: {message}", style="red")

    def warning(self, message: str) -> None:
        """``Warning: message`` in yellow on a terminal."""
        self.print(f"Warning: {message}", style="yellow")

    def rule(self, title: str = "") -> None:
        """A horizontal line across the width, with ``title`` in it."""
        line = f" {title} " if title else ""
        self.print(line.center(self.width, "-"))
