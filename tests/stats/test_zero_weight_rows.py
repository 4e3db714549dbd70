"""Rows of weight 0 (rows with no data: no scored attempt in the mean, too few attempts for a pass@k) are no
rows of the normal interval: the small-sample factor R/(R-1) and Student's t degrees of freedom R - 1 both
count only the rows that carry data. Before, the factor counted every row while the degrees of freedom
(``rows_with_weight``) did not, so an interval over rows with empty ones was narrower than the one over the
data alone. Checked against scipy's t intervals over the rows that carry data.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from osmosis_ai.results import compare_results
from osmosis_ai.stats import Aggregator, compare, confidence_interval

# Per-row means outside [0, 1] so no bound is cut at 0 or 1.
DATA = [2.0, 5.0, 3.5, 4.25, 1.0]
EMPTY = 4  # rows without data beside them


def _scipy_t(values: list[float], level: float = 0.95) -> tuple[float, float]:
    low, high = sps.ttest_1samp(values, 0.0).confidence_interval(level)
    return float(low), float(high)


def test_confidence_interval_counts_only_rows_of_nonzero_weight() -> None:
    values = DATA + [0.0] * EMPTY
    weights = [1.0] * len(DATA) + [0.0] * EMPTY
    iv = confidence_interval(values, weights=weights, method="t")
    low, high = _scipy_t(DATA)
    assert iv.estimate == pytest.approx(np.mean(DATA), abs=1e-12)
    assert (iv.low, iv.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


def _aggregator(rows: list[float], empty: int) -> Aggregator:
    """Rows of two attempts each with the given mean, then ``empty`` rows whose attempts all failed (no
    score: the mean leaves them out)."""
    agg = Aggregator(ks=[1], failed="exclude")
    for i, mean in enumerate(rows):
        agg.push([mean - 0.5, mean + 0.5], row_index=i)
    for i in range(empty):
        agg.push([None, None], row_index=len(rows) + i)
    return agg


def test_the_aggregators_normal_interval_counts_only_rows_with_a_score() -> None:
    iv = _aggregator(DATA, EMPTY).intervals(method="normal")["mean"]
    low, high = _scipy_t(DATA)
    assert (iv.low, iv.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


def test_the_paired_difference_counts_only_rows_with_data_on_a_side() -> None:
    other = [3.0, 4.5, 6.0, 4.0, 2.75]
    result = compare(_aggregator(DATA, EMPTY), _aggregator(other, EMPTY), method="normal")
    d = result.differences["mean"]
    low, high = sps.ttest_rel(DATA, other).confidence_interval(0.95)
    assert d.estimate == pytest.approx(np.mean(DATA) - np.mean(other), abs=1e-12)
    assert (d.low, d.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))


def _rubric_log(path: Path, means: list[float], empty: int) -> Path:
    """A rubric log (a failed judgement is no score, not 0): rows of two scored judgements, then ``empty``
    rows whose judgements all failed."""
    lines: list[dict[str, object]] = [
        {"format": "osmosis-results/1", "kind": "rubric", "config": {"eval_fns": ["judge"], "n_runs": 2}}
    ]
    for r in range(len(means) + empty):
        for i in range(2):
            record: dict[str, object] = {"row_key": f"k{r}", "row_index": r, "run_index": i}
            if r < len(means):
                record.update(success=True, scores={"judge": means[r] + (0.5 if i else -0.5)})
            else:
                record.update(success=False, scores={}, error="judge timed out")
            lines.append(record)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_compare_results_counts_only_rows_with_data(tmp_path: Path) -> None:
    other = [3.0, 4.5, 6.0, 4.0, 2.75]
    a = _rubric_log(tmp_path / "a.jsonl", DATA, EMPTY)
    b = _rubric_log(tmp_path / "b.jsonl", other, EMPTY)
    d = compare_results(a, b).differences["mean"]
    low, high = sps.ttest_rel(other, DATA).confidence_interval(0.95)
    assert d.estimate == pytest.approx(np.mean(other) - np.mean(DATA), abs=1e-12)
    assert (d.low, d.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert d.p_value == pytest.approx(sps.ttest_rel(other, DATA).pvalue, abs=1e-9)
