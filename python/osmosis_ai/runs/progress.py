"""The one progress display of the run engine.

On a terminal a single line on stderr is redrawn: a bar, done/total, items/s, ETA, failures, and what
the command adds (tokens and a running mean for eval, judge counters for rubric). Elsewhere (CI logs,
pipes) a command may print one plain line per finished item; nothing is redrawn.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from osmosis_ai.runs.work import RunOutcome

__all__ = ["Progress", "format_eta"]


def format_eta(seconds: float) -> str:
    """``1h02m``, ``3m05s`` or ``42s``.

    Example:
        >>> format_eta(185)
        '3m05s'
    """
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """Receives each logged record (``RunEngine(on_record=progress)``) and shows where the session stands.

    Args:
        total: Items in the session, including those a resumed log already holds.
        unit: What an item is called on the line (``runs``).
        extra: The command's own fields for the live line, from the outcome.
        plain_line: The line printed per item when not on a terminal; None prints nothing there.
        quiet: Show nothing.
    """

    def __init__(
        self,
        total: int,
        *,
        unit: str = "runs",
        extra: Callable[[RunOutcome], list[str]] | None = None,
        plain_line: Callable[[int, int, dict[str, Any]], str] | None = None,
        quiet: bool = False,
        stream: TextIO | None = None,
        plain_stream: TextIO | None = None,
    ) -> None:
        self.total = total
        self.unit = unit
        self.extra = extra
        self.plain_line = plain_line
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.plain_stream = plain_stream or sys.stdout
        self.live = not quiet and self.stream.isatty()
        self._started = time.monotonic()
        self._last_draw = 0.0
        self._first_done: int | None = None
        self.done = 0

    def __call__(self, record: dict[str, Any], outcome: RunOutcome) -> None:
        # Items a resumed session takes from its log count as done, so the count still ends at the total.
        self.done = outcome.executed + outcome.skipped
        if self._first_done is None:
            self._first_done = outcome.skipped
        if self.quiet:
            return
        if not self.live:
            if self.plain_line is not None:
                print(self.plain_line(self.done, self.total, record), file=self.plain_stream, flush=True)
            return
        now = time.monotonic()
        if now - self._last_draw >= 0.1 or self.done == self.total:
            self._last_draw = now
            self._draw(outcome, now)

    def _draw(self, outcome: RunOutcome, now: float) -> None:
        elapsed = max(now - self._started, 1e-9)
        rate = outcome.executed / elapsed
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        parts = [
            f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}",
            f"{rate:.1f} {self.unit}/s",
        ]
        remaining = self.total - self.done
        if rate > 0 and remaining > 0:
            parts.append(f"ETA {format_eta(remaining / rate)}")
        parts.append(f"failed {outcome.failed}")
        if self.extra is not None:
            parts.extend(self.extra(outcome))
        self.stream.write("\r\033[2K" + "  ".join(parts))
        self.stream.flush()

    def close(self) -> None:
        if self.live and self.done:
            self.stream.write("\n")
            self.stream.flush()
