"""Summarising a results log: the Rust reader vs the previous path (orjson lines + an aggregator per row in
Python), 100k rows x n = 4 with two eval functions, in one run. ``make bench`` prints the ratio."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchutil import compare, scaled
from osmosis_ai.results import read_results
from osmosis_ai.stats import Aggregator, summarize_results_by_model

ROWS = scaled(100_000, 20_000)
N = 4
NAMES = ("m:acc", "m:fmt")
GROUP = f"summary of a results log, {ROWS:,} rows x n={N}, 2 eval functions"


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("results") / "log.jsonl"
    with path.open("wb") as out:
        out.write(orjson.dumps({"format": "osmosis-eval-log/1", "config": {"eval_fns": list(NAMES)}}) + b"\n")
        for row in range(ROWS):
            for run in range(N):
                record: dict[str, Any] = {
                    "row_key": f"k{row}",
                    "row_index": row,
                    "run_index": run,
                    "model_tag": "",
                    "success": (row + run) % 17 != 0,
                    "scores": {"m:acc": float((row * 7 + run) % 3 == 0), "m:fmt": ((row + run) % 10) / 10},
                    "error": None,
                    "tokens": 60,
                    "duration_ms": 1.5,
                }
                out.write(orjson.dumps(record) + b"\n")
    return path


def previous_path(path: Path) -> dict[str, dict[str, float]]:
    """The summary as eval computed it before: every line parsed in Python, rows grouped in a dict, then
    one aggregator push per row and function."""
    aggregators = {name: Aggregator(n_runs=N, nonfinite="fail") for name in NAMES}
    pending: dict[int, dict[int, dict[str, Any]]] = defaultdict(dict)
    with path.open("rb") as lines:
        next(lines)
        for raw in lines:
            record = orjson.loads(raw)
            runs = pending[record["row_index"]]
            runs[record["run_index"]] = record
            if len(runs) == N:
                done = [run for _, run in sorted(pending.pop(record["row_index"]).items())]
                for name, agg in aggregators.items():
                    agg.push([r["scores"].get(name) if r["success"] else None for r in done])
    return {name: agg.finish().to_established_dict() for name, agg in aggregators.items()}


def ours(path: Path) -> dict[str, dict[str, float]]:
    models = summarize_results_by_model(path, n_runs=N, failed="zero", nonfinite="fail").models
    return {name: s.to_established_dict() for name, s in models["primary"].summaries.items()}


def test_previous_path(benchmark, log: Path) -> None:  # type: ignore[no-untyped-def]
    compare(benchmark, GROUP, "baseline", previous_path, log, rounds=3)


def test_rust_reader(benchmark, log: Path) -> None:  # type: ignore[no-untyped-def]
    got = compare(benchmark, GROUP, "summarize_results (Rust)", ours, log, rounds=5)
    expected = previous_path(log)
    assert list(got) == list(expected)
    for name, summary in got.items():
        assert summary == pytest.approx(expected[name], rel=1e-12)


def result_model(path: Path) -> dict[str, dict[str, float]]:
    """The result model (counts, row categories, observed-only pass@k, intervals, warnings) of the log."""
    functions = read_results(path, n_runs=N).model().functions
    return {
        f.name: {"mean": f.mean or 0.0, **{f"pass_at_{k}": v for k, v in f.pass_at_k.items()}}
        for f in functions
    }


def test_result_model(benchmark, log: Path) -> None:  # type: ignore[no-untyped-def]
    got = compare(benchmark, GROUP, "read_results (Rust result model)", result_model, log, rounds=5)
    expected = ours(log)
    for name, summary in got.items():
        for key, value in summary.items():
            if key in expected[name]:
                assert value == pytest.approx(expected[name][key], rel=1e-12)
