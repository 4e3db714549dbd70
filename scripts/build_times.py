"""Measure the README's build times: a cold `make demo` and a `make test` on a fresh clone, with the load.

    python3 scripts/build_times.py [--runs N] [--what demo,test] [--busy K] [--out FILE]

Each run clones this checkout's HEAD into a new temporary directory (no `.venv`, an empty cargo target:
cold, as a new user's first command), runs `make demo`, then (with ``test`` in ``--what``) `make test` in
the same clone, and records for each step its wall time, the CPU time of everything it ran (user and
system, from the children's resource usage), and the 1-minute load average sampled every 5 s while it ran
(its least and greatest), with the date, the commit and the core count. ``--busy K`` runs K busy CPU loops
beside the steps (the suite's "under load" condition). Caches outside the clone (uv's, cargo's registry)
are left as they are: the summary says so.

Prints one line per step and, at the end, the ranges over the runs as the README states them; with
``--out`` the records are also written as JSON. Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_S = 5.0


def _load() -> float:
    return os.getloadavg()[0]


class _LoadSampler:
    """The 1-minute load average every few seconds while a step runs."""

    def __init__(self) -> None:
        self.samples = [_load()]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.samples.append(_load())

    def __enter__(self) -> _LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(_load())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _step(name: str, command: list[str], cwd: Path, log: Path) -> dict[str, Any]:
    """Runs one step (its output to ``log``) and returns its figures; a failed step stops the run."""
    cpu_before, started = _children_cpu(), time.monotonic()
    with _LoadSampler() as load, log.open("a") as out:
        out.write(f"\n$ {' '.join(command)}\n")
        out.flush()
        code = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT).returncode
    record = {
        "step": name,
        "wall_s": round(time.monotonic() - started, 1),
        "cpu_s": round(_children_cpu() - cpu_before, 1),
        "load_min": round(min(load.samples), 1),
        "load_max": round(max(load.samples), 1),
        "exit": code,
    }
    print(
        f"  {name}: {_clock(record['wall_s'])} wall, {record['cpu_s']:.0f} CPU-s, "
        f"load average {record['load_min']}-{record['load_max']}, exit {code}",
        flush=True,
    )
    if code != 0:
        raise SystemExit(f"{name} failed (exit {code}); its output is in {log}")
    return record


def _clock(seconds: float) -> str:
    total = round(seconds)
    return f"{total // 60} min {total % 60:02d} s" if total >= 60 else f"{total} s"


def _busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen(["bash", "-c", "while :; do :; done"]) for _ in range(count)]


def _one_run(what: list[str], log: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="osmosis-build-times-") as tmp:
        clone = Path(tmp) / "osmosis-ai"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
        records = [_step("cold make demo", ["make", "demo"], clone, log)]
        if "test" in what:
            records.append(_step("make test", ["make", "test"], clone, log))
        return records


def _ranges(records: list[dict[str, Any]]) -> None:
    print("\nRanges over the runs (as the README states them):")
    for name in dict.fromkeys(str(r["step"]) for r in records):
        mine = [r for r in records if r["step"] == name]
        walls = [r["wall_s"] for r in mine]
        cpus = [r["cpu_s"] for r in mine]
        low = min(r["load_min"] for r in mine)
        high = max(r["load_max"] for r in mine)
        print(
            f"  {name}: {_clock(min(walls))} to {_clock(max(walls))} wall, {min(cpus):.0f}-{max(cpus):.0f} "
            f"CPU-s, at load average {low}-{high} ({len(mine)} run(s), {os.cpu_count()} cores)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="Fresh clones to measure (default 1).")
    parser.add_argument("--what", default="demo,test", help="demo, or demo,test (default).")
    parser.add_argument("--busy", type=int, default=0, help="Busy CPU loops to run beside the steps.")
    parser.add_argument("--out", type=Path, default=None, help="Also write the records here (JSON).")
    args = parser.parse_args(argv)
    what = [w.strip() for w in args.what.split(",") if w.strip()]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    log = Path(tempfile.gettempdir()) / f"osmosis-build-times-{os.getpid()}.log"
    print(
        f"Measuring {commit} on {os.cpu_count()} cores, {args.runs} run(s), {args.busy} busy loop(s); log {log}"
    )
    busy = _busy_loops(args.busy)
    records: list[dict[str, Any]] = []
    try:
        for run in range(1, args.runs + 1):
            stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            print(f"run {run} ({stamp}):", flush=True)
            for record in _one_run(what, log):
                records.append(
                    {"run": run, "started": stamp, "commit": commit, "busy_loops": args.busy, **record}
                )
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    _ranges(records)
    print("Caches outside the clone (uv's, cargo's registry) were used as they were.")
    if args.out is not None:
        args.out.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
