"""`osmosis report` at 10k and 100k runs: time (ratio to reading the log once with the Rust statistics, in
the same run) and peak RSS of the whole command, each in its own process. The 100k-run log is 51 MB (as
in issue #30), and its report must stay under 200 MB peak RSS; its page holds every run.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchutil import NOTES, compare, measured, scaled

N = 4
SIZES = {"10k": scaled(10_000, 2_000), "100k": scaled(100_000, 8_000)}
LIMIT_MB = 200
WORDS = ("the", "answer", "is", "because", "we", "add", "numbers", "carefully", "so", "total", "42", "17")


def write_log(path: Path, runs: int) -> Path:
    """A results log of ``runs`` runs (n=4), about 510 bytes a run: 100k runs make a 51 MB file."""
    rng = random.Random(0)
    header = {"format": "osmosis-results/1", "kind": "eval",
              "config": {"eval_fns": ["m:acc", "m:fmt"], "n_runs": N, "model": "m"}}  # fmt: skip
    with path.open("wb") as out:
        out.write(orjson.dumps(header) + b"\n")
        for row in range(runs // N):
            for run in range(N):
                ok = (row + run) % 17 != 0
                answer = " ".join(rng.choice(WORDS) for _ in range(44))
                record: dict[str, Any] = {
                    "row_key": f"k{row}", "row_index": row, "run_index": run, "model_tag": "", "success": ok,
                    "scores": {"m:acc": float((row * 7 + run) % 3 == 0), "m:fmt": ((row + run) % 10) / 10} if ok else {},
                    "error": None if ok else "Agent returned status ERROR", "tokens": 60 + (row * 13 + run) % 200,
                    "duration_ms": 1.5 + (row * 31 + run) % 900,
                    "final_messages": [{"role": "user", "content": f"question {row}: what is {row} + {run}?"},
                                       {"role": "assistant", "content": answer}],
                }  # fmt: skip
                out.write(orjson.dumps(record) + b"\n")
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("report")
    return {name: write_log(folder / f"log-{name}.jsonl", runs) for name, runs in SIZES.items()}


CPU: dict[str, list[float]] = {}


def _peak_mb(command: list[str], label: str = "") -> float:
    """Runs ``command`` to its end; its own peak RSS in MB. Its CPU seconds are kept under ``label`` (on a
    shared machine they vary less than wall time)."""
    figures = measured(command, Path.cwd())
    CPU.setdefault(label, []).append(figures["cpu"])
    return figures["rss_mib"]


def _cpu(label: str) -> float:
    values = sorted(CPU[label])
    return values[len(values) // 2]


def _report(log: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "osmosis_ai.cli.main",
        "report",
        str(log),
        "-o",
        str(log.with_suffix(".html")),
    ]


def _read_once(log: Path) -> list[str]:
    code = f"from osmosis_ai.stats import summarize_results_by_model as s; s({str(log)!r}, confidence=0.95)"
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("size", list(SIZES))
def test_read_the_log_once(benchmark, logs: dict[str, Path], size: str) -> None:  # type: ignore[no-untyped-def]
    label, group = f"read {size}", f"report, {SIZES[size]:,} runs"
    peak = compare(benchmark, group, "baseline", _peak_mb, _read_once(logs[size]), label, rounds=3)
    NOTES.append(f"read once, {SIZES[size]:,} runs: peak RSS {peak:.0f} MB, CPU {_cpu(label):.2f} s (median)")


@pytest.mark.parametrize("size", list(SIZES))
def test_write_the_report(benchmark, logs: dict[str, Path], size: str) -> None:  # type: ignore[no-untyped-def]
    log = logs[size]
    label, group = f"report {size}", f"report, {SIZES[size]:,} runs"
    peak = compare(benchmark, group, "osmosis report", _peak_mb, _report(log), label, rounds=3)
    page = log.with_suffix(".html").stat().st_size
    NOTES.append(
        f"osmosis report, {SIZES[size]:,} runs ({log.stat().st_size / 1e6:.0f} MB log): peak RSS {peak:.0f} MB "
        f"(limit {LIMIT_MB}), CPU {_cpu(label):.2f} s (median), page {page / 1e6:.1f} MB"
    )
    assert peak < LIMIT_MB
