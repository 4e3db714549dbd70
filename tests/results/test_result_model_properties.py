"""The result model's statistics and intervals against independent implementations (scipy, statsmodels,
numpy, scikit-learn), on random and edge inputs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from scipy.special import comb
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from osmosis_ai import _core
from osmosis_ai.results import compare_results, read_results
from osmosis_ai.stats import agreement, confidence_interval

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@given(st.floats(1e-9, 1 - 1e-9), st.floats(0.5, 1e4))
@example(0.5000000000000001, 1.0)  # the tail's usual form rounds to 1/2 below t = 1e-8: it gave 1e-8
@SETTINGS
def test_t_quantile_matches_scipy(p: float, df: float) -> None:
    assert _core.student_t_quantile(p, df) == pytest.approx(sps.t.ppf(p, df), rel=1e-9, abs=1e-9)


@given(
    st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
@SETTINGS
def test_wilson_matches_statsmodels(counts: tuple[int, int], level: float) -> None:
    count, n = counts
    z = sps.norm.ppf(0.5 + level / 2)
    low, high = _core.wilson_interval(count / n, float(n), z)
    ref_low, ref_high = proportion_confint(count, n, alpha=1 - level, method="wilson")
    assert (low, high) == (pytest.approx(ref_low, abs=1e-12), pytest.approx(ref_high, abs=1e-12))


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
@SETTINGS
def test_holm_matches_statsmodels(p_values: list[float]) -> None:
    _, reference, _, _ = multipletests(p_values, method="holm")
    assert _core.holm_adjust(p_values) == pytest.approx(list(reference), abs=1e-12)


@given(st.integers(0, 400), st.integers(0, 400))
@SETTINGS
def test_mcnemar_matches_statsmodels(b: int, c: int) -> None:
    reference = mcnemar([[0, b], [c, 0]], exact=True).pvalue
    assert _core.mcnemar_exact(b, c) == pytest.approx(min(1.0, reference), rel=1e-9, abs=1e-300)


@given(st.lists(st.integers(0, 1), min_size=1, max_size=200), st.sampled_from([0.9, 0.95]))
@SETTINGS
def test_wilson_confidence_interval_of_pass_fail_rows(values: list[int], level: float) -> None:
    iv = confidence_interval([float(v) for v in values], level=level)
    low, high = proportion_confint(sum(values), len(values), alpha=1 - level, method="wilson")
    assert iv.method == "wilson"
    assert (iv.low, iv.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


@given(
    st.one_of(
        st.lists(st.floats(-50, 50, allow_nan=False), min_size=2, max_size=60),
        st.lists(st.floats(0, 1), min_size=2, max_size=8),
    )
)
@SETTINGS
def test_t_confidence_interval_matches_scipy(values: list[float]) -> None:
    array = np.array(values)
    try:
        iv = confidence_interval(values, method="t")
    except ValueError as exc:
        # Rows without spread (to rounding) give no interval, never a point.
        assert "no spread" in str(exc) and np.ptp(array) <= 1e-9 * max(1.0, abs(array.mean()))
        return
    low, high = sps.t.interval(0.95, len(values) - 1, loc=array.mean(), scale=sps.sem(array))
    if array.min() >= 0 and array.max() <= 1:  # values in [0, 1]: so is their interval
        low, high = max(low, 0.0), min(high, 1.0)
    assert (iv.low, iv.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=3, max_size=40))
@SETTINGS
@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
def test_agreement_matches_scipy_and_scikit_learn(pairs: list[tuple[float, float]]) -> None:
    judge, gold = [p[0] for p in pairs], [p[1] for p in pairs]
    result = agreement(judge, gold, threshold=0.5)
    labels = ([j >= 0.5 for j in judge], [g >= 0.5 for g in gold])
    kappa = cohen_kappa_score(*labels) if len(set(labels[0]) | set(labels[1])) > 1 else None
    if result.kappa is not None and kappa is not None and math.isfinite(kappa):
        assert result.kappa == pytest.approx(kappa, abs=1e-12)
    rho = sps.spearmanr(judge, gold).statistic
    if result.spearman is not None and math.isfinite(rho):
        assert result.spearman == pytest.approx(rho, abs=1e-12)


# --- the model on random logs -----------------------------------------------------------------------

ROWS = st.lists(
    st.lists(
        st.one_of(st.none(), st.just("error"), st.sampled_from([0.0, 0.25, 0.5, 1.0])), min_size=1, max_size=5
    ),
    min_size=1,
    max_size=25,
)


def _write(path: Path, rows: list[list[object]], n: int) -> None:
    lines = [{"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"], "n_runs": n}}]
    for r, runs in enumerate(rows):
        for i, value in enumerate(runs[:n]):
            record: dict[str, object] = {"row_key": f"k{r}", "row_index": r, "run_index": i}
            if value == "error":
                record.update(success=False, scores={}, error="boom")
            else:
                record.update(success=True, scores={} if value is None else {"acc": value})
            lines.append(record)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _pass_at_k(n: int, c: int, k: int) -> float:
    return 1.0 - comb(n - c, k, exact=True) / comb(n, k, exact=True)


@given(ROWS, st.integers(1, 5))
@SETTINGS
def test_model_matches_numpy_and_exact_combinatorics(
    tmp_path: Path, rows: list[list[object]], n: int
) -> None:
    path = tmp_path / "log.jsonl"
    _write(path, rows, n)
    acc = read_results(path).model().function("acc")
    present = [runs[:n] for runs in rows]
    scores = [v for runs in present for v in runs if isinstance(v, float)]
    # "zero": errored and unscored runs are 0.0 in the aggregates, but with no real score there are none.
    zeros = [0.0 if not isinstance(v, float) else v for runs in present for v in runs]
    if scores:
        assert acc.mean == pytest.approx(np.mean(zeros), abs=1e-12)
        assert acc.std == pytest.approx(np.std(zeros), abs=1e-12)
        assert (acc.min, acc.max) == (min(zeros), max(zeros))
    else:
        assert (acc.mean, acc.std, acc.min, acc.max, acc.intervals) == (None, None, None, None, {})
    passes = [sum(v == 1.0 for v in runs) for runs in present]
    if not scores:  # nothing scored: no pass rate (n/a), not a 0
        assert (acc.pass_at_k, acc.pass_at_k_observed, acc.pass_rate) == ({}, {}, None)
        return
    for k in range(1, n + 1):
        padded = np.mean([_pass_at_k(n, c, k) for c in passes])
        assert acc.pass_at_k[k] == pytest.approx(padded, abs=1e-12)
        observed = [
            _pass_at_k(len(runs), c, k) for runs, c in zip(present, passes, strict=True) if len(runs) >= k
        ]
        assert acc.observed_rows[k] == len(observed)
        if observed:
            assert acc.pass_at_k_observed[k] == pytest.approx(np.mean(observed), abs=1e-12)
    runs = acc.runs
    assert runs.finished == sum(len(r) for r in present)
    assert runs.missing == len(rows) * n - runs.finished
    assert runs.scored + runs.unscored + runs.errored + runs.skipped == runs.finished
    assert runs.passed == sum(passes)
    tallies = acc.rows
    assert sum(vars(tallies).values()) == len(rows)
    assert tallies.incomplete == sum(len(r) < n for r in present)


@given(ROWS, st.integers(1, 5))
@SETTINGS
def test_model_intervals_match_statsmodels_and_scipy(
    tmp_path: Path, rows: list[list[object]], n: int
) -> None:
    path = tmp_path / "log.jsonl"
    _write(path, rows, n)
    acc = read_results(path).model().function("acc")
    if not acc.intervals:
        return
    rates = np.array([sum(v == 1.0 for v in runs[:n]) / n for runs in rows])
    wilson = acc.intervals["pass_at_1"]
    # Wilson with the rows' effective size: statsmodels' Wilson at that (fractional) size.
    low, high = proportion_confint(
        rates.mean() * wilson.effective_n, wilson.effective_n, alpha=0.05, method="wilson"
    )
    assert (wilson.low, wilson.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert len(rows) <= wilson.effective_n <= len(rows) * n
    mean = acc.intervals["mean"]
    if mean.low is None:
        assert mean.note
        return
    # The mean over rows: the ratio of score sums to runs with the linearised (row-clustered) error.
    values = [[v if isinstance(v, float) else 0.0 for v in runs[:n]] for runs in rows]
    _assert_mean_interval(mean, values)


def _assert_mean_interval(mean: Any, rows: list[list[float]]) -> None:
    """Wilson at the effective size when every score is 0 or 1, else Student t cut to [0, 1]."""
    sums = np.array([sum(runs) for runs in rows])
    counts = np.array([len(runs) for runs in rows], dtype=float)
    m = sums.sum() / counts.sum()
    r = len(rows)
    se2 = r / (r - 1) * ((sums - m * counts) ** 2).sum() / counts.sum() ** 2
    assert 0.0 <= mean.low <= mean.high <= 1.0
    if all(v in (0.0, 1.0) for runs in rows for v in runs):
        size = r if m in (0.0, 1.0) else counts.sum() if se2 <= 1e-24 else m * (1 - m) / se2
        size = min(max(size, r), counts.sum())
        low, high = proportion_confint(m * size, size, alpha=0.05, method="wilson")
        assert (mean.method, mean.effective_n) == ("wilson", pytest.approx(size, rel=1e-9))
    else:
        t = sps.t.ppf(0.975, r - 1)
        low, high = max(m - t * math.sqrt(se2), 0.0), min(m + t * math.sqrt(se2), 1.0)
        assert mean.method == "t"
    assert (mean.low, mean.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


@given(st.lists(st.integers(0, 1), min_size=2, max_size=60), st.sampled_from([0.9, 0.95]))
@SETTINGS
def test_mean_of_pass_fail_scores_is_a_wilson_proportion(
    tmp_path: Path, values: list[int], level: float
) -> None:
    # One run per row of a 0/1 grader (a 4-sample grade gave [-0.046, 1.546] with t).
    path = tmp_path / "log.jsonl"
    _write(path, [[float(v)] for v in values], 1)
    mean = read_results(path, level=level).model().function("acc").intervals["mean"]
    low, high = proportion_confint(sum(values), len(values), alpha=1 - level, method="wilson")
    assert (mean.method, mean.low, mean.high) == (
        "wilson",
        pytest.approx(low, abs=1e-12),
        pytest.approx(high, abs=1e-12),
    )


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=40))
@SETTINGS
def test_compare_matches_scipy_statsmodels(tmp_path: Path, outcomes: list[tuple[bool, bool]]) -> None:
    def log(name: str, side: int) -> Path:
        rows = [[1.0 if pair[side] else 0.0] for pair in outcomes]
        _write(tmp_path / name, rows, 1)  # type: ignore[arg-type]
        return tmp_path / name

    result = compare_results(log("a.jsonl", 0), log("b.jsonl", 1))
    a = np.array([float(p[0]) for p in outcomes])
    b = np.array([float(p[1]) for p in outcomes])
    d = result.differences["pass_at_1"]
    assert d.estimate == pytest.approx((b - a).mean(), abs=1e-12)
    b_only = sum(1 for x, y in outcomes if y and not x)
    a_only = sum(1 for x, y in outcomes if x and not y)
    assert result.mcnemar_p == pytest.approx(
        min(1.0, mcnemar([[0, a_only], [b_only, 0]], exact=True).pvalue), rel=1e-9
    )
    if d.p_value is None:
        assert d.low is None and d.note and result.differences["pass_at_1"].verdict == "no_clear_difference"
        return
    reference = sps.ttest_rel(b, a)
    assert d.p_value == pytest.approx(reference.pvalue, rel=1e-7, abs=1e-12)
    low, high = reference.confidence_interval(0.95)
    # B - A of pass rates lies in [-1, 1]; so does its interval (tests/results/test_compare_interval_bounds.py).
    low, high = max(low, -1.0), min(high, 1.0)
    assert (d.low, d.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    tested = [x.p_value for x in result.differences.values() if x.p_value is not None]
    holm = multipletests(tested, method="holm")[1]
    assert sorted(x.p_holm for x in result.differences.values() if x.p_holm is not None) == pytest.approx(
        sorted(holm)
    )
    if result.verdict.outcome != "no_clear_difference":
        assert d.p_holm < 0.05 and result.mcnemar_p < 0.05 and (d.low > 0 or d.high < 0)


@given(ROWS, st.integers(1, 5))
@SETTINGS
def test_per_row_statistics_match_numpy(tmp_path: Path, rows: list[list[object]], n: int) -> None:
    # Each row's own figures (the rubric commands' per-record statistics) over its scored runs only.
    path = tmp_path / "log.jsonl"
    _write(path, rows, n)
    per_row = read_results(path, failed="exclude", per_row=True).model().function("acc").per_row
    assert per_row is not None and [r.row for r in per_row] == list(range(len(rows)))
    for runs, got in zip(rows, per_row, strict=True):
        scores = [v for v in runs[:n] if isinstance(v, float)]
        assert (got.finished, got.scored, got.errored) == (
            len(runs[:n]),
            len(scores),
            runs[:n].count("error"),
        )
        assert got.unscored == got.finished - got.scored - got.errored
        if not scores:
            assert (got.mean, got.variance, got.std, got.min, got.max) == (None,) * 5
            continue
        assert got.mean == pytest.approx(np.mean(scores), abs=1e-12)
        assert got.variance == pytest.approx(np.var(scores), abs=1e-12)
        assert got.std == pytest.approx(np.std(scores), abs=1e-12)
        assert (got.min, got.max) == (min(scores), max(scores))
