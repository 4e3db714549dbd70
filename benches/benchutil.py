"""Bench helper: run a callable under pytest-benchmark and remember its median for the ratio report."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

# group -> label -> median seconds; read by conftest.py at the end of the session.
MEDIANS: dict[str, dict[str, float]] = {}


def compare(
    benchmark: Any,
    group: str,
    label: str,
    fn: Callable[..., Any],
    *args: Any,
    rounds: int | None = None,
    **kwargs: Any,
) -> Any:
    """Benchmarks ``fn(*args, **kwargs)`` under ``group`` and remembers its median for the ratio report."""
    benchmark.group = group
    benchmark.extra_info["label"] = label
    if rounds is None:
        result = benchmark(fn, *args, **kwargs)
    else:
        result = benchmark.pedantic(
            fn, args=args, kwargs=kwargs, rounds=rounds, iterations=1, warmup_rounds=1
        )
    MEDIANS.setdefault(group, {})[label] = benchmark.stats.stats.median
    return result


# Free-form result lines (CPU per run, peak memory, ...) printed after the ratios.
NOTES: list[str] = []

# `make bench-ci` runs every bench in a short mode: smaller inputs, fewer rounds (ratios only, never absolute
# times, are compared with the committed references).
SHORT = os.environ.get("OSMOSIS_BENCH_SHORT") == "1"


def scaled(full: int, short: int) -> int:
    """``full`` normally, ``short`` under ``make bench-ci``."""
    return short if SHORT else full
