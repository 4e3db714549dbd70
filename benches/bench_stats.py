"""pass@k over 1M rows x n = 10: our vectorised call vs numpy vs a pure-Python loop, in one run.

Run with ``make bench`` (release build). The ratios are printed after the module's benches:
``numpy / ours`` (target >= 1) and ``python loop / ours`` (target >= 50).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchutil import scaled
from osmosis_ai import _core
from osmosis_ai.stats import Aggregator, pass_at_k_many

if _core.build_profile() != "release":
    pytest.exit("benches measure release builds only: run `make bench` (or `make build-release` first)", 2)

ROWS = scaled(1_000_000, 200_000)
N = 10
KS = (1, 3, 5, 10)
RESULTS: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def report_ratios(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Prints the ratios once the module's benches ran (capture off, so `make bench` shows them)."""
    yield
    if {"ours", "numpy", "python loop"} - set(RESULTS):
        return
    ours = RESULTS["ours"]
    lines = [
        f"pass@k, {ROWS:,} rows x n={N}, k in {KS} (best round):",
        f"  ours        {ours * 1e3:9.1f} ms",
        f"  numpy       {RESULTS['numpy'] * 1e3:9.1f} ms   numpy / ours       = "
        f"{RESULTS['numpy'] / ours:6.1f}x",
        f"  python loop {RESULTS['python loop'] * 1e3:9.1f} ms   python loop / ours = "
        f"{RESULTS['python loop'] / ours:6.1f}x",
    ]
    if {"summary ours", "summary python"} <= set(RESULTS):
        lines += [
            f"summary of 200,000 rows x n={N} (best round):",
            f"  ours        {RESULTS['summary ours'] * 1e3:9.1f} ms",
            f"  python      {RESULTS['summary python'] * 1e3:9.1f} ms   python / ours      = "
            f"{RESULTS['summary python'] / RESULTS['summary ours']:6.1f}x",
        ]
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print("\n" + "\n".join(lines))


@pytest.fixture(scope="module")
def counts() -> np.ndarray:
    return np.random.default_rng(0).integers(0, N + 1, size=ROWS, dtype=np.int64)


def numpy_pass_at_k(n: int, c: np.ndarray, k: int) -> float:
    """The same estimator in numpy: 1 - prod_{i<k} (n-c-i)/(n-i), vectorised over rows."""
    ratio = np.ones(c.shape[0])
    for i in range(k):
        ratio *= np.clip(n - c - i, 0, None) / (n - i)
    return float(np.mean(1.0 - ratio))


def python_pass_at_k(n: int, c: int, k: int) -> float:
    """One row as the established package computes it (shortcuts, then binomials)."""
    if c == 0:
        return 0.0
    if n <= k or c >= n or n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def python_loop(n: int, c: list[int], k: int) -> float:
    return sum(python_pass_at_k(n, ci, k) for ci in c) / len(c)


def _record(name: str, benchmark: pytest.FixtureRequest) -> None:
    RESULTS[name] = benchmark.stats.stats.min  # type: ignore[attr-defined]


@pytest.mark.benchmark(group="pass@k 1M rows x n=10, k in 1,3,5,10")
def test_ours(benchmark, counts: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    means = benchmark.pedantic(lambda: [pass_at_k_many(N, counts, k).mean for k in KS], rounds=10)
    _record("ours", benchmark)
    for k, mean in zip(KS, means, strict=True):
        assert mean == pytest.approx(numpy_pass_at_k(N, counts, k), rel=1e-12)


@pytest.mark.benchmark(group="pass@k 1M rows x n=10, k in 1,3,5,10")
def test_numpy(benchmark, counts: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    benchmark.pedantic(lambda: [numpy_pass_at_k(N, counts, k) for k in KS], rounds=5)
    _record("numpy", benchmark)


@pytest.mark.benchmark(group="pass@k 1M rows x n=10, k in 1,3,5,10")
def test_python_loop(benchmark, counts: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    as_list = counts.tolist()
    means = benchmark.pedantic(lambda: [python_loop(N, as_list, k) for k in KS], rounds=1)
    _record("python loop", benchmark)
    assert means[1] == pytest.approx(numpy_pass_at_k(N, counts, 3), rel=1e-9)


SUMMARY_GROUP = "summary (mean, std, min, max, pass@1,3,5,10) of 200k rows x n=10"


@pytest.fixture(scope="module")
def scores() -> np.ndarray:
    return np.random.default_rng(1).random((scaled(200_000, 50_000), N))


def python_summary(rows: list[list[float]], threshold: float) -> dict[str, float]:
    """The established eval's summary in plain Python: aggregates over all runs, pass@k per row."""
    flat = [x for row in rows for x in row]
    mean = sum(flat) / len(flat)
    out = {
        "mean": mean,
        "std": math.sqrt(sum((x - mean) ** 2 for x in flat) / len(flat)),
        "min": min(flat),
        "max": max(flat),
    }
    for k in KS:
        per_row = [python_pass_at_k(len(row), sum(x >= threshold for x in row), k) for row in rows]
        out[f"pass_at_{k}"] = sum(per_row) / len(per_row)
    return out


@pytest.mark.benchmark(group=SUMMARY_GROUP)
def test_summary_ours(benchmark, scores: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    def run() -> dict[str, float]:
        agg = Aggregator(pass_threshold=0.5)
        agg.push_rows(scores)
        return agg.finish().to_established_dict()

    got = benchmark.pedantic(run, rounds=5)
    _record("summary ours", benchmark)
    assert got == pytest.approx(python_summary(scores.tolist(), 0.5), rel=1e-9)


@pytest.mark.benchmark(group=SUMMARY_GROUP)
def test_summary_python(benchmark, scores: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    rows = scores.tolist()
    # Three rounds: a single one of the baseline made the ratio swing 2x between runs.
    benchmark.pedantic(lambda: python_summary(rows, 0.5), rounds=3)
    _record("summary python", benchmark)
