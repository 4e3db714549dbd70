"""Progress of a running eval: a live status line on a terminal, one plain line per run otherwise."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from osmosis_ai.eval.report import format_progress_line, format_tokens

__all__ = ["EvalProgress"]


class EvalProgress:
    """Receives each logged run (``EvalRunner(on_run=progress)``) and shows where the eval stands.

    On a TTY a single line is redrawn (done/total, runs/s, failures, tokens, running mean of the first eval
    function); elsewhere (CI logs, pipes) each run prints the established ``[i/n] OK (...)`` line.
    """

    def __init__(self, total: int, *, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.total = total
        self.stream = stream or sys.stdout
        self.quiet = quiet
        self.live = not quiet and self.stream.isatty()
        self._started = time.monotonic()
        self._last_draw = 0.0
        self.done = 0

    def __call__(self, record: dict[str, Any], outcome: Any) -> None:
        # Runs a resumed eval takes from its log count as done, so the count still ends at the total.
        self.done = outcome.executed + outcome.skipped
        if self.quiet:
            return
        if not self.live:
            print(format_progress_line(self.done, self.total, record), file=self.stream, flush=True)
            return
        now = time.monotonic()
        if now - self._last_draw >= 0.1 or self.done == self.total:
            self._last_draw = now
            self._draw(outcome, now)

    def _draw(self, outcome: Any, now: float) -> None:
        elapsed = max(now - self._started, 1e-9)
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        parts = [
            f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}",
            f"{self.done / elapsed:.1f} runs/s",
            f"failed {outcome.failed}",
            f"{format_tokens(outcome.tokens)} tokens",
        ]
        mean = outcome.running_mean()
        if mean is not None:
            parts.append(f"mean {mean:.3f}")
        self.stream.write("\r\033[2K" + "  ".join(parts))
        self.stream.flush()

    def close(self) -> None:
        if self.live and self.done:
            self.stream.write("\n")
            self.stream.flush()
