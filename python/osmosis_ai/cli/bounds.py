"""Ranges of numeric options, applied by click before anything runs (output paths are checked by the
library's options objects: :func:`osmosis_ai._files.check_output_file`).

A NaN passes ``click.FloatRange`` (every comparison with NaN is false), and an unbounded count such as
``--batch-size 1000000000`` starts no run but grows memory without end; both are usage errors here.
"""

from __future__ import annotations

import math
from typing import Any

import click

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_RUNS",
    "MAX_TIMEOUT_S",
    "MAX_TOKENS",
    "MAX_TURNS",
    "FiniteFloat",
    "capped",
    "check_limit_all",
    "finite",
    "temperature",
    "timeout_seconds",
]

MAX_CONCURRENCY = 1024  # items in flight; each holds a connection and a run's messages
MAX_RUNS = 10_000  # --n: pass@k needs tens, not millions
MAX_TURNS = 10_000
MAX_TOKENS = 10_000_000
MAX_TIMEOUT_S = (
    7 * 24 * 3600.0
)  # a week: beyond it a timeout is a typo, and asyncio timers overflow far later


class FiniteFloat(click.FloatRange):
    """``FloatRange`` that also refuses NaN and infinities."""

    name = "finite float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number

    def _describe_range(self) -> str:
        # click words a range without bounds "x<=None"; such a range has nothing to say.
        return "" if self.min is None and self.max is None else super()._describe_range()


def finite(min: float | None = None, max: float | None = None, *, min_open: bool = False) -> FiniteFloat:
    """A finite float, optionally in ``[min, max]`` (``min`` excluded with ``min_open``)."""
    return FiniteFloat(min=min, max=max, min_open=min_open)


def timeout_seconds() -> FiniteFloat:
    """Seconds: above 0, at most :data:`MAX_TIMEOUT_S`."""
    return finite(0.0, MAX_TIMEOUT_S, min_open=True)


def temperature() -> FiniteFloat:
    """A sampling temperature: 0 to 2 (the OpenAI range; other providers allow less, none more)."""
    return finite(0.0, 2.0)


def capped(maximum: int, minimum: int | None = None) -> click.IntRange:
    """An integer at most ``maximum`` (the lower bound is left to the command when it words its own)."""
    return click.IntRange(min=minimum, max=maximum)


def check_limit_all(limit: int, every: bool, default: int = 50) -> None:
    """List commands: ``--all`` walks every page, so a ``--limit`` other than the default contradicts it.

    The established CLI reports this as a failed command (exit 1, ``VALIDATION``), not a usage error.

    Raises:
        CLIError: Both were given.
    """
    if every and limit != default:
        from osmosis_ai.errors import CLIError

        raise CLIError("--all and --limit are mutually exclusive.", code="VALIDATION")
