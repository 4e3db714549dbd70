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
    n = max((len(scores) for _, scores in rows), default=1)  # declared, as the commands do
    header = {"format": "osmosis-results/1", "kind": kind, "config": {"eval_fns": ["acc"], "model": "m", "n_runs": n},
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
    """B - A of pass@k per row, flips on run 0, the paired Student t interval (scipy's quantile) kept
    inside [-1, 1], where a difference of pass rates lies."""
    from scipy.stats import t as student

    def count(scores: list[float | None]) -> tuple[int, int]:
        return len(scores), sum(1 for s in scores if s is not None and s >= 1.0)

    diffs = []
    for ra, rb in zip(a_rows, b_rows, strict=True):
        (na, ca), (nb, cb) = count(ra), count(rb)
        diffs.append(pass_at_k_reference(nb, cb, k) - pass_at_k_reference(na, ca, k))
    first = [(ra[0] == 1.0, rb[0] == 1.0) for ra, rb in zip(a_rows, b_rows, strict=True)]
    a_only, b_only = sum(x and not y for x, y in first), sum(y and not x for x, y in first)
    half = student.ppf(0.975, len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs))
    mean = statistics.fmean(diffs)
    low, high = max(mean - half, -1.0), min(mean + half, 1.0)
    return {"estimate": mean, "low": low, "high": high, "a_only": a_only, "b_only": b_only}


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
    result = osmosis_ai.compare(a, b, method="t")
    assert (result.rows_matched, result.matched_by) == (rows, "row_key")
    for k in range(1, n + 1):
        ref = _reference(a_rows, b_rows, k)
        got = result.differences[f"pass_at_{k}"]
        assert got["estimate"] == pytest.approx(ref["estimate"], abs=1e-12)
        if ref["high"] - ref["low"] > 1e-12:
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
    one = osmosis_ai.compare(a, b, method="bootstrap", seed=3)
    assert one.differences == osmosis_ai.compare(a, b, method="bootstrap", seed=3).differences
    iv = one.differences["pass_at_1"]
    assert iv["method"] == "bootstrap" and 0 < iv["low"] < iv["estimate"] < iv["high"]
    assert one.flips == {"a_only": 0, "b_only": 36, "both": 12, "neither": 12}
    assert one.mcnemar_p == pytest.approx(mcnemar_reference(0, 36))
    assert one.changed_rows[0]["status"] == "improved" and len(one.changed_rows) == 20
    assert one.changed_rows[0]["pass_rate_a"] == 0.0 and one.changed_rows[0]["pass_rate_b"] == 1.0
    assert one.verdict["outcome"] == "b_better"
    same = osmosis_ai.compare(a, a)
    # No spread: no interval (never a point interval), and the note says why.
    assert all(v["estimate"] == 0.0 and v["low"] is None and v["note"] for v in same.differences.values())
    assert (
        same.mcnemar_p == 1.0 and same.changed_rows == [] and same.verdict["outcome"] == "no_clear_difference"
    )


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


def _page_lines(page: Path, element_id: str) -> list[Any]:
    """The JSON lines of one of a page's compressed data blocks, decoded as the browser does."""
    import base64
    import gzip
    import re

    found = re.search(rf'id="{element_id}"[^>]*>([^<]*)</script>', page.read_text())
    assert found is not None, element_id
    raw = gzip.decompress(base64.b64decode(found.group(1))) if found.group(1) else b""
    return [json.loads(line) for line in raw.splitlines()]


def test_report_data_holds_every_row_and_the_numbers_agree(tmp_path: Path) -> None:
    rng = random.Random(5)
    rows = [(f"k{i}", runs) for i, runs in enumerate(_runs(rng, 50, 4))]
    log = write_log(
        tmp_path / "log.jsonl", rows, extra={"messages": [{"role": "assistant", "content": "hi"}]}
    )
    result = osmosis_ai.report(log, output=tmp_path / "page.html")
    run = result.runs[0]
    every = sum(all(s == 1.0 for s in scores) for _, scores in rows)
    errored = sum(any(s is None for s in scores) for _, scores in rows)
    none = sum(all(s == 0.0 for s in scores) for _, scores in rows)
    assert run.rows_total == 50 and run.runs_total == 200 and run.runs_left_out == 0
    assert run.row_counts == {"incomplete": 0, "errored": errored, "passed_every_attempt": every,
                              "passed_some": 50 - every - errored - none, "passed_none": none}  # fmt: skip
    acc = run.summary["models"][0]["functions"][0]
    ref = statistics.fmean(pass_at_k_reference(4, sum(x == 1.0 for x in sc), 2) for _, sc in rows)
    assert acc["pass_at_k"]["2"] == pytest.approx(ref) and acc["intervals"]["pass_at_2"]["low"] <= ref
    assert acc["runs"]["errored_run"] == sum(s is None for _, sc in rows for s in sc)
    # Every row and every run is in the page, and each row's outcome is the one the summary counts.
    page = tmp_path / "page.html"
    listed = _page_lines(page, "rows-data-0")
    assert [r["i"] for r in listed] == list(range(50)) and len(_page_lines(page, "runs-data-0")) == 200
    counted = {k: sum(r["out"]["acc"]["cat"] == k for r in listed) for k in acc["rows"]}
    assert counted == acc["rows"]
    text = page.read_text()
    assert result.html_bytes == len(text.encode()) and "unsafe-inline" not in text.split("<style>")[0]
    assert "http://" not in text.replace("http://www.w3.org", "") and "https://" not in text


def test_a_page_past_its_data_limit_lists_every_row_and_says_which_runs_it_left_out(tmp_path: Path) -> None:
    rows = [(f"k{i}", [1.0, 0.0, None]) for i in range(400)]
    log = write_log(
        tmp_path / "log.jsonl", rows, extra={"messages": [{"role": "assistant", "content": "x" * 300}]}
    )
    result = osmosis_ai.report(log, output=tmp_path / "page.html", max_data_mb=0.01)
    run = result.runs[0]
    page = tmp_path / "page.html"
    kept = len(_page_lines(page, "runs-data-0"))
    assert 0 < kept < 1200 and run.runs_left_out == 1200 - kept and run.rows_left_out > 0
    assert len(_page_lines(page, "rows-data-0")) == 400 and "osmosis view" in run.meta["left_out_note"]
    assert result.data_bytes < 0.01 * (1 << 20) + 64 * 1024  # the limit, give or take one flush


def test_report_and_compare_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_log(tmp_path / "a.jsonl", [(f"k{i}", [float(i % 2), 1.0]) for i in range(12)])
    b = write_log(tmp_path / "b.jsonl", [(f"k{i}", [1.0, 1.0]) for i in range(12)])
    assert main(["report", str(a), str(b), "-o", str(tmp_path / "r.html")]) == 0
    assert "Wrote" in capsys.readouterr().out and (tmp_path / "r.html").stat().st_size > 0
    assert main(["compare", str(a), str(b), "-o", str(tmp_path / "c.html")]) == 0
    out = capsys.readouterr().out
    assert "pass@1" in out and "McNemar exact p = 0.03125" in out and (tmp_path / "c.html").exists()
    changed = out.split("Rows that changed most (pass rate A -> B):\n")[1].splitlines()
    assert changed[0] == "  row 0: 0.50 -> 1.00" and not any("k0" in line for line in changed)
    assert main(["compare", str(a), str(b), "--json"]) == 0
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["schema_version"] == 1 and envelope["data"]["flips"]["b_only"] == 6
    assert "runs" not in envelope["data"]["changed_rows"][0]
    c = write_log(tmp_path / "c.jsonl", [(f"other{i}", [1.0]) for i in range(5)])
    assert main(["compare", str(a), str(c)]) == 1
    assert "0 rows match by content (A has 12 rows, B has 5)" in capsys.readouterr().err


def test_a_rubric_log_of_an_earlier_version_reads_numbered_from_zero(tmp_path: Path) -> None:
    # Rubric logs before `index_base` counted rows and runs from 1; the page reads them as the model does.
    header = {"format": "osmosis-results/1", "kind": "rubric", "config": {"rubric_id": "helpful", "n_runs": 2},
              "osmosis_version": "0.3.2"}  # fmt: skip
    records = [{"row_index": i + 1, "run_index": r + 1, "success": True, "status": "success",
                "scores": {"helpful": float(i == r)}, "explanation": f"row {i}"} for i in range(3) for r in range(2)]  # fmt: skip
    log = tmp_path / "old.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in [header, *records]))
    result = osmosis_ai.report(log, output=tmp_path / "old.html")
    listed = _page_lines(tmp_path / "old.html", "rows-data-0")
    assert [r["i"] for r in listed] == [0, 1, 2] and [r["out"]["helpful"]["runs"] for r in listed] == [
        "PN",
        "NP",
        "NN",
    ]
    rows = result.runs[0].summary["models"][0]["functions"][0]["rows"]
    assert {k: sum(r["out"]["helpful"]["cat"] == k for r in listed) for k in rows} == rows
    runs = _page_lines(tmp_path / "old.html", "runs-data-0")
    assert sorted((line[0], line[2]["run_index"]) for line in runs) == [
        (i, r) for i in range(3) for r in range(2)
    ]
    # Repeat noise names each record as eval-rubric's output does, record[<row + 1>] without an id (one
    # numbering: row 0 is record[1]), with its own scores (row 2 judged 0 twice has no spread).
    noise = result.runs[0].meta["judge"]["noise"]
    assert noise["records"] == 3 and noise["disagreeing"] == 2
    assert sorted((e["record"], e["scores"]) for e in noise["examples"]) == [
        ("record[1]", [1.0, 0.0]),
        ("record[2]", [0.0, 1.0]),
    ]


def test_group_numbers_are_the_result_model_of_the_groups_rows(tmp_path: Path) -> None:
    # Each group of a dataset field is measured as a file of only its rows would be by read_results:
    # the same mean and pass rates, and the same intervals (t, Wilson; none where the data give none).
    from osmosis_ai.results import read_results
    from tests.report_logs import dataset_rows, write_eval_log

    log, _ = write_eval_log(tmp_path, rows=40, n=4)
    result = osmosis_ai.report(log, output=tmp_path / "page.html")
    header, *records = (json.loads(line) for line in log.read_text().splitlines())
    fields = dataset_rows(40)
    for field in ("topic", "difficulty"):
        for group in result.runs[0].meta["groups"][field]:
            members = {i for i, row in enumerate(fields) if row[field] == group["value"]}
            subset = tmp_path / f"{field}-{group['value']}.jsonl"
            lines = [header, *(r for r in records if r["row_index"] in members)]
            subset.write_text("".join(json.dumps(x) + "\n" for x in lines))
            for model in read_results(subset).to_dict()["models"][0]["functions"]:
                stats = group["stats"][model["name"]]
                assert stats["rows"] == len(members)
                assert stats["mean"] == pytest.approx(model["mean"])
                assert stats["mean_interval"] == pytest.approx(model["intervals"]["mean"])
                for k in ("1", "4"):
                    assert stats["pass_at_k"][k]["value"] == pytest.approx(model["pass_at_k"][k])
                    interval = stats["pass_at_k"][k]["interval"]
                    assert interval == pytest.approx(model["intervals"][f"pass_at_{k}"])
                    assert interval["method"] == "wilson"


def test_group_deltas_are_the_comparison_model_of_the_groups_rows(tmp_path: Path) -> None:
    # Each group's B - A is what compare_results says of two files holding only that group's rows.
    from osmosis_ai.results import compare_results
    from tests.report_logs import dataset_rows, write_eval_log

    a, _ = write_eval_log(tmp_path, rows=40, n=4)
    b, _ = write_eval_log(tmp_path, rows=40, n=4, variant="b")
    result = osmosis_ai.compare(a, b)
    fields = dataset_rows(40)
    for field in ("topic", "difficulty"):
        for group in result.groups[field]:
            members = {i for i, row in enumerate(fields) if row[field] == group["value"]}
            subsets = []
            for side in (a, b):
                header, *records = (json.loads(line) for line in side.read_text().splitlines())
                subset = tmp_path / f"{side.stem}-{field}-{group['value']}.jsonl"
                lines = [header, *(r for r in records if r["row_index"] in members)]
                subset.write_text("".join(json.dumps(x) + "\n" for x in lines))
                subsets.append(subset)
            model = compare_results(*subsets).to_dict()["differences"]
            assert group["rows"] == len(members) and set(group["differences"]) == {"mean", "pass_at_1"}
            for name, difference in group["differences"].items():
                expected = {k: v for k, v in model[name].items() if k not in ("p_holm", "verdict")}
                assert difference == pytest.approx(expected)


def test_only_fields_that_group_rows_are_offered_for_groups() -> None:
    # A field with one value groups nothing; nor does one unique to every row (an id, an answer).
    from osmosis_ai.report._figures import group_fields

    rows = {i: {"fields": {"topic": "ab"[i % 2], "uid": f"u{i}", "same": "x"}} for i in range(6)}
    assert group_fields(rows) == {"topic": {"a": [0, 2, 4], "b": [1, 3, 5]}}


def test_the_compare_curves_are_each_runs_pass_at_k_with_its_intervals(tmp_path: Path) -> None:
    from osmosis_ai.report._compare_page import figure_specs
    from osmosis_ai.results import read_results
    from tests.report_logs import write_eval_log

    a, _ = write_eval_log(tmp_path, rows=30, n=4)
    b, _ = write_eval_log(tmp_path, rows=30, n=4, variant="b")
    result = osmosis_ai.compare(a, b)
    points = dict(figure_specs(result))["c:pass-curves"]["data"]["values"]
    for run, path in (("A", a), ("B", b)):
        model = read_results(path).model().function(result.metric)
        drawn = {
            p["k"]: (p["value"], p["low"], p["high"]) for p in points if p["statistic"] == f"{run} pass@k"
        }
        assert drawn == {
            int(k): pytest.approx(
                (v, model.intervals[f"pass_at_{k}"].low, model.intervals[f"pass_at_{k}"].high)
            )
            for k, v in model.pass_at_k.items()
        }


def test_the_dataset_of_a_log_is_found_from_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Finding 9: a log started with a dataset path relative to the cwd; the report runs elsewhere.
    from osmosis_ai.runs.log import ResultsLog, dataset_fingerprint
    from tests.report_logs import write_eval_log

    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir(), elsewhere.mkdir()
    log, dataset = write_eval_log(work, rows=10, n=2)
    monkeypatch.chdir(work)
    ResultsLog.create(work / "new.jsonl", {}, dataset=dataset_fingerprint(Path(dataset.name))).close()
    header = json.loads((work / "new.jsonl").read_text().splitlines()[0])
    assert header["dataset"]["path"] == str(dataset)  # absolute: read from anywhere
    # A log of an earlier version holds the relative path: looked for beside the log when not in the cwd.
    lines = log.read_text().splitlines()
    older = {**json.loads(lines[0]), "dataset": {**json.loads(lines[0])["dataset"], "path": dataset.name}}
    log.write_text("\n".join([json.dumps(older), *lines[1:]]) + "\n")
    monkeypatch.chdir(elsewhere)
    run = osmosis_ai.report(log, output=elsewhere / "page.html").runs[0]
    assert run.meta["notes"] == [] and run.meta["dataset_read"] == str(dataset)
    assert run.meta["groups"], "the dataset's fields group the rows"
