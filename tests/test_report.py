"""osmosis report / compare: McNemar and paired comparisons against pure-Python references, the report's
data, bounded pages, and the two commands."""

from __future__ import annotations

import json
import math
import random
import statistics
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osmosis_ai
from osmosis_ai.cli.main import main
from osmosis_ai.errors import StatsError
from osmosis_ai.stats import mcnemar_exact


def mcnemar_reference(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value with exact rational arithmetic."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(Fraction(math.comb(n, i), 2**n) for i in range(min(b, c) + 1))
    return float(min(Fraction(1), 2 * tail))


def pass_at_k_reference(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k_reference(n: int, c: int, k: int) -> float:
    return math.comb(c, k) / math.comb(n, k)


def write_log(path: Path, rows: list[tuple[str, list[float | None]]], *, kind: str = "eval", order: list[int] | None = None,
              offset: int = 0, extra: dict[str, Any] | None = None) -> Path:  # fmt: skip
    """A results log: ``rows`` are (content key, scores per attempt; None = a failed run)."""
    header = {"format": "osmosis-results/1", "kind": kind, "config": {"eval_fns": ["acc"], "model": "m"},
              "dataset": {"path": "d.jsonl", "size": 1, "fingerprint": "f"}, "created_at": "2026-11-25T00:00:00Z"}  # fmt: skip
    lines = [header]
    for position in order if order is not None else range(len(rows)):
        key, scores = rows[position]
        for run, score in enumerate(scores):
            record = {"row_key": key, "row_index": position + offset, "run_index": run, "model_tag": "",
                      "success": score is not None, "scores": {} if score is None else {"acc": score},
                      "error": None if score is not None else "agent failed", "duration_ms": 10.0 + run, "tokens": 5}  # fmt: skip
            record.update(extra or {})
            lines.append(record)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


# --- McNemar -------------------------------------------------------------------------------------------


def test_mcnemar_on_known_tables() -> None:
    assert mcnemar_exact(0, 5) == pytest.approx(1 / 16, rel=1e-12)
    assert mcnemar_exact(2, 8) == pytest.approx(0.109375, rel=1e-12)
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024, rel=1e-12)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(12, 12) == 1.0
    # Symmetric in its arguments; a huge table agrees with the normal approximation (continuity-corrected).
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    approx = 2 * statistics.NormalDist().cdf(-(1000 - 1) / math.sqrt(81_000))
    assert mcnemar_exact(40_000, 41_000) == pytest.approx(approx, rel=0.02)
    with pytest.raises(StatsError, match="counts must be >= 0"):
        mcnemar_exact(-1, 3)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 600), st.integers(0, 600))
def test_mcnemar_matches_the_exact_rational_reference(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(mcnemar_reference(b, c), rel=1e-9, abs=1e-300)


# --- compare --------------------------------------------------------------------------------------------


def _reference(a_rows: list[list[float | None]], b_rows: list[list[float | None]], k: int) -> dict[str, Any]:
    """B - A of pass@k per row, flips on run 0, the paired Student t interval (scipy's quantile)."""
    from scipy import stats as scipy_stats

    def count(scores: list[float | None]) -> tuple[int, int]:
        return len(scores), sum(1 for s in scores if s is not None and s >= 1.0)

    diffs = []
    for ra, rb in zip(a_rows, b_rows, strict=True):
        (na, ca), (nb, cb) = count(ra), count(rb)
        diffs.append(pass_at_k_reference(nb, cb, k) - pass_at_k_reference(na, ca, k))
    first = [(ra[0] == 1.0, rb[0] == 1.0) for ra, rb in zip(a_rows, b_rows, strict=True)]
    a_only, b_only = sum(x and not y for x, y in first), sum(y and not x for x, y in first)
    half = scipy_stats.t.ppf(0.975, len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs))
    mean = statistics.fmean(diffs)
    return {"estimate": mean, "low": mean - half, "high": mean + half, "a_only": a_only, "b_only": b_only}


def _runs(rng: random.Random, rows: int, n: int) -> list[list[float | None]]:
    out = []
    for _ in range(rows):
        p = rng.random()
        out.append([None if rng.random() < 0.05 else float(rng.random() < p) for _ in range(n)])
    return out


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 40), st.integers(1, 5))
def test_compare_matches_a_pure_python_reference(
    tmp_path_factory: pytest.TempPathFactory, seed: int, rows: int, n: int
) -> None:
    rng = random.Random(seed)
    a_rows, b_rows = _runs(rng, rows, n), _runs(rng, rows, n)
    folder = tmp_path_factory.mktemp("cmp")
    keys = [f"key-{i}" for i in range(rows)]
    a = write_log(folder / "a.jsonl", list(zip(keys, a_rows, strict=True)))
    # B wrote its rows in another order and at other positions: rows pair by content, not position.
    order = list(range(rows))
    rng.shuffle(order)
    b = write_log(folder / "b.jsonl", list(zip(keys, b_rows, strict=True)), order=order, offset=1000)
    result = osmosis_ai.compare(a, b, method="normal")
    assert (result.rows_matched, result.matched_by) == (rows, "row_key")
    for k in range(1, n + 1):
        ref = _reference(a_rows, b_rows, k)
        got = result.differences[f"pass_at_{k}"]
        assert got["estimate"] == pytest.approx(ref["estimate"], abs=1e-12)
        if ref["high"] > ref["low"]:
            assert (got["low"], got["high"]) == (
                pytest.approx(ref["low"], abs=1e-9),
                pytest.approx(ref["high"], abs=1e-9),
            )
    assert (result.flips["a_only"], result.flips["b_only"]) == (ref["a_only"], ref["b_only"])
    assert result.mcnemar_p == pytest.approx(mcnemar_reference(ref["a_only"], ref["b_only"]), rel=1e-9)
    assert sum(result.flips.values()) == rows


def test_paired_bootstrap_is_seeded_and_covers_a_real_difference(tmp_path: Path) -> None:
    rows = [(f"k{i}", [float(i % 5 == 0)] * 3) for i in range(60)]
    better = [(f"k{i}", [float(i % 5 != 1)] * 3) for i in range(60)]
    a, b = write_log(tmp_path / "a.jsonl", rows), write_log(tmp_path / "b.jsonl", better)
    one = osmosis_ai.compare(a, b, seed=3)
    assert one.differences == osmosis_ai.compare(a, b, seed=3).differences
    iv = one.differences["pass_at_1"]
    assert iv["method"] == "bootstrap" and 0 < iv["low"] < iv["estimate"] < iv["high"]
    assert one.flips == {"a_only": 0, "b_only": 36, "both": 12, "neither": 12}
    assert one.mcnemar_p == pytest.approx(mcnemar_reference(0, 36))
    assert one.changed_rows[0]["status"] == "improved" and len(one.changed_rows) == 20
    assert {run["model_tag"] for run in one.changed_rows[0]["runs"]} == {"A", "B"}
    same = osmosis_ai.compare(a, a)
    # No spread: no interval (never a point), and a note saying why (issue #28 finding 6).
    assert all(v["low"] is None and v["note"] for v in same.differences.values())
    assert same.mcnemar_p == 1.0 and same.changed_rows == []


def test_compare_refuses_different_datasets_and_says_how_many_rows_match(tmp_path: Path) -> None:
    a = write_log(tmp_path / "a.jsonl", [(f"k{i}", [1.0, 0.0]) for i in range(10)])
    b = write_log(tmp_path / "b.jsonl", [(f"k{i}", [1.0, 1.0]) for i in range(7, 20)])
    with pytest.raises(
        StatsError, match=r"different datasets: 3 rows match by content \(A has 10 rows, B has 13\)"
    ):
        osmosis_ai.compare(a, b)
    partial = osmosis_ai.compare(a, b, allow_partial=True)
    assert partial.rows_matched == 3 and partial.differences["pass_at_1"]["estimate"] == pytest.approx(0.5)
    with pytest.raises(StatsError, match="no score named 'nope'"):
        osmosis_ai.compare(a, a, metric="nope")


# --- report data ----------------------------------------------------------------------------------------


def test_report_data_and_a_bounded_page(tmp_path: Path) -> None:
    rng = random.Random(5)
    rows = [(f"k{i}", runs) for i, runs in enumerate(_runs(rng, 50, 4))]
    log = write_log(
        tmp_path / "log.jsonl", rows, extra={"messages": [{"role": "assistant", "content": "hi"}]}
    )
    result = osmosis_ai.report(log, output=tmp_path / "page.html", max_rows=7)
    run = result.runs[0]
    passed = sum(all(s == 1.0 for s in scores) for _, scores in rows)
    errored = sum(any(s is None for s in scores) for _, scores in rows)
    assert run.rows_total == 50 and run.row_counts == {
        "passed": passed,
        "errored": errored,
        "failed": 50 - passed - errored,
    }
    scored = sum(s is not None for _, scores in rows for s in scores)
    assert sum(b["count"] for b in run.histograms["score:acc"]) == scored
    assert sum(b["count"] for b in run.histograms["latency_ms"]) == 200
    s = run.metrics["primary"]["acc"]
    ref = statistics.fmean(pass_at_k_reference(4, sum(x == 1.0 for x in sc), 2) for _, sc in rows)
    assert s["pass_at_k"]["2"] == pytest.approx(ref) and s["intervals"]["pass_at_2"]["low"] <= ref
    assert [r["status"] for r in run.rows][: errored if errored < 7 else 7] == ["errored"] * min(errored, 7)
    assert len(run.rows) == 7 and run.header["dataset"]["fingerprint"] == "f"
    page = (tmp_path / "page.html").read_text()
    assert "embeds 7 of 50 rows" in page and result.html_bytes == len(page.encode())
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page


def test_report_and_compare_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_log(tmp_path / "a.jsonl", [(f"k{i}", [float(i % 2), 1.0]) for i in range(12)])
    b = write_log(tmp_path / "b.jsonl", [(f"k{i}", [1.0, 1.0]) for i in range(12)])
    assert main(["report", str(a), str(b), "-o", str(tmp_path / "r.html")]) == 0
    assert "Wrote" in capsys.readouterr().out and (tmp_path / "r.html").stat().st_size > 0
    assert main(["compare", str(a), str(b), "-o", str(tmp_path / "c.html")]) == 0
    out = capsys.readouterr().out
    assert "pass@1" in out and "McNemar exact p = 0.03125" in out and (tmp_path / "c.html").exists()
    assert main(["compare", str(a), str(b), "--json"]) == 0
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["schema_version"] == 1 and envelope["data"]["flips"]["b_only"] == 6
    assert "runs" not in envelope["data"]["changed_rows"][0]
    c = write_log(tmp_path / "c.jsonl", [(f"other{i}", [1.0]) for i in range(5)])
    assert main(["compare", str(a), str(c)]) == 1
    assert "0 rows match by content (A has 12 rows, B has 5)" in capsys.readouterr().err
