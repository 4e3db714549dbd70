"""A report page for a 100k-row x n=4 results log against reading that log once (``load_results``), in one
run; the page must stay under 5 MB. ``make bench`` prints the ratio (target: under 3x)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from benchutil import NOTES, compare
from osmosis_ai import report
from osmosis_ai.stats import load_results

ROWS = 100_000
N = 4
GROUP = f"report of a results log, {ROWS:,} rows x n={N}"


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "log.jsonl"
    header = {"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["m:acc", "m:fmt"]}}
    with path.open("wb") as out:
        out.write(orjson.dumps(header) + b"\n")
        for row in range(ROWS):
            for run in range(N):
                ok = (row + run) % 17 != 0
                record: dict[str, Any] = {
                    "row_key": f"k{row}",
                    "row_index": row,
                    "run_index": run,
                    "model_tag": "",
                    "success": ok,
                    "scores": {"m:acc": float((row * 7 + run) % 3 == 0), "m:fmt": ((row + run) % 10) / 10}
                    if ok
                    else {},
                    "error": None if ok else "Agent returned status ERROR",
                    "tokens": 60 + (row * 13 + run) % 200,
                    "duration_ms": 1.5 + (row * 31 + run) % 900,
                    "messages": [
                        {"role": "user", "content": f"question {row}"},
                        {"role": "assistant", "content": f"answer {row * run}"},
                    ],
                }
                out.write(orjson.dumps(record) + b"\n")
    return path


def read_once(path: Path) -> int:
    frame, _ = load_results(path)
    return frame.height


def write_report(path: Path) -> int:
    return report(path, output=path.with_suffix(".html")).html_bytes


def test_read_the_log_once(benchmark, log: Path) -> None:  # type: ignore[no-untyped-def]
    assert compare(benchmark, GROUP, "baseline", read_once, log, rounds=3) == ROWS * N


def test_write_the_report(benchmark, log: Path) -> None:  # type: ignore[no-untyped-def]
    size = compare(benchmark, GROUP, "osmosis report (HTML written)", write_report, log, rounds=3)
    NOTES.append(f"{GROUP}: HTML {size / 1e6:.2f} MB (limit 5 MB)")
    assert size < 5_000_000
