"""Measure the README's build times: a cold `make demo` and a `make test` on a fresh clone, with the load.

    python3 scripts/build_times.py [--runs N] [--what demo,test] [--busy K]   # measure, keep, print the rows
    python3 scripts/build_times.py --rows                                     # only print the rows

Each run clones this checkout's HEAD into a new temporary directory (no `.venv`, an empty cargo target:
cold, as a new user's first command), runs `make demo`, then (with ``test`` in ``--what``) `make test` in
the same clone, and records for each step its wall time, the CPU time of everything it ran (user and
system, from the children's resource usage), and the 1-minute load average sampled every 5 s while it ran
(its least and greatest), with the date, the commit and the core count. ``--busy K`` runs K busy CPU loops
beside the steps (the suite's "under load" condition). Caches outside the clone (uv's, cargo's registry)
are left as they are: the summary says so.

Prints one line per step. Every measurement is appended to ``scripts/build_times.json`` (``--records``),
and the README's "Build times" table rows are printed from all of them: per step the range of wall and CPU
time over the runs and the range of the load they ran at. The README's rows are that output, pasted.
A failed step is kept with its exit code but left out of the ranges (a failure is not a build time).
Standard library only.
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
RECORDS = Path(__file__).with_name("build_times.json")
SAMPLE_S = 5.0
STEPS = {
    "cold make demo": "cold `make demo` (fresh clone: no `.venv`, empty cargo target)",
    "make test": "`make test` right after it (cargo test, then pytest)",
}


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
        print(f"  {name} failed: its output is in {log}", flush=True)
    return record


def _clock(seconds: float) -> str:
    total = round(seconds)
    return f"{total // 60} min {total % 60:02d} s" if total >= 60 else f"{total} s"


def _size_mb(path: Path) -> int:
    """What ``du -sm`` says: the disk a directory takes, in MiB (hard links counted once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for entry in path.rglob("*"):
        info = entry.lstat()
        if (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            total += info.st_blocks * 512
    return round(total / 2**20)


def _busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen(["bash", "-c", "while :; do :; done"]) for _ in range(count)]


def _one_run(what: list[str], log: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="osmosis-build-times-") as tmp:
        clone = Path(tmp) / "osmosis-ai"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
        records = [_step("cold make demo", ["make", "demo"], clone, log)]
        records[0]["venv_mb"] = _size_mb(clone / ".venv")
        if "test" in what and records[0]["exit"] == 0:
            records.append(_step("make test", ["make", "test"], clone, log))
        return records


def _span(low: float, high: float, unit: str = "") -> str:
    return f"{low}{unit}" if low == high else f"{low}{unit} to {high}{unit}"


def readme_rows(records: list[dict[str, Any]]) -> list[str]:
    """The README's table rows: per step, the ranges over every successful measurement in ``records``."""
    rows = []
    for name, label in STEPS.items():
        mine = [r for r in records if r["step"] == name and r["exit"] == 0]
        if not mine:
            continue
        walls = sorted(r["wall_s"] for r in mine)
        cpus = sorted(r["cpu_s"] for r in mine)
        busy = sorted({r["busy_loops"] for r in mine})
        days = sorted({r["started"][:10] for r in mine})
        rows.append(
            f"| {label} | {_span(_clock(walls[0]), _clock(walls[-1]))} wall, "
            f"{_span(round(cpus[0]), round(cpus[-1]))} CPU-s | "
            f"{_span(min(r['load_min'] for r in mine), max(r['load_max'] for r in mine))} "
            f"({'/'.join(map(str, busy))} busy loops beside it) | "
            f"{len(mine)} run(s), {', '.join(days)}, commits {', '.join(sorted({r['commit'] for r in mine}))} |"
        )
    sizes = sorted(r["venv_mb"] for r in records if r.get("venv_mb"))
    if sizes:
        rows.append(
            f"| `.venv` after a cold `make demo` | {_span(sizes[0], sizes[-1], ' MiB')} | | {len(sizes)} run(s) |"
        )
    return rows


def _read_records(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="Fresh clones to measure (default 1).")
    parser.add_argument("--what", default="demo,test", help="demo, or demo,test (default).")
    parser.add_argument("--busy", type=int, default=0, help="Busy CPU loops to run beside the steps.")
    parser.add_argument(
        "--records", type=Path, default=RECORDS, help=f"Every measurement, appended to (default {RECORDS})."
    )
    parser.add_argument("--rows", action="store_true", help="Measure nothing: print the README rows.")
    args = parser.parse_args(argv)
    records = _read_records(args.records)
    failed = False
    if not args.rows:
        taken = _measure(args)
        failed = any(r["exit"] != 0 for r in taken)
        records += taken
        args.records.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    print(f"\nThe README's rows (from {len(records)} record(s) in {args.records}):")
    print("| what | wall and CPU time | load average (1 min) while it ran | runs |\n|---|---|---|---|")
    for row in readme_rows(records):
        print(row)
    print("Caches outside the clone (uv's, cargo's registry) were used as they were.")
    return 1 if failed else 0


def _measure(args: argparse.Namespace) -> list[dict[str, Any]]:
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
                    {"started": stamp, "commit": commit, "busy_loops": args.busy, "cores": os.cpu_count(),
                     **record}
                )  # fmt: skip
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    return records


if __name__ == "__main__":
    sys.exit(main())
