"""Bench helper: run a callable under pytest-benchmark and remember its median for the ratio report."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
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


def _watch_peak(pid: int, peak: list[int], done: threading.Event) -> None:
    """Keeps the child's VmHWM (KiB) in ``peak[0]`` until it exits.

    Its own high-water mark, read from /proc: ``ru_maxrss`` from ``wait4`` would include the RSS this
    (pytest) process had when it forked the child, which after the dataset benches is over a GiB.
    """
    status = Path(f"/proc/{pid}/status")
    while not done.is_set():
        try:
            text = status.read_text()
        except OSError:
            return
        for line in text.splitlines():
            if line.startswith("VmHWM:"):
                peak[0] = max(peak[0], int(line.split()[1]))
        done.wait(0.02)


def measured(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Runs a command to the end; returns wall seconds, CPU seconds and peak RSS (MiB) of that process.

    Its stderr goes to a file (a pipe read only at the end would stall a chatty command).
    """
    started = time.perf_counter()
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        peak, done = [0], threading.Event()
        watcher = threading.Thread(target=_watch_peak, args=(proc.pid, peak, done), daemon=True)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        done.set()
        watcher.join()
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        assert proc.returncode == 0, stderr.read().decode(errors="replace")[-4000:]
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": peak[0] / 1024}
