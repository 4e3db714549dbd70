"""Agreement and advantage-sign statistics of the Rust core against pure-Python references."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from osmosis_ai.errors import StatsError
from osmosis_ai.stats import advantage_sign_changes, agreement

scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False).map(lambda x: round(x, 2))


def _ranks(values: list[float]) -> list[float]:
    return [sum(v < x for v in values) + (sum(v == x for v in values) + 1) / 2 for x in values]


def _pearson(a: list[float], b: list[float]) -> float | None:
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va, vb = sum((x - ma) ** 2 for x in a), sum((y - mb) ** 2 for y in b)
    if va == 0 or vb == 0:
        return None
    return sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True)) / math.sqrt(va * vb)


def _kappa(a: list[bool], b: list[bool]) -> float | None:
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return None if chance == 1 else (observed - chance) / (1 - chance)


@given(st.lists(st.tuples(scores, scores), min_size=1, max_size=30))
def test_agreement_matches_the_reference(pairs: list[tuple[float, float]]) -> None:
    judge, gold = [p[0] for p in pairs], [p[1] for p in pairs]
    result = agreement(judge, gold, threshold=0.5)
    assert result.count == len(pairs)
    assert result.mae == pytest.approx(sum(abs(j - g) for j, g in pairs) / len(pairs), abs=1e-12)
    assert result.bias == pytest.approx(sum(j - g for j, g in pairs) / len(pairs), abs=1e-12)
    expected_rho = _pearson(_ranks(judge), _ranks(gold))
    assert (result.spearman is None) == (expected_rho is None)
    if expected_rho is not None:
        assert result.spearman == pytest.approx(expected_rho, abs=1e-9)
    expected_kappa = _kappa([j >= 0.5 for j in judge], [g >= 0.5 for g in gold])
    assert result.kappa == (pytest.approx(expected_kappa, abs=1e-12) if expected_kappa is not None else None)


def _signs(group: list[float]) -> list[int]:
    mean = sum(group) / len(group)
    return [0 if abs(x - mean) <= 1e-9 * max(1.0, abs(mean)) else (1 if x > mean else -1) for x in group]


@given(st.lists(st.lists(st.tuples(scores, scores), min_size=1, max_size=6), min_size=1, max_size=12))
def test_advantage_sign_changes_match_the_reference(groups: list[list[tuple[float, float]]]) -> None:
    old = [[p[0] for p in g] for g in groups]
    new = [[p[1] for p in g] for g in groups]
    changes = advantage_sign_changes(old, new)
    expected = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if _signs(a) != _signs(b)]
    runs = sum(
        x != y for a, b in zip(old, new, strict=True) for x, y in zip(_signs(a), _signs(b), strict=True)
    )
    assert changes.changed == tuple(expected)
    assert (changes.groups, changes.groups_changed, changes.runs_changed) == (
        len(groups),
        len(expected),
        runs,
    )


def test_bad_input_is_refused() -> None:
    with pytest.raises(StatsError):
        agreement([], [])
    with pytest.raises(StatsError):
        agreement([1.0], [1.0, 0.0])
    with pytest.raises(StatsError):
        advantage_sign_changes([[1.0, 0.0]], [[1.0]])
    with pytest.raises(StatsError, match="row 1"):
        advantage_sign_changes([[1.0], [float("nan")]], [[1.0], [0.0]])
