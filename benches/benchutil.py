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


# Run as `python -c _PEAK_PROBE fd cpus argv...`: forks, execs argv in the child and writes the child's
# rusage to fd. The child's ru_maxrss is its own peak: a process keeps the highest RSS it had before exec,
# so a command spawned straight from pytest (over a GiB after the dataset benches) would report pytest's.
# Here the pre-exec image is this small probe's. cpus ("all" or comma-separated core numbers) is the
# child's CPU affinity, set before the fork so that every thread and process of the command inherits it.
_PEAK_PROBE = """
import os, sys
os.set_inheritable(int(sys.argv[1]), False)
if sys.argv[2] != "all":
    os.sched_setaffinity(0, {int(cpu) for cpu in sys.argv[2].split(",")})
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[3], sys.argv[3:])
_, status, usage = os.wait4(pid, 0)
os.write(int(sys.argv[1]), f"{usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}".encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""

# The core that client/server benches share (see pin_to_one_core): the lowest this process may use.
ONE_CORE = frozenset({min(os.sched_getaffinity(0))})


def pin_to_one_core(pid: int) -> None:
    """Pins every thread of a running process to ``ONE_CORE`` (threads it starts later inherit it).

    A client and a server on two cores wake each other once per reply when the machine is quiet, and
    find many replies per wakeup when it is loaded, so a client's CPU per request falls with the load
    (an asyncio loop's by a quarter to a third). On one shared core a client runs until it waits, and
    the server then answers what was sent, whatever else runs: the raw floor measured 0.044-0.055 CPU-ms
    per request from load average 6 to 19 (README "Benchmarks").
    """
    for thread in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(thread), ONE_CORE)


def measured(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, one_core: bool = False
) -> dict[str, float]:
    """Runs a command to the end; returns wall seconds, CPU seconds and peak RSS (MiB) of that process.

    Its stderr goes to a file (a pipe read only at the end would stall a chatty command). ``one_core``
    runs it on ``ONE_CORE``, all its threads and children too.
    """
    started = time.perf_counter()
    read_end, write_end = os.pipe()
    with tempfile.TemporaryFile() as stderr:
        cpus = ",".join(map(str, sorted(ONE_CORE))) if one_core else "all"
        probe = [sys.executable, "-c", _PEAK_PROBE, str(write_end), cpus, *argv]
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
