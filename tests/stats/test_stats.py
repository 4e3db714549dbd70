"""pass@k, pass^k, summaries, the streaming aggregator and intervals (osmosis_ai.stats)."""

from __future__ import annotations

import ast
import doctest
import json
import math
import random
import re
import statistics
import subprocess
import sys
from array import array
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osmosis_ai._stats_types as types_module
import osmosis_ai.stats as stats_module
from osmosis_ai import _core
from osmosis_ai.errors import OsmosisError, StatsError
from osmosis_ai.stats import (
    Aggregator,
    compare,
    confidence_interval,
    pass_at_k,
    pass_at_k_many,
    pass_hat_k,
    pass_hat_k_many,
    summarize,
    summarize_results,
)


def ref_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def ref_pass_hat_k(n: int, c: int, k: int) -> Fraction:
    return Fraction(math.comb(c, k), math.comb(n, k))


@st.composite
def nck(draw: st.DrawFn, max_n: int = 60) -> tuple[int, int, int]:
    n = draw(st.integers(1, max_n))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n))


# --- one row -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [(5, 2, 1, 0.4), (5, 2, 3, 0.9), (10, 7, 3, 0.991667), (3, 1, 3, 1.0)],
)
def test_reference_values_of_the_established_eval(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=5e-7)


@given(nck())
def test_pass_at_k_matches_binomials(args: tuple[int, int, int]) -> None:
    assert pass_at_k(*args) == pytest.approx(float(ref_pass_at_k(*args)), rel=1e-12, abs=1e-15)


@given(nck())
def test_pass_hat_k_matches_binomials(args: tuple[int, int, int]) -> None:
    assert pass_hat_k(*args) == pytest.approx(float(ref_pass_hat_k(*args)), rel=1e-12, abs=1e-15)


@settings(max_examples=25, deadline=None)
@given(nck(max_n=20), st.integers(0, 2**32))
def test_estimators_agree_with_monte_carlo(args: tuple[int, int, int], seed: int) -> None:
    n, c, k = args
    rng = random.Random(seed)
    attempts = [True] * c + [False] * (n - c)
    trials = 4000
    any_pass = all_pass = 0
    for _ in range(trials):
        drawn = rng.sample(attempts, k)
        any_pass += any(drawn)
        all_pass += all(drawn)
    for estimate, hits in ((pass_at_k(n, c, k), any_pass), (pass_hat_k(n, c, k), all_pass)):
        sigma = math.sqrt(max(estimate * (1 - estimate), 1e-4) / trials)
        assert abs(hits / trials - estimate) < 6 * sigma + 1e-9


def test_edges() -> None:
    assert pass_at_k(10, 0, 10) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(10, 10, 10) == 1.0
    assert pass_at_k(10, 1, 10) == 1.0
    assert pass_hat_k(10, 10, 10) == 1.0
    assert pass_hat_k(10, 9, 10) == 0.0
    assert pass_hat_k(10, 0, 1) == 0.0
    assert pass_hat_k(5, 4, 2) == 0.6
    assert pass_at_k(np.int64(5), np.int32(2), 1) == pytest.approx(0.4)
    assert pass_at_k(5.0, 2, 1) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("n", "c", "k", "field", "text"),
    [
        (3, 0, 5, "k", "k = 5 is more than n = 3"),
        (5, 6, 1, "c", "c = 6 passing attempts is more than n = 5"),
        (-1, 0, 1, "n", "n (attempts) must be >= 0, got -1"),
        (5, -2, 1, "c", "must be >= 0, got -2"),
        (5, 1, 0, "k", "k must be >= 1, got 0"),
        (0, 0, 1, "k", "k = 1 is more than n = 0"),
        (5.5, 1, 1, "n", "n must be a whole number, got 5.5"),
        ("5", 1, 1, "n", "whole number"),
        (2**70, 1, 1, "n", "out of range"),
    ],
)
def test_invalid_counts_raise_a_clear_value_error(n: object, c: int, k: int, field: str, text: str) -> None:
    for fn in (pass_at_k, pass_hat_k):
        with pytest.raises(StatsError, match=re.escape(text)) as info:
            fn(n, c, k)  # type: ignore[arg-type]
        assert isinstance(info.value, ValueError)
        assert isinstance(info.value, OsmosisError)
        assert info.value.field == field


# --- many rows -----------------------------------------------------------------------------------------


@settings(max_examples=50)
@given(st.lists(nck(max_n=30), min_size=1, max_size=40), st.integers(1, 30))
def test_many_equals_one_by_one(rows: list[tuple[int, int, int]], k: int) -> None:
    rows = [(n, c, _) for n, c, _ in rows if n >= k]
    if not rows:
        return
    ns = [n for n, _, _ in rows]
    cs = [c for _, c, _ in rows]
    for many, one in ((pass_at_k_many, pass_at_k), (pass_hat_k_many, pass_hat_k)):
        got = many(ns, cs, k, per_row=True)
        expected = [one(n, c, k) for n, c in zip(ns, cs, strict=True)]
        assert list(got.values) == expected
        assert got.rows == len(rows)
        assert got.mean == pytest.approx(math.fsum(expected) / len(expected), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    "make",
    [
        list,
        tuple,
        lambda v: array("q", v),
        lambda v: array("b", v),
        lambda v: array("H", v),
        lambda v: memoryview(array("i", v)),
        lambda v: np.asarray(v, dtype=np.int64),
        lambda v: np.asarray(v, dtype=np.int32),
        lambda v: np.asarray(v, dtype=np.uint8),
        lambda v: np.asarray(v, dtype=np.uint64),
        lambda v: np.asarray(v, dtype=np.float64),
        lambda v: np.asarray(v, dtype=np.int64)[::2].repeat(2),  # a copy of strided data
        lambda v: np.asarray(v, dtype=">i8"),  # non-native byte order
        lambda v: pl.Series(v),
        lambda v: pl.Series(v, dtype=pl.UInt16),
        lambda v: (x for x in v),
    ],
)
def test_many_accepts_every_array_like(make: object) -> None:
    c = [0, 0, 3, 3, 10, 10]
    expected = [pass_at_k(10, ci, 3) for ci in c]
    got = pass_at_k_many(10, make(c), 3, per_row=True)  # type: ignore[operator]
    assert list(got.values) == expected
    per_row_n = pass_at_k_many(make([10] * 6), make(c), 3)  # type: ignore[operator]
    assert per_row_n.mean == pytest.approx(sum(expected) / 6)


def test_many_values_are_a_buffer() -> None:
    got = pass_hat_k_many(np.full(1000, 8), np.arange(1000) % 9, 2, per_row=True)
    values = np.asarray(got.values)
    assert values.dtype == np.float64 and values.shape == (1000,)
    assert values[8] == 1.0 and values[0] == 0.0


@pytest.mark.parametrize(
    ("n", "c", "row", "field", "text"),
    [
        (4, [1, 2, 5], 2, "c", "row 2: c = 5 passing attempts is more than n = 4"),
        ([4, 2, 4], [1, 1, 1], 1, "k", "row 1: k = 3 is more than n = 2 attempts: pass@3 needs"),
        (4, [1, -1], 1, "c", "row 1: c (passing attempts) must be >= 0"),
        (4, np.array([1.0, 2.5]), 1, "c", "row 1: c = 2.5 is not a whole number"),
        (4, pl.Series([1, None, 2]), 1, "c", "row 1: c = NaN is not a whole number"),
        (4, [1, "x"], 1, "c", "row 1: c = 'x' is not a whole number"),
        (4, [1, 2.5], 1, "c", "row 1: c = 2.5 is not a whole number"),
        (4, np.array([1, 2**63], dtype=np.uint64), 1, "c", "row 1: c = 9223372036854775808"),
    ],
)
def test_many_names_the_bad_row(n: object, c: object, row: int, field: str, text: str) -> None:
    with pytest.raises(StatsError, match=re.escape(text)) as info:
        pass_at_k_many(n, c, 3)
    assert (info.value.row, info.value.field) == (row, field)


def test_many_over_several_chunks_numbers_rows_from_the_start() -> None:
    rows = 3 * (1 << 16) + 5
    c = np.arange(rows, dtype=np.int64) % 7
    n = np.full(rows, 6, dtype=np.int32)
    got = pass_at_k_many(n, c.tolist(), 2, per_row=True)
    assert got.values is not None and len(got.values) == rows
    assert got.values[rows - 1] == pass_at_k(6, int(c[-1]), 2)
    assert got.mean == pytest.approx(math.fsum(got.values) / rows, rel=1e-13)
    with pytest.raises(StatsError, match=re.escape("row 6: c = 6 passing attempts")):
        pass_at_k_many(5, c, 2)
    c[150_001] = -1
    with pytest.raises(StatsError, match=re.escape("row 150001: c (passing attempts) must be >= 0")) as info:
        pass_at_k_many(n, c, 2)
    assert info.value.row == 150_001
    bad = np.zeros(rows)
    bad[150_000] = 0.5
    with pytest.raises(StatsError, match=re.escape("row 150000: c = 0.5 is not a whole number")):
        pass_at_k_many(6, bad, 1)


def test_matrix_rows_over_several_chunks_and_orders() -> None:
    rng = np.random.default_rng(5)
    scores = rng.random((20_000, 7))
    as_lists = summarize(scores.tolist(), pass_threshold=0.5)
    assert summarize(scores, pass_threshold=0.5) == as_lists
    assert summarize(np.asfortranarray(scores), pass_threshold=0.5) == as_lists
    assert summarize(scores.astype(np.float32), pass_threshold=0.5).rows == 20_000
    scores[12_345, 3] = np.nan
    with pytest.raises(StatsError, match="row 12345: attempt 3: score is NaN"):
        summarize(scores)


def test_many_refuses_shapes() -> None:
    with pytest.raises(StatsError, match="n has 2 rows but c has 3"):
        pass_at_k_many([4, 4], [1, 1, 1], 1)
    with pytest.raises(StatsError, match="one-dimensional"):
        pass_at_k_many(4, np.zeros((2, 2), dtype=np.int64), 1)
    with pytest.raises(StatsError, match="no rows"):
        pass_at_k_many(4, [], 1)


def test_many_without_rows_per_row_still_raises_for_the_mean() -> None:
    with pytest.raises(StatsError, match="no rows"):
        pass_hat_k_many(4, np.array([], dtype=np.int64), 1, per_row=True)


def test_many_matches_a_numpy_implementation_at_scale() -> None:
    rng = np.random.default_rng(3)
    n = 10
    c = rng.integers(0, n + 1, size=20_000)
    ratio = np.ones(c.shape)
    for i in range(3):
        ratio *= np.clip(n - c - i, 0, None) / (n - i)
    assert pass_at_k_many(n, c, 3).mean == pytest.approx(float(np.mean(1 - ratio)), rel=1e-12)


# --- summaries -----------------------------------------------------------------------------------------


ROWS = [[1.0, 0.0, 1.0, 0.5], [0.0, None, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]]


def test_summary_follows_the_established_eval() -> None:
    s = summarize(ROWS)
    flat = [0.0 if x is None else x for row in ROWS for x in row]
    assert s.mean == pytest.approx(statistics.fmean(flat))
    assert s.std == pytest.approx(statistics.pstdev(flat))
    assert (s.min, s.max, s.count, s.rows, s.failed) == (0.0, 1.0, 12, 3, 1)
    assert s.ks == (1, 3)
    cs = [2, 1, 4]
    for k in (1, 3):
        assert s.pass_at_k[k] == pytest.approx(statistics.fmean(float(ref_pass_at_k(4, c, k)) for c in cs))
        assert s.pass_hat_k[k] == pytest.approx(statistics.fmean(float(ref_pass_hat_k(4, c, k)) for c in cs))
    assert s.failed_policy == "zero"
    assert s.mixed_fraction == {1.0: pytest.approx(2 / 3)}
    est = s.to_established_dict()
    assert list(est) == ["mean", "std", "min", "max", "pass_at_1", "pass_at_3"]
    json.dumps(s.to_dict())


@pytest.mark.parametrize(
    ("n", "ks"), [(1, (1,)), (2, (1,)), (4, (1, 3)), (7, (1, 3, 5)), (12, (1, 3, 5, 10)), (40, (1, 3, 5, 10))]
)
def test_default_ks_stop_at_n(n: int, ks: tuple[int, ...]) -> None:
    s = summarize([[1.0] * n, [0.0] * n])
    assert s.ks == ks
    keys = [key for key in s.to_established_dict() if key.startswith("pass_at_")]
    assert keys == ([f"pass_at_{k}" for k in ks] if n > 1 else [])


def test_missing_runs_count_as_failures_with_n_runs() -> None:
    s = summarize([[1.0, 1.0], [1.0, 0.0, 0.0, 0.0, 1.0]], n_runs=5)
    assert (s.padded, s.min_attempts, s.count) == (3, 5, 7)
    assert s.pass_at_k[1] == pytest.approx(0.4)
    assert s.pass_at_k[3] == pytest.approx(0.9)
    assert s.mean == pytest.approx(4 / 7)


def test_explicit_k_above_a_row_names_the_row() -> None:
    agg = Aggregator(ks=[1, 3])
    agg.push([1.0, 1.0, 1.0], row_index=10)
    agg.push([1.0, 1.0], row_index=11)
    with pytest.raises(StatsError, match=r"row 11: pass@3 needs at least 3 attempts per row, this row has 2"):
        agg.finish()
    assert summarize([[1.0, 0.0, 1.0]], ks=[2]).pass_at_k == {2: 1.0}


def test_failed_attempts_can_be_left_out_of_the_mean() -> None:
    s = summarize([[1.0, None], [0.5, 0.5]], failed="exclude", pass_threshold=0.5)
    assert (s.count, s.failed, s.mean, s.min) == (3, 1, pytest.approx(2 / 3), 0.5)
    assert s.pass_at_k[1] == pytest.approx(0.75)  # the failed attempt still fails
    assert s.failed_policy == "exclude"


def test_a_failed_attempt_never_passes_even_at_threshold_zero() -> None:
    assert summarize([[None, 0.0]], pass_threshold=0.0).pass_at_k[1] == 0.5


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_scores_are_refused_naming_the_row(bad: float) -> None:
    with pytest.raises(StatsError, match=r"row 1: attempt 2: score is (NaN|inf|-inf)") as info:
        summarize([[1.0, 1.0, 1.0], [1.0, 0.0, bad]])
    assert (info.value.row, info.value.field) == (1, "scores")
    with pytest.raises(StatsError, match="row 1: attempt 0"):
        summarize(np.array([[1.0, 1.0], [bad, 0.0]]))


def test_non_finite_scores_can_count_as_failures() -> None:
    s = summarize([[1.0, float("nan")], [1.0, 1.0]], nonfinite="fail")
    assert (s.failed, s.count, s.mean) == (1, 4, 0.75)
    s = summarize([[1.0, float("nan")], [1.0, 1.0]], nonfinite="fail", failed="exclude")
    assert (s.failed, s.count, s.mean) == (1, 3, 1.0)


def test_non_number_score_names_row_and_attempt() -> None:
    agg = Aggregator()
    agg.push([1.0])
    with pytest.raises(StatsError, match=r"row 1: attempt 1: score 'x' is not a number"):
        agg.push([1.0, "x"])  # type: ignore[list-item]
    assert len(agg) == 1


def test_bad_options_are_refused() -> None:
    with pytest.raises(StatsError, match='failed must be "zero" or "exclude"'):
        Aggregator(failed="skip")  # type: ignore[arg-type]
    with pytest.raises(StatsError, match='nonfinite must be "error" or "fail"'):
        Aggregator(nonfinite="ignore")  # type: ignore[arg-type]
    with pytest.raises(StatsError, match="pass_threshold must be a finite number"):
        Aggregator(pass_threshold=float("nan"))
    with pytest.raises(StatsError, match="every k must be >= 1, got 0"):
        Aggregator(ks=[0])
    with pytest.raises(StatsError, match="n_runs must be between"):
        Aggregator(n_runs=-1)


def test_mixed_fraction_per_threshold() -> None:
    s = summarize([[1.0, 0.6], [0.0, 0.0], [0.7, 0.2], [1.0, 1.0]], thresholds=[0.5])
    assert s.mixed_fraction == {1.0: 0.25, 0.5: 0.25}


def test_empty_summary() -> None:
    s = summarize([])
    assert (s.rows, s.mean, s.std, s.ks) == (0, None, None, ())
    assert s.to_established_dict() == {"mean": None, "std": None, "min": None, "max": None}
    # Finding 1 of issue #28: every attempt failed is nothing scored (null), not a mean of 0.0.
    failed = summarize([[None, None], [None, None]]).to_established_dict()
    assert failed == {"mean": None, "std": None, "min": None, "max": None, "pass_at_1": None}
    assert summarize([], ks=[1, 3]).pass_at_k == {}


@settings(max_examples=40)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.floats(-5, 5, allow_nan=False)), min_size=3, max_size=3),
        min_size=1,
        max_size=30,
    )
)
def test_array_and_streamed_rows_agree_with_python(rows: list[list[float | None]]) -> None:
    s = summarize(rows, pass_threshold=0.5)
    if all(x is None for row in rows for x in row):
        assert (s.mean, s.std, s.min, s.max) == (None, None, None, None)  # nothing scored: no mean
        return
    flat = [0.0 if x is None else x for row in rows for x in row]
    assert s.mean == pytest.approx(statistics.fmean(flat), abs=1e-9)
    assert s.std == pytest.approx(statistics.pstdev(flat), abs=1e-9)
    assert (s.min, s.max) == (min(flat), max(flat))
    matrix = np.array([[math.nan if x is None else x for x in row] for row in rows])
    m = summarize(matrix, pass_threshold=0.5, nonfinite="fail")
    assert (m.pass_at_k, m.pass_hat_k, m.count, m.failed) == (s.pass_at_k, s.pass_hat_k, s.count, s.failed)
    assert m.mean == pytest.approx(s.mean, abs=1e-12)


def test_aggregator_streams_and_can_go_on_after_finish() -> None:
    agg = Aggregator()
    for row in ROWS[:2]:
        agg.push(iter(row))
    first = agg.finish()
    agg.push_rows([ROWS[2]])
    assert first.rows == 2 and len(agg) == 3
    assert agg.finish() == summarize(ROWS)


# --- intervals -----------------------------------------------------------------------------------------


def _bernoulli_rows(rows: int, attempts: int, seed: int) -> list[list[float]]:
    rng = random.Random(seed)
    out = []
    for _ in range(rows):
        p = rng.random()
        out.append([float(rng.random() < p) for _ in range(attempts)])
    return out


def test_bootstrap_intervals_are_seeded() -> None:
    rows = _bernoulli_rows(200, 4, seed=1)
    a = summarize(rows, confidence=0.95, seed=7)
    b = summarize(rows, confidence=0.95, seed=7)
    c = summarize(rows, confidence=0.95, seed=8)
    assert a.intervals == b.intervals
    assert a.intervals != c.intervals
    assert set(a.intervals) == {"mean", "pass_at_1", "pass_hat_1", "pass_at_3", "pass_hat_3"}
    for name, iv in a.intervals.items():
        assert iv.low <= iv.estimate <= iv.high, name
        assert iv.level == 0.95 and iv.method == "bootstrap"
    assert a.intervals["mean"].estimate == pytest.approx(a.mean, rel=1e-14)
    assert a.intervals["pass_at_3"].estimate == a.pass_at_k[3]


def test_normal_interval_matches_the_textbook_formula() -> None:
    rows = _bernoulli_rows(100, 5, seed=2)
    s = summarize(rows, confidence=0.9, method="normal")
    per_row = pass_at_k_many(5, [int(sum(r)) for r in rows], 3, per_row=True).values
    assert per_row is not None
    t = 1.6603911559963895  # Student's t, 0.95 quantile, 99 degrees of freedom (not z: finding 6)
    half = t * statistics.stdev(per_row) / math.sqrt(len(per_row))
    iv = s.intervals["pass_at_3"]
    assert (iv.low, iv.high) == (pytest.approx(iv.estimate - half), pytest.approx(iv.estimate + half))
    # Equal attempts per row: the mean's cluster interval is the interval of the row means.
    row_means = [statistics.fmean(r) for r in rows]
    half = t * statistics.stdev(row_means) / 10
    assert s.intervals["mean"].high == pytest.approx(s.mean + half)


def test_bootstrap_and_normal_agree_on_many_rows() -> None:
    rows = _bernoulli_rows(2000, 3, seed=4)
    boot = Aggregator()
    boot.push_rows(rows)
    b = boot.intervals(resamples=500, seed=1)
    n = boot.intervals(method="normal")
    for name in ("mean", "pass_at_1", "pass_at_3"):
        assert b[name].low == pytest.approx(n[name].low, abs=0.01)
        assert b[name].high == pytest.approx(n[name].high, abs=0.01)


def test_normal_interval_covers_the_truth_about_95_percent() -> None:
    rng = random.Random(11)
    covered = 0
    for _ in range(200):
        values = [float(rng.random() < 0.3) for _ in range(200)]
        iv = confidence_interval(values, method="normal")
        covered += iv.low <= 0.3 <= iv.high
    assert 180 <= covered <= 200


def test_confidence_interval_of_values() -> None:
    # "normal" is estimate ± t·se with Student's t for rows - 1 degrees of freedom (z was too narrow),
    # cut to [0, 1] when every value lies there (it gave [-0.046, 1.546]).
    iv = confidence_interval(np.array([0.0, 1.0, 1.0, 1.0]), method="normal")
    assert (iv.estimate, iv.low, iv.high) == (0.75, 0.0, 1.0)
    iv = confidence_interval(np.array([0.0, 2.0, 2.0, 2.0]), method="normal")
    assert (iv.estimate, round(iv.low, 3), round(iv.high, 3)) == (1.5, -0.091, 3.091)
    # Pass rates (values in [0, 1]) get Wilson's interval by default: inside [0, 1].
    wilson = confidence_interval(np.array([0.0, 1.0, 1.0, 1.0]))
    assert (wilson.method, round(wilson.low, 3), round(wilson.high, 3)) == ("wilson", 0.301, 0.954)
    weighted = confidence_interval([2.0, 1.0] * 5, weights=[2.0, 2.0] * 5, method="bootstrap", resamples=200)
    assert (weighted.estimate, weighted.method) == (0.75, "bootstrap")
    assert confidence_interval([0.2, 0.4, 0.6], seed=3) == confidence_interval([0.2, 0.4, 0.6], seed=3)


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"values": [1.0], "method": "t"}, "at least 2 rows"),
        ({"values": [1.0, 2.0], "method": "wilson"}, "Wilson interval is for pass rates"),
        ({"values": [1.0, math.nan, 2.0]}, "row 1: values is NaN"),
        ({"values": [1.0, 2.0], "level": 1.0}, "level must be between 0 and 1"),
        (
            {"values": [1.0, 2.0], "method": "z"},
            'method must be "auto", "wilson", "t", "normal" or "bootstrap"',
        ),
        ({"values": [1.0, 2.0] * 5, "method": "bootstrap", "resamples": 0}, "resamples must be at least 1"),
        ({"values": [1.0, 2.0], "weights": [1.0]}, "weights has 1 rows but values has 2"),
        ({"values": [1.0, None]}, "row 1: values = None is not a number"),
    ],
)
def test_interval_errors(kwargs: dict[str, object], text: str) -> None:
    with pytest.raises(StatsError, match=re.escape(text)):
        confidence_interval(**kwargs)  # type: ignore[arg-type]


def test_summary_interval_needs_two_rows() -> None:
    with pytest.raises(StatsError, match="at least 2 rows"):
        summarize([[1.0, 0.0]], confidence=0.95)


# --- packaging -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("module", [stats_module, types_module])
def test_docstring_examples_run(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.attempted >= 4
    assert result.failed == 0


def test_stub_lists_every_core_name() -> None:
    stub = Path(_core.__file__).with_name("_core.pyi")
    tree = ast.parse(stub.read_text())
    stubbed = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))} | {
        node.target.id
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    public = {name for name in dir(_core) if not name.startswith("_")} | {"__version__"}
    assert public - stubbed == set()
    assert {"pass_at_k", "pass_hat_k", "estimate_many", "row_interval", "StatsAggregator"} <= stubbed


def test_importing_stats_loads_no_heavy_module() -> None:
    code = "import sys, osmosis_ai.stats; print(sorted(m for m in ('numpy', 'polars') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- results logs --------------------------------------------------------------------------------------


def _write_log(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_summarize_results_matches_summarize(tmp_path: Path) -> None:
    rng = random.Random(9)
    records = []
    rows: dict[int, dict[int, list[float | None]]] = {}
    for row in range(50):
        for run in range(4):
            ok = rng.random() > 0.1
            acc = float(rng.random() > 0.5)
            fmt = round(rng.random(), 3)
            record: dict[str, object] = {
                "row_index": row,
                "run_index": run,
                "success": ok,
                "duration_ms": 1.0,
            }
            record["scores"] = {"acc": acc, "format": fmt} if ok else {}
            records.append(record)
            rows.setdefault(row, {})[run] = [acc, fmt] if ok else [None, None]
    rng.shuffle(records)  # concurrent runs finish in any order
    path = _write_log(tmp_path / "results.jsonl", records)
    got = summarize_results(path, n_runs=4, confidence=0.95, seed=3)
    assert sorted(got) == ["acc", "format"]
    for j, name in enumerate(("acc", "format")):
        table = [[rows[r][i][j] for i in range(4)] for r in range(50)]
        expected = summarize(table, n_runs=4)
        assert got[name].to_established_dict() == pytest.approx(expected.to_established_dict())
        assert (got[name].rows, got[name].failed, got[name].count) == (50, expected.failed, 200)
        assert set(got[name].intervals) >= {"mean", "pass_at_1", "pass_at_3"}


def test_summarize_results_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=re.escape("missing.jsonl")):
        summarize_results(tmp_path / "missing.jsonl")
    bad = _write_log(tmp_path / "bad.jsonl", [{"row_index": 0, "run_index": 0, "scores": {"acc": "x"}}])
    with pytest.raises(StatsError, match=re.escape("bad.jsonl:1: field 'scores.acc': expected a number")):
        summarize_results(bad)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"row_index": 0, "run_index": 0}\n{"row_index": 1,\n')
    with pytest.raises(StatsError, match=re.escape("broken.jsonl:2: not a results record")):
        summarize_results(broken)
    short = _write_log(tmp_path / "short.jsonl", [{"row_index": 7, "run_index": 0, "scores": {"acc": 1.0}}])
    with pytest.raises(StatsError, match=re.escape("row 7: pass@3 needs at least 3 attempts")):
        summarize_results(short, ks=[3])
    assert summarize_results(short, ks=[3], n_runs=3)["acc"].pass_at_k == {3: 1.0}
    assert summarize_results(_write_log(tmp_path / "empty.jsonl", [])) == {}


# --- comparing runs ------------------------------------------------------------------------------------


def test_paired_comparison_of_two_runs() -> None:
    rng = random.Random(21)
    a, b = Aggregator(), Aggregator()
    per_row_a, per_row_b = [], []
    for row in range(300):
        p = rng.random()
        ra = [float(rng.random() < min(1.0, p + 0.1)) for _ in range(4)]
        rb = [float(rng.random() < p) for _ in range(4)]
        # b holds the rows in another order and misses some: pairing is by row index.
        a.push(ra, row_index=row)
        per_row_a.append(ra)
        if row % 10:
            per_row_b.append((row, rb))
    for row, rb in reversed(per_row_b):
        b.push(rb, row_index=row)
    result = compare(a, b, method="normal")
    assert result.rows == 270
    shared = [(per_row_a[row], rb) for row, rb in per_row_b]
    diffs = [statistics.fmean(x) - statistics.fmean(y) for x, y in shared]
    iv = result.differences["mean"]
    assert iv.estimate == pytest.approx(statistics.fmean(diffs))
    # Student's t for 269 degrees of freedom (issue #28 finding 6: z was too narrow).
    half = 1.9688219741044666 * statistics.stdev(diffs) / math.sqrt(len(diffs))
    assert (iv.low, iv.high) == (pytest.approx(iv.estimate - half), pytest.approx(iv.estimate + half))
    boot = compare(a, b, seed=4)
    assert boot == compare(a, b, seed=4)
    assert set(boot.differences) == {"mean", "pass_at_1", "pass_hat_1", "pass_at_3", "pass_hat_3"}
    assert boot.differences["pass_at_1"].low == pytest.approx(result.differences["pass_at_1"].low, abs=0.02)
    # Paired is tighter than two separate intervals whenever rows share difficulty.
    separate = a.intervals(method="normal")["mean"], b.intervals(method="normal")["mean"]
    assert iv.high - iv.low < (separate[0].high - separate[0].low) + (separate[1].high - separate[1].low)
    json.dumps(boot.to_dict())


def test_comparison_errors() -> None:
    a, b = Aggregator(), Aggregator()
    a.push([1.0], row_index=0)
    a.push([1.0], row_index=1)
    b.push([0.0], row_index=1)
    b.push([0.0], row_index=2)
    with pytest.raises(StatsError, match="the runs share 1 rows; a comparison needs at least 2"):
        compare(a, b)
    b.push([0.0], row_index=1)
    with pytest.raises(StatsError, match=re.escape("row 1: pushed twice")):
        compare(a, b)


def test_mixed_rows_lists_the_prompts_worth_training_on() -> None:
    agg = Aggregator(thresholds=[0.5])
    agg.push([1.0, 0.6], row_index=3)
    agg.push([0.0, 0.0], row_index=4)
    agg.push([0.7, 0.2], row_index=5)
    assert agg.mixed_rows() == [3]
    assert agg.mixed_rows(0.5) == [5]
    with pytest.raises(StatsError, match=re.escape("threshold 0.9 is not tracked")):
        agg.mixed_rows(0.9)


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=40))
def test_score_median_of_packed_scores_is_that_of_the_list(scores: list[float]) -> None:
    packed = stats_module.score_median(array("d", scores))
    assert packed == stats_module.score_median(scores)
    assert (packed is None) == (not scores)


def test_score_median_of_an_array_of_other_items_reads_them_as_numbers() -> None:
    # Only packed doubles go to the core as they are; any other array is read item by item, as before.
    assert stats_module.score_median(array("u", "123")) == 2.0
    assert stats_module.score_median(array("i", [1, 4, 2])) == 2.0
