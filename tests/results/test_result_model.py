"""The one result model (osmosis_ai.results): the findings of issue #28 it fixes, every layout it reads,
its vocabulary and its JSON form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

import osmosis_ai
from osmosis_ai import _core
from osmosis_ai.errors import StatsError
from osmosis_ai.results import (
    RESULT_SCHEMA,
    ResultSummary,
    RowOutcome,
    RunOutcome,
    compare_results,
    read_results,
)
from osmosis_ai.runs.log import ResultsLog
from osmosis_ai.stats import confidence_interval


def _log(path: Path, config: dict[str, Any], records: list[dict[str, Any]], kind: str = "eval") -> Path:
    lines = [{"format": "osmosis-results/1", "kind": kind, "config": config}, *records]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _run(row: int, run: int, **fields: Any) -> dict[str, Any]:
    return {"row_key": f"k{row}", "row_index": row, "run_index": run, "success": True, "scores": {}, **fields}


def _codes(summary: ResultSummary) -> list[str]:
    return [w.code for w in summary.warnings]


# --- finding 1: nothing scored is null, never 0 --------------------------------------------------------


def test_finding_1_every_run_errored_is_null_not_zero(tmp_path: Path) -> None:
    records = [_run(0, i, success=False, error=e) for i, e in enumerate(["429", "500", "timed out"])]
    records += [_run(1, i, eval_errors={"m:acc": "ValueError: bad"}) for i in range(3)]
    summary = read_results(_log(tmp_path / "log.jsonl", {"eval_fns": ["m:acc"], "n_runs": 3}, records))
    acc = summary.model().function("m:acc")
    assert (acc.mean, acc.std, acc.min, acc.max, acc.pass_rate) == (None, None, None, None, None)
    assert (acc.pass_at_k, acc.intervals, acc.graded) == ({}, {}, 0)
    assert (acc.runs.errored, acc.runs.errored_run, acc.runs.errored_function) == (6, 3, 3)
    assert acc.rows.errored == 2
    message = next(w.message for w in summary.warnings if w.code == "nothing_scored")
    assert message == "m:acc: no run was scored (6 errored, 0 unscored): its mean and pass rates are n/a"


def test_finding_1_an_eval_run_without_a_grade_has_no_pass_rate(tmp_path: Path) -> None:
    records = [
        {**_run(r, 0, success=False, status="failed", error="agent"), "rollout_id": f"x{r}"} for r in range(5)
    ]
    config = {"n": 1, "dataset": {"sha256": "x", "selected_source_rows": "0-4"}}
    summary = read_results(_log(tmp_path / "results.jsonl", config, records, kind="eval-run"))
    model = summary.model()
    assert (model.total_runs, model.failed_runs, model.planned_runs) == (5, 5, 5)
    reward = model.function("reward")
    assert (reward.graded, reward.pass_rate, reward.mean, reward.pass_at_k) == (0, None, None, {})
    assert "reward: no run was scored (5 errored, 0 unscored)" in " ".join(
        w.message for w in summary.warnings
    )


# --- finding 2: pass@n of an incomplete log -----------------------------------------------------------


def test_finding_2_missing_runs_count_as_did_not_pass_and_are_warned(tmp_path: Path) -> None:
    records = []
    for row in range(25):
        for run in range(4):
            if row % 2 == 0 and run > 0:
                continue  # runs 1-3 removed from the even rows
            records.append(_run(row, run, scores={"acc": float((row + run) % 3 == 0)}))
    summary = read_results(_log(tmp_path / "log.jsonl", {"eval_fns": ["acc"], "n_runs": 4}, records))
    acc = summary.model().function("acc")
    assert acc.ks == (1, 2, 3, 4)
    assert acc.pass_at_k[4] != acc.pass_at_k[1]
    assert acc.pass_at_k_rows == {1: 25, 2: 25, 3: 25, 4: 25}
    observed_rows = {k: acc.observed_rows[k] for k in acc.ks}
    assert observed_rows == {1: 25, 2: 12, 3: 12, 4: 12}
    assert acc.rows.incomplete == 13 and acc.runs.missing == 39
    [warning] = [w for w in summary.warnings if w.code == "incomplete"]
    assert warning.count == 39
    assert warning.message.startswith(
        "incomplete log: 39 of 100 planned runs are missing (13 rows short of n = 4)"
    )


def test_a_header_with_the_plan_counts_rows_that_never_finished_a_run(tmp_path: Path) -> None:
    records = [_run(row, run, scores={"acc": 1.0}) for row in range(2) for run in range(2)]
    config = {"eval_fns": ["acc"], "n_runs": 2}
    older = read_results(_log(tmp_path / "old.jsonl", config, records))  # no "planned": as before
    assert (older.model().planned_rows, older.model().planned_runs) == (2, 4)
    assert "incomplete" not in _codes(older)
    path = _log(tmp_path / "new.jsonl", config, records)
    lines = path.read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), "planned": {"rows": 5, "runs": 10}})
    path.write_text("\n".join(lines) + "\n")
    model = read_results(path).model()
    assert (model.total_rows, model.planned_rows, model.planned_runs, model.missing_runs) == (2, 5, 10, 6)
    acc = model.function("acc")
    assert acc.rows.incomplete == 3 and acc.pass_at_k[1] == pytest.approx(0.4)
    [warning] = [w for w in read_results(path).warnings if w.code == "incomplete"]
    assert warning.message.startswith(
        "incomplete log: 6 of 10 planned runs are missing (3 rows with no finished run, 0 short of n = 2)"
    )
    # Stopped before any run finished: nothing to summarise, and the warning still says what never ran.
    path.write_text(lines[0] + "\n")
    [warning] = [w for w in read_results(path).warnings if w.code == "incomplete"]
    assert warning.message.startswith("incomplete log: 10 of 10 planned runs are missing (5 rows with no")


# --- finding 5: durations -----------------------------------------------------------------------------


def test_finding_5_wall_time_adds_up_over_resumes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    config = {"eval_fns": ["acc"], "n_runs": 1}
    with ResultsLog.create(path, config) as log:
        log.append(_run(0, 0, scores={"acc": 1.0}, duration_ms=5000.0))
    for row in (1, 2):
        with ResultsLog.resume(path, config) as log:
            log.append(_run(row, 0, scores={"acc": 0.0}, duration_ms=5000.0))
    summary = read_results(path)
    durations = summary.durations
    assert [i.index for i in durations.invocations] == [0, 1, 2]
    assert durations.total_duration_ms == pytest.approx(sum(i.wall_ms for i in durations.invocations))
    assert durations.cpu_ms is not None and durations.unrecorded_runs == 0
    # The runs' own durations are a different number, and said so by name.
    assert durations.run_time_ms == 15000.0
    assert "durations_unrecorded" not in _codes(summary)


def test_finding_5_an_old_log_says_wall_time_is_unknown(tmp_path: Path) -> None:
    records = [_run(0, 0, scores={"acc": 1.0}, duration_ms=10.0)]
    summary = read_results(_log(tmp_path / "old.jsonl", {"eval_fns": ["acc"], "n_runs": 1}, records))
    assert (summary.durations.total_duration_ms, summary.durations.cpu_ms) == (None, None)
    assert summary.durations.run_time_ms == 10.0
    assert _codes(summary) == ["durations_unrecorded"]


# --- finding 6: intervals that are too sure -------------------------------------------------------------


def test_finding_6_confidence_interval_is_never_surer_than_the_data() -> None:
    five = confidence_interval([1.0] * 5)
    assert (round(five.low, 3), five.high, five.method) == (0.566, 1.0, "wilson")
    one_in_ten = confidence_interval([1.0] + [0.0] * 9)
    assert (round(one_in_ten.low, 3), round(one_in_ten.high, 3)) == (0.018, 0.404)
    # The normal interval now uses Student's t (z was about 29% too narrow at 5 rows).
    values = [0.0, 2.0, 2.0, 0.0, 2.0]
    normal = confidence_interval(values, method="normal")
    assert normal.high - normal.estimate == pytest.approx(2.7764451051977987 * (1.2 / 5) ** 0.5)
    # Values in [0, 1] keep their interval there (t reached 1.28 for these five rows).
    assert confidence_interval([v / 2 for v in values], method="normal").high == 1.0
    with pytest.raises(StatsError, match="no spread"):
        confidence_interval([1.0] * 5, method="t")
    with pytest.raises(StatsError, match="at least 10 rows"):
        confidence_interval([1.0] * 5, method="bootstrap")


def _pair(tmp_path: Path, rows: int, runs: int, a: float, b: float) -> tuple[Path, Path]:
    def one(name: str, score: float) -> Path:
        records = [_run(r, i, scores={"acc": score}) for r in range(rows) for i in range(runs)]
        return _log(tmp_path / name, {"eval_fns": ["acc"], "n_runs": runs}, records)

    return one("a.jsonl", a), one("b.jsonl", b)


@pytest.mark.parametrize(("rows", "runs"), [(2, 1), (3, 3)])
def test_finding_6_compare_gives_no_verdict_its_own_test_does_not_back(
    tmp_path: Path, rows: int, runs: int
) -> None:
    result = compare_results(*_pair(tmp_path, rows, runs, 0.0, 1.0))
    pass1 = result.differences["pass_at_1"]
    assert pass1.estimate == 1.0 and (pass1.low, pass1.high) == (None, None) and pass1.note
    assert result.verdict.outcome == "no_clear_difference"
    assert result.mcnemar_p == pytest.approx(0.5 if rows == 2 else 0.25)
    [note] = [w for w in result.warnings if w.code == "multiplicity"]
    assert note.count == result.tested


def test_a_clear_difference_gets_a_verdict_with_holm(tmp_path: Path) -> None:
    def one(name: str, passing: int) -> Path:
        records = [_run(r, 0, scores={"acc": float(r < passing or r % 7 == 0)}) for r in range(40)]
        return _log(tmp_path / name, {"eval_fns": ["acc"], "n_runs": 1}, records)

    result = compare_results(one("a.jsonl", 5), one("b.jsonl", 35))
    assert result.verdict.outcome == "b_better"
    d = result.differences["pass_at_1"]
    assert d.p_holm is not None and d.p_value is not None and d.p_holm >= d.p_value and d.low > 0


# --- finding 7: compare never truncates n silently --------------------------------------------------------


def test_finding_7_unequal_n_is_aligned_not_truncated(tmp_path: Path) -> None:
    def one(name: str, n: int) -> Path:
        records = [
            _run(r, i, scores={"acc": float(i == 4 and r % 5 == 0)}) for r in range(10) for i in range(n)
        ]
        return _log(tmp_path / name, {"eval_fns": ["acc"], "n_runs": n}, records)

    a, b = one("a.jsonl", 5), one("b.jsonl", 4)
    own = read_results(a).model().function("acc")
    result = compare_results(a, b)
    assert own.mean == pytest.approx(0.04)
    # A's values are its own over all its runs: its fifth run is not cut to B's n.
    assert result.differences["mean"].a == pytest.approx(own.mean)
    assert result.differences["pass_at_1"].a == pytest.approx(own.pass_at_k[1])
    assert result.ks == (1, 2, 3, 4) and result.a.summary.ks == (1, 2, 3, 4, 5)
    [warning] = [w for w in result.warnings if w.code == "n_differs"]
    assert "A has n = 5 runs per row, B n = 4" in warning.message


def test_compare_refuses_different_rows_unless_partial(tmp_path: Path) -> None:
    a = _log(
        tmp_path / "a.jsonl",
        {"eval_fns": ["acc"], "n_runs": 1},
        [_run(r, 0, scores={"acc": 1.0}) for r in range(4)],
    )
    b = _log(
        tmp_path / "b.jsonl",
        {"eval_fns": ["acc"], "n_runs": 1},
        [_run(r, 0, scores={"acc": 0.0}) for r in range(3)],
    )
    with pytest.raises(StatsError, match="3 rows match by content"):
        compare_results(a, b)
    result = compare_results(a, b, allow_partial=True)
    assert result.rows_matched == 3 and "rows_differ" in [w.code for w in result.warnings]
    with pytest.raises(StatsError, match="no score named 'nope'"):
        compare_results(a, b, metric="nope")


# --- every layout the package writes ----------------------------------------------------------------------


def test_the_eval_output_json_and_rubric_output_json(tmp_path: Path) -> None:
    eval_json = tmp_path / "eval.json"
    eval_json.write_text(
        json.dumps(
            {
                "config": {"eval_fns": ["acc"], "n_runs": 2, "pass_threshold": 0.5},
                "summary": {},
                "rows": [
                    {"row_index": 0, "runs": [{"run_index": 0, "success": True, "scores": {"acc": 0.5}}]}
                ],
            }
        )
    )
    summary = read_results(eval_json)
    acc = summary.model().function("acc")
    assert (summary.source.layout, summary.source.kind, summary.n_runs) == ("eval-json", "eval", 2)
    assert (acc.passed, acc.runs.missing, acc.pass_at_k[2]) == (1, 1, 1.0)
    rubric_json = tmp_path / "rubric.json"
    rubric_json.write_text(
        json.dumps(
            {
                "rubric_id": "helpful",
                "number": 2,
                "records": [
                    {
                        "record_index": 1,
                        "runs": [
                            {"run_index": 1, "status": "success", "score": 1.0},
                            {"run_index": 2, "status": "unscored", "score": None},
                        ],
                    },
                    {"record_index": 2, "runs": [{"run_index": 1, "status": "error", "error": "HTTP 500"}]},
                ],
            }
        )
    )
    summary = read_results(rubric_json)
    helpful = summary.model().function("helpful")
    assert (summary.failed_policy, helpful.mean, helpful.runs.unscored, helpful.runs.errored) == (
        "exclude",
        1.0,
        1,
        1,
    )
    assert (helpful.rows.passed_some, helpful.rows.incomplete) == (1, 1)


def test_eval_run_grade_and_probe_logs(tmp_path: Path) -> None:
    records = [
        _run(0, 0, status="success", reward=1.0, scores={"reward": 1.0}),
        _run(0, 1, status="skipped", success=False),
        _run(1, 0, status="failed", success=False, error="boom"),
    ]
    config = {"n": 2, "dataset": {"selected_source_rows": "0-2"}}
    summary = read_results(_log(tmp_path / "results.jsonl", config, records, kind="eval-run"))
    reward = summary.model().function("reward")
    assert (summary.n_runs, summary.model().planned_rows, reward.runs.planned) == (2, 3, 6)
    assert (reward.runs.skipped, reward.runs.errored_run, reward.pass_rate) == (1, 1, 0.5)
    assert reward.rows.count(RowOutcome.INCOMPLETE) == 2  # row 1 has one run, row 2 never started

    grade = [_run(0, 0, scores={"g": 0.7}, passed=True), _run(1, 0, eval_errors={"g": "TypeError"})]
    summary = read_results(
        _log(tmp_path / "grade.jsonl", {"grader": {"name": "g", "pass_threshold": 0.5}}, grade, "grade")
    )
    g = summary.model().function("g")
    assert (summary.pass_threshold, g.passed, g.runs.errored_function) == (0.5, 1, 1)
    # A grade scores each sample once: n is 1, not a question to warn about.
    assert summary.n_runs == 1 and "n_undeclared" not in _codes(summary)

    probe = [_run(0, 0, scores={"m:f@correct": 1.0, "m:f@empty": 0.0})]
    summary = read_results(
        _log(tmp_path / "probe.jsonl", {"eval_fns": ["m:f"], "threshold": 0.1}, probe, "probe")
    )
    assert [f.name for f in summary.model().functions] == ["m:f@correct", "m:f@empty"]


def test_a_compared_baseline_is_its_own_model(tmp_path: Path) -> None:
    records = [
        _run(0, 0, scores={"acc": 1.0}, model_tag=""),
        _run(0, 0, scores={"acc": 0.0}, model_tag="baseline"),
    ]
    records[1]["success"] = False
    summary = read_results(_log(tmp_path / "log.jsonl", {"eval_fns": ["acc"], "n_runs": 1}, records))
    assert [m.model_tag for m in summary.models] == ["primary", "baseline"]
    assert summary.model("baseline").failed_runs == 1
    assert "baseline: 1 of 1 run errored" in " ".join(w.message for w in summary.warnings)
    with pytest.raises(KeyError, match="primary, baseline"):
        summary.model("other")


# --- vocabulary and JSON form -----------------------------------------------------------------------------


def test_vocabulary_is_the_cores() -> None:
    assert [o.label for o in RunOutcome] == ["errored", "unscored", "passed", "did not pass"]
    assert [o.label for o in RowOutcome] == [
        "incomplete",
        "errored",
        "passed every attempt",
        "passed some",
        "passed none",
    ]
    assert RESULT_SCHEMA == ("osmosis-result-summary", 1)
    assert osmosis_ai.read_results is read_results


def test_to_dict_is_the_core_json_key_for_key(tmp_path: Path) -> None:
    records = [
        _run(r, i, scores={"acc": float(i)}, eval_errors={"fmt": "x"} if r else {})
        for r in range(3)
        for i in range(2)
    ]
    path = _log(tmp_path / "log.jsonl", {"eval_fns": ["acc", "fmt"], "n_runs": 2}, records)
    summary = read_results(path)
    assert summary.to_dict() == orjson.loads(_core.result_model(str(path)))
    assert summary.to_dict()["schema"] == "osmosis-result-summary"


def test_bad_options_and_files_say_what_is_wrong(tmp_path: Path) -> None:
    path = _log(tmp_path / "log.jsonl", {"eval_fns": ["acc"]}, [_run(0, 0, scores={"acc": "high"})])
    with pytest.raises(StatsError, match=r"log.jsonl:2: field 'scores.acc'"):
        read_results(path)
    with pytest.raises(StatsError, match="level must be between 0 and 1"):
        read_results(_log(tmp_path / "ok.jsonl", {}, []), level=1.5)
    with pytest.raises(StatsError, match='failed must be "zero" or "exclude"'):
        read_results(path, failed="maybe")
    with pytest.raises(FileNotFoundError):
        read_results(tmp_path / "missing.jsonl")


@pytest.mark.parametrize("name", ["_model", "_compare", "_vocabulary"])
def test_docstring_examples_run(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"osmosis_ai.results.{name}"))
    assert result.attempted >= 1 and result.failed == 0


def test_compare_with_the_bootstrap_when_chosen(tmp_path: Path) -> None:
    def one(name: str, rows: int, shift: int) -> Path:
        records = [_run(r, 0, scores={"acc": float((r + shift) % 3 == 0)}) for r in range(rows)]
        return _log(tmp_path / f"{rows}{name}", {"eval_fns": ["acc"], "n_runs": 1}, records)

    few = compare_results(one("a.jsonl", 6, 0), one("b.jsonl", 6, 1), method="bootstrap")
    assert few.differences["pass_at_1"].low is None
    assert "the bootstrap needs at least 10" in (few.differences["pass_at_1"].note or "")
    many = compare_results(one("a.jsonl", 30, 0), one("b.jsonl", 30, 1), method="bootstrap", seed=3)
    d = many.differences["pass_at_1"]
    assert (d.method, d.low is not None and d.low < d.estimate < d.high) == ("bootstrap", True)
    assert (
        many.to_dict()
        == compare_results(one("a.jsonl", 30, 0), one("b.jsonl", 30, 1), method="bootstrap", seed=3).to_dict()
    )
    with pytest.raises(StatsError, match='method must be "t" or "bootstrap"'):
        compare_results(one("a.jsonl", 6, 0), one("b.jsonl", 6, 1), method="z")  # type: ignore[arg-type]
