"""Bench helper: run a callable under pytest-benchmark and remember its median for the ratio report."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
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


# Run as `python -c _PEAK_PROBE fd argv...`: forks, execs argv in the child and writes the child's
# rusage to fd. The child's ru_maxrss is its own peak: a process keeps the highest RSS it had before exec,
# so a command spawned straight from pytest (over a GiB after the dataset benches) would report pytest's.
# Here the pre-exec image is this small probe's.
_PEAK_PROBE = """
import os, sys
os.set_inheritable(int(sys.argv[1]), False)
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
os.write(int(sys.argv[1]), f"{usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}".encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measured(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Runs a command to the end; returns wall seconds, CPU seconds and peak RSS (MiB) of that process.

    Its stderr goes to a file (a pipe read only at the end would stall a chatty command).
    """
    started = time.perf_counter()
    read_end, write_end = os.pipe()
    with tempfile.TemporaryFile() as stderr:
        probe = [sys.executable, "-c", _PEAK_PROBE, str(write_end), *argv]
        proc = subprocess.Popen(
            probe, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr, env=env, pass_fds=(write_end,)
        )
        os.close(write_end)
        with os.fdopen(read_end, "rb") as report:
            figures = report.read().split()
        proc.wait()
        wall = time.perf_counter() - started
        stderr.seek(0)
        assert proc.returncode == 0, stderr.read().decode(errors="replace")[-4000:]
    cpu, peak_kib = float(figures[0]), int(figures[1])
    return {"wall": wall, "cpu": cpu, "rss_mib": peak_kib / 1024}
