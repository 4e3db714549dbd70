"""compare's paired difference intervals stay inside what a difference can be (issue #28, finding 6).

B - A of statistics over rows whose values lie in [0, 1] (pass rates, scores in [0, 1]) lies in [-1, 1]; a
Student t interval on a few rows reaches past that ([-0.77, +2.10] for 3 rows). The interval is scipy's
paired t interval (`ttest_rel`) kept inside [-1, 1] by the result model's one bounds helper, never
wider than that, and the verdict is never surer than the data: the cut moves no bound across 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from osmosis_ai.results import compare_results
from osmosis_ai.stats import Aggregator, compare

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _log(path: Path, rows: list[list[float]]) -> Path:
    """An eval log of one function `acc`, every row's attempts scored (n = the attempts of a row)."""
    n = max(len(runs) for runs in rows)
    lines: list[dict[str, object]] = [
        {"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"], "n_runs": n}}
    ]
    for r, runs in enumerate(rows):
        for i, score in enumerate(runs):
            lines.append(
                {
                    "row_key": f"k{r}",
                    "row_index": r,
                    "run_index": i,
                    "success": True,
                    "scores": {"acc": score},
                }
            )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _scipy_paired(b: np.ndarray, a: np.ndarray, span: tuple[float, float] | None) -> tuple[float, float]:
    """scipy's paired t interval of b - a, cut to ``span`` (None: not cut)."""
    low, high = sps.ttest_rel(b, a).confidence_interval(0.95)
    return (low, high) if span is None else (max(low, span[0]), min(high, span[1]))


def test_a_paired_t_interval_on_three_rows_stays_inside_minus_one_one(tmp_path: Path) -> None:
    # B passes two rows A fails, both fail the third: d = [1, 1, 0], t(2) gave [-0.77, +2.10].
    a = _log(tmp_path / "a.jsonl", [[0.0], [0.0], [0.0]])
    b = _log(tmp_path / "b.jsonl", [[1.0], [1.0], [0.0]])
    result = compare_results(a, b)
    for name in ("mean", "pass_at_1", "pass_hat_1"):
        d = result.differences[name]
        assert (d.low, d.high) == (pytest.approx(-0.7675509, abs=1e-6), 1.0), name
        assert d.verdict == "no_clear_difference"
    assert "includes 0" in result.verdict.reason and "+1.0000]" in result.verdict.reason


def test_scores_outside_0_1_are_not_cut(tmp_path: Path) -> None:
    a = _log(tmp_path / "a.jsonl", [[0.0], [0.0], [0.0]])
    b = _log(tmp_path / "b.jsonl", [[5.0], [5.0], [0.0]])
    d = compare_results(a, b).differences["mean"]
    low, high = _scipy_paired(np.array([5.0, 5.0, 0.0]), np.zeros(3), None)
    assert (d.low, d.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert d.high > 10  # the scores allow it


SCORES = st.sampled_from([0.0, 0.25, 0.5, 1.0])


@st.composite
def paired_rows(draw: st.DrawFn) -> tuple[list[list[float]], list[list[float]]]:
    """Two runs over the same 2-12 rows, each row with n (1-3) attempts scored in [0, 1]."""
    rows, n = draw(st.integers(2, 12)), draw(st.integers(1, 3))
    side = st.lists(st.lists(SCORES, min_size=n, max_size=n), min_size=rows, max_size=rows)
    return draw(side), draw(side)


@given(paired_rows())
@SETTINGS
def test_compare_intervals_are_scipys_kept_inside_minus_one_one(
    tmp_path: Path, pair: tuple[list[list[float]], list[list[float]]]
) -> None:
    rows_a, rows_b = pair
    result = compare_results(_log(tmp_path / "a.jsonl", rows_a), _log(tmp_path / "b.jsonl", rows_b))
    per_row = {
        "mean": (np.mean(rows_a, axis=1), np.mean(rows_b, axis=1)),
        "pass_at_1": (np.mean(np.equal(rows_a, 1.0), axis=1), np.mean(np.equal(rows_b, 1.0), axis=1)),
    }
    for name, (a, b) in per_row.items():
        d = result.differences[name]
        assert d.estimate == pytest.approx((b - a).mean(), abs=1e-12)
        if d.low is None:
            assert d.note and d.verdict == "no_clear_difference" and np.ptp(b - a) <= 1e-9
            continue
        low, high = _scipy_paired(b, a, (-1.0, 1.0))
        assert (d.low, d.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9)), name
    for name, d in result.differences.items():
        if d.low is None or d.high is None:
            continue
        assert -1.0 <= d.low <= d.estimate + 1e-12 and d.estimate - 1e-12 <= d.high <= 1.0, name
        if d.verdict != "no_clear_difference":
            # Never surer than the data: scipy's own (uncut) interval excludes 0 on the same side.
            assert d.p_holm is not None and d.p_holm < 0.05 and result.mcnemar_p < 0.05
            assert (d.low > 0) == (d.verdict == "b_better") and (d.high < 0) == (d.verdict == "a_better")


def _aggregator(rows: list[list[float]]) -> Aggregator:
    agg = Aggregator()
    for i, runs in enumerate(rows):
        agg.push(runs, row_index=i)
    return agg


def test_the_aggregators_normal_intervals_stay_inside_what_the_statistic_can_be() -> None:
    # Before: pass@1 of [1, 1, 1, 0] with "normal" was [-0.046, 1.156] (a cut bound widened from z to t).
    iv = _aggregator([[1.0], [1.0], [1.0], [0.0]]).intervals(method="normal")["pass_at_1"]
    low, high = sps.t.interval(0.95, 3, loc=0.75, scale=sps.sem([1.0, 1.0, 1.0, 0.0]))
    assert (iv.low, iv.high) == (pytest.approx(max(low, 0.0), abs=1e-9), pytest.approx(min(high, 1.0)))
    # A paired difference of pass rates: before, [-0.77, +2.10].
    result = compare(_aggregator([[1.0], [1.0], [0.0]]), _aggregator([[0.0], [0.0], [0.0]]), method="normal")
    d = result.differences["pass_at_1"]
    low, high = _scipy_paired(np.array([1.0, 1.0, 0.0]), np.zeros(3), (-1.0, 1.0))
    assert (d.low, d.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert not result.excludes_zero("pass_at_1")


@given(paired_rows())
@SETTINGS
def test_the_aggregators_paired_normal_intervals_are_scipys_kept_inside(
    pair: tuple[list[list[float]], list[list[float]]],
) -> None:
    rows_a, rows_b = pair
    result = compare(_aggregator(rows_b), _aggregator(rows_a), ks=[1], method="normal")
    d = result.differences["mean"]
    a, b = np.mean(rows_a, axis=1), np.mean(rows_b, axis=1)
    if d.low is None:
        assert np.ptp(b - a) <= 1e-9
        return
    low, high = _scipy_paired(b, a, (-1.0, 1.0))
    assert (d.low, d.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
