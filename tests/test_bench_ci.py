"""scripts/bench_ci.py's noise summary and tolerance rule, on fixed figures (no bench runs here)."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "bench_ci.py"
_spec = importlib.util.spec_from_file_location("bench_ci", SCRIPT)
assert _spec is not None and _spec.loader is not None
bench_ci = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_ci)

TEN = [1.0, 1.1, 0.9, 1.2, 1.0, 0.95, 1.05, 2.0, 1.0, 1.15]


def test_noise_summary_spread_and_median_of_three_range() -> None:
    summary = bench_ci.noise_summary(TEN, reference=1.0)
    assert summary["median"] == pytest.approx(1.025)
    assert (summary["min"], summary["max"], summary["max_over_min"]) == (
        0.9,
        2.0,
        pytest.approx(2.222, abs=1e-3),
    )
    assert summary["worst_slower_pct"] == pytest.approx(95.1)
    # A median of three can reach the second-highest run (1.2), never the outlier (2.0).
    assert summary["median_of_3_worst_slower_pct"] == pytest.approx(17.1)
    assert summary["median_of_3_worst_faster_pct"] == pytest.approx(7.3)


def test_tolerance_rule_spread_shift_margin_and_floor() -> None:
    # Spread only: 1.2 / 1.025 - 1 + 10 points = 27%, under the 30% default.
    assert bench_ci.suggested_tolerance(TEN, None) == bench_ci.DEFAULT_TOLERANCE
    # Against a lower reference the shift decides: 1.2 * 1.1 / 0.8 - 1 = 65%.
    assert bench_ci.suggested_tolerance(TEN, 0.8) == pytest.approx(0.65)
    # Rounded up to 5 points: 1.2 * 1.1 / 0.9 - 1 = 46.7% -> 50%.
    assert bench_ci.suggested_tolerance(TEN, 0.9) == pytest.approx(0.50)


def test_the_idle_profile_applies_only_while_the_load_stays_within_the_cores(monkeypatch) -> None:
    monkeypatch.setattr(bench_ci.os, "cpu_count", lambda: 2)
    reference = {
        "tolerance": 0.3,
        "tolerances": {"a": 1.5, "c": 0.9},
        "idle": {"ratios": {"a": 0.9, "b": 1.8}, "tolerances": {"b": 0.4}},
        "ratios": {"a": 1.2, "b": 2.0, "c": 3.0},
    }
    idle = bench_ci._profile(reference, [0.5, 1.9])
    assert idle == ("idle", {"a": 0.9, "b": 1.8, "c": 3.0}, 0.3, {"b": 0.4, "c": 0.9})
    loaded = bench_ci._profile(reference, [0.5, 2.1])
    assert loaded == ("loaded", {"a": 1.2, "b": 2.0, "c": 3.0}, 0.3, {"a": 1.5, "c": 0.9})
    assert bench_ci._profile({**reference, "idle": None}, [0.1])[0] == "loaded"


def test_a_lower_committed_tolerance_is_the_rules_floor() -> None:
    # Spread 1.2 / 1.025 - 1 + 10 points = 27.1%: a 25% floor (issue #33's) is not enough, 30% is.
    assert bench_ci.suggested_tolerance(TEN, None, floor=0.25) == pytest.approx(0.30)
    tight = [1.0, 1.02, 0.98, 1.01, 0.99]
    assert bench_ci.suggested_tolerance(tight, None, floor=0.25) == pytest.approx(0.25)


def _cpu_bench(**extra: float) -> dict:
    return {"extra_info": extra, "stats": {"min": 1.0}}


def test_only_judges_the_metrics_of_the_benches_that_ran() -> None:
    kinds = "bench_run_kinds.py::test_run_kind[eval]"
    index = {
        kinds: _cpu_bench(
            ours_marginal_cpu_ms=0.2, raw_floor_ms=0.05, **{"peak MiB 1000": 60.0, "peak MiB 10000": 66.0}
        )
    }
    ratios = bench_ci.ratios_from(index, only="bench_run_kinds and eval")
    assert ratios == {
        "eval, ~2 KB rows: CPU per item / raw floor": pytest.approx(4.0),
        "memory: eval peak RSS 10k rows / 1k rows": pytest.approx(1.1),
    }
    # Without --only every metric must have its figures: a bench renamed or skipped is an error.
    with pytest.raises(SystemExit, match="no figure for"):
        bench_ci.ratios_from(index)
    # A bench that ran without the figure a metric reads is an error with --only too.
    broken = {kinds: _cpu_bench(ours_marginal_cpu_ms=0.2)}
    with pytest.raises(SystemExit, match="no figure for 'eval, ~2 KB rows"):
        bench_ci.ratios_from(broken, only="bench_run_kinds")
    with pytest.raises(SystemExit, match="selects no bench"):
        bench_ci.ratios_from({}, only="nothing")
