"""Every surface renders the one result model (issue #28 stage 2).

For a set of tricky logs (every run errored; partial n; errors in the second of two functions; n = 1;
resumed across 3 invocations; a 2-row compare; unequal n in compare), the eval table, the eval `-o` JSON
(and that JSON read back), `eval run`'s metrics, the library (`read_results`), `compare_results` and the
`osmosis report` page read in headless Chromium (skipped, as every page test, without chromium) show the
same numbers and the same warnings. The findings of the issue each have a test here that failed
before this stage (or in tests/results/test_result_model.py, tests/eval/test_eval_run_metrics.py, tests/stats/test_stats.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.cli.eval_run_report import _pass_rate
from osmosis_ai.eval.report import format_results_table, format_warnings
from osmosis_ai.eval.run_metrics import metrics_summary, rewards_of
from osmosis_ai.eval.summary import build_report
from osmosis_ai.results import FunctionResult, ResultSummary, compare_results, read_results
from osmosis_ai.runs.log import ResultsLog
from osmosis_ai.stats import Aggregator, compare

FNS = ["m:first", "m:second"]


def _write(
    path: Path, config: dict[str, Any], invocations: list[list[dict[str, Any]]], kind: str = "eval"
) -> Path:
    """A results log written as the commands write it: one ResultsLog invocation per list (resumes)."""
    for i, records in enumerate(invocations):
        opened = ResultsLog.create if i == 0 else ResultsLog.resume
        with opened(path, config, kind=kind) as log:
            for record in records:
                log.append(record)
    return path


def _run(row: int, run: int, **fields: Any) -> dict[str, Any]:
    record = {"row_key": f"k{row}", "row_index": row, "run_index": run, "success": True, "scores": {}}
    return {**record, "duration_ms": 10.0, "tokens": 3, **fields}


def every_run_errored(path: Path) -> tuple[Path, int]:
    runs = [_run(r, i, success=False, error="provider said 429") for r in range(3) for i in range(2)]
    return _write(path, {"eval_fns": FNS, "n_runs": 2}, [runs]), 2


def partial_n(path: Path) -> tuple[Path, int]:
    runs = [
        _run(r, i, scores={"m:first": float((r + i) % 2), "m:second": 1.0})
        for r in range(6)
        for i in range(4)
        if r % 2 == 1 or i == 0
    ]
    return _write(path, {"eval_fns": FNS, "n_runs": 4}, [runs]), 4


def errors_in_the_second_function(path: Path) -> tuple[Path, int]:
    runs = []
    for r in range(4):
        for i in range(3):
            if r % 2 == 0:
                runs.append(
                    _run(r, i, scores={"m:first": 1.0}, eval_errors={"m:second": "KeyError: 'answer'"})
                )
            else:
                runs.append(_run(r, i, scores={"m:first": float(i == 0), "m:second": 0.5}))
    return _write(path, {"eval_fns": FNS, "n_runs": 3}, [runs]), 3


def n_is_one(path: Path) -> tuple[Path, int]:
    runs = [_run(r, 0, scores={"m:first": float(r < 2), "m:second": 0.25 * r}) for r in range(5)]
    return _write(path, {"eval_fns": FNS, "n_runs": 1}, [runs]), 1


def resumed_three_times(path: Path) -> tuple[Path, int]:
    config = {"eval_fns": FNS, "n_runs": 2}
    parts = [[_run(r, i, scores={"m:first": 1.0, "m:second": float(i)}) for i in range(2)] for r in range(3)]
    return _write(path, config, parts), 2


LOGS: dict[str, Callable[[Path], tuple[Path, int]]] = {
    "every run errored": every_run_errored,
    "partial n": partial_n,
    "errors in the second function": errors_in_the_second_function,
    "n = 1": n_is_one,
    "resumed across 3 invocations": resumed_three_times,
}


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _table_row(lines: list[str], name: str) -> list[str]:
    row = next(line for line in lines if line.startswith(name.ljust(20)))
    return [cell.strip() for cell in row.split("|")]


def _check_function(f: FunctionResult, n: int, established: dict[str, Any], table: list[str]) -> None:
    """One function: the -o entry and the table row say what the model says."""
    assert [established[k] for k in ("mean", "std", "min", "max")] == [f.mean, f.std, f.min, f.max]
    ks = [k for k in (1, 3, 5, 10) if k <= n] if n > 1 else []
    assert {k: established[f"pass_at_{k}"] for k in ks} == {k: f.pass_at_k.get(k) for k in ks}
    cells = _table_row(table, f.name)
    assert cells[1:5] == [_cell(v) for v in (f.mean, f.min, f.max, f.std)]
    for i, k in enumerate(ks):
        value = f.pass_at_k.get(k)
        assert cells[5 + i] == ("n/a" if value is None else f"{100 * value:.1f}%")
    if f.runs.missing:
        observed = {str(k): f.pass_at_k_observed.get(k) for k in ks}
        assert established["pass_at_k_observed"] == observed


@pytest.mark.parametrize("name", list(LOGS))
def test_eval_table_output_json_and_library_agree(name: str, tmp_path: Path) -> None:
    log, n = LOGS[name](tmp_path / "log.jsonl")
    model = read_results(log)
    report = build_report(log, eval_fns=FNS, n_runs=n, pass_threshold=1.0)
    document = report.to_json(config={"eval_fns": FNS, "n_runs": n}, duration_ms=1.0)
    table = format_results_table(report.summaries, report.eval_fn_errors) + format_warnings(report.warnings)
    for f in model.model().functions:
        _check_function(f, n, document["summary"]["eval_fns"][f.name], table)
    # The same warnings, word for word, on every surface.
    messages = [w.message for w in model.warnings]
    assert [w["message"] for w in document["summary"]["warnings"]] == messages
    assert [line.removeprefix("Warning: ") for line in table if line.startswith("Warning: ")] == messages
    # Wall time over every invocation, as the model adds it up (never only the last invocation's).
    assert document["summary"]["total_duration_ms"] == model.durations.total_duration_ms
    # The -o file is itself a results file: read back, it gives the same numbers.
    out = tmp_path / "out.json"
    report.write_json(out, config={"eval_fns": FNS, "n_runs": n}, duration_ms=1.0)
    again = read_results(out).model()
    for f in model.model().functions:
        g = again.function(f.name)
        assert (g.mean, g.std, g.pass_at_k, g.runs.errored) == (f.mean, f.std, f.pass_at_k, f.runs.errored)


def test_finding_1_nothing_scored_is_null_and_na_on_the_eval_surfaces(tmp_path: Path) -> None:
    log, n = every_run_errored(tmp_path / "log.jsonl")
    report = build_report(log, eval_fns=FNS, n_runs=n, pass_threshold=1.0)
    summary = report.to_json(config={}, duration_ms=1.0)["summary"]
    # Before: {"mean": 0.0, "std": 0.0, "min": 0.0, "max": 0.0, "pass_at_1": 0.0}.
    assert summary["eval_fns"]["m:first"] == dict.fromkeys(("mean", "std", "min", "max", "pass_at_1"))
    row = _table_row(format_results_table(report.summaries), "m:first")
    assert row[1:] == ["n/a"] * 5
    # The command's exit 1 is decided by these warnings (one line each, said in the core).
    assert [w.function for w in report.nothing_scored] == FNS


def test_finding_2_an_incomplete_log_is_warned_with_its_missing_count_on_every_surface(
    tmp_path: Path,
) -> None:
    log, n = partial_n(tmp_path / "log.jsonl")
    [incomplete] = [w for w in read_results(log).warnings if w.code == "incomplete"]
    assert incomplete.count == 9 and "9 of 24 planned runs are missing" in incomplete.message
    report = build_report(log, eval_fns=FNS, n_runs=n, pass_threshold=1.0)
    summary = report.to_json(config={}, duration_ms=1.0)["summary"]
    assert incomplete.message in [w["message"] for w in summary["warnings"]]
    assert f"Warning: {incomplete.message}" in format_warnings(report.warnings)
    first = summary["eval_fns"]["m:first"]
    # pass@k counts the missing runs as did not pass; the observed-only value is beside it.
    assert (first["pass_at_3"], first["pass_at_k_observed"]["3"]) == (0.5, 1.0)


def test_finding_3_errors_of_the_second_function_are_shown(tmp_path: Path) -> None:
    log, n = errors_in_the_second_function(tmp_path / "log.jsonl")
    report = build_report(log, eval_fns=FNS, n_runs=n, pass_threshold=1.0)
    errors = report.eval_fn_errors["m:second"]
    assert (errors["count"], errors["messages"][0]) == (6, "KeyError: 'answer'")
    said = "m:second raised on 6 runs across 2 rows: those runs are errored and in none of its statistics"
    assert errors["excluded"] == said and f"Warning: {said}" in format_warnings(report.warnings)
    assert "  m:second raised: KeyError: 'answer'" in format_results_table(
        report.summaries, report.eval_fn_errors
    )
    assert "m:first" not in report.eval_fn_errors


def test_finding_4_eval_runs_pass_rate_line_says_what_was_scored() -> None:
    summary = {"pass_rate": 0.2, "passed": 1, "completed_samples": 5, "graded": 5, "pass_threshold": 1.0}
    # Before: "20.0% (1/5 scored, threshold 1)" although all five were scored.
    assert _pass_rate(summary) == "20.0% (1 of 5 runs passed; 5 scored, threshold 1)"
    nothing = {**summary, "pass_rate": None, "passed": 0, "graded": 0}
    assert _pass_rate(nothing) == "n/a (no run was scored; threshold 1)"


def test_finding_5_a_resumed_eval_reports_wall_time_over_every_invocation(tmp_path: Path) -> None:
    log, n = resumed_three_times(tmp_path / "log.jsonl")
    durations = read_results(log).durations
    assert len(durations.invocations) == 3
    report = build_report(log, eval_fns=FNS, n_runs=n, pass_threshold=1.0)
    last_invocation_only = durations.invocations[-1].wall_ms
    summary = report.to_json(config={}, duration_ms=last_invocation_only)["summary"]
    assert summary["total_duration_ms"] == pytest.approx(sum(i.wall_ms for i in durations.invocations))


def test_finding_6_stats_intervals_are_never_surer_than_the_rows() -> None:
    agg = Aggregator()
    for row in range(3):
        agg.push([1.0, 0.0, float(row % 2)], row_index=row)
    boot = agg.intervals()["pass_at_1"]  # 3 rows: before, a bootstrap interval anyway
    assert (boot.low, boot.high) == (None, None) and "at least 10" in (boot.note or "")
    a, b = Aggregator(), Aggregator()
    for row in range(2):
        a.push([0.0, 0.0], row_index=row)
        b.push([1.0, 1.0], row_index=row)
    result = compare(b, a, method="normal")  # before: +1.0 [+1.0, +1.0], the point drawn as an interval
    assert result.differences["pass_at_1"].low is None and not result.excludes_zero("pass_at_1")
    assert "no spread" in (result.differences["pass_at_1"].note or "")


def _eval_run_log(path: Path, rewards: list[list[float | None]], n: int) -> Path:
    runs = []
    for r, row in enumerate(rewards):
        for i, reward in enumerate(row):
            ok = reward is not None
            scores = {"reward": reward} if ok else {}
            status = "success" if ok else "failed"
            runs.append(_run(r, i, success=ok, status=status, reward=reward, scores=scores))
    config = {"n": n, "dataset": {"selected_source_rows": f"0-{len(rewards) - 1}"}}
    return _write(path, config, [runs], kind="eval-run")


@pytest.mark.parametrize(
    "rewards",
    [[[None, None], [None, None]], [[1.0, 0.0], [0.5]], [[1.0, 1.0], [None, 0.0], [0.0, 1.0]]],
    ids=["every run errored", "partial n", "some errored"],
)
def test_eval_run_metrics_and_library_agree(rewards: list[list[float | None]], tmp_path: Path) -> None:
    log = _eval_run_log(tmp_path / "results.jsonl", rewards, 2)
    rows = [{"status": "success", "reward": x} for row in rewards for x in row if x is not None]
    metrics, model = metrics_summary(log, 1.0, rewards_of(rows))
    again = read_results(log, failed="exclude").model().function("reward")
    assert (metrics["graded"], metrics["passed"], metrics["pass_rate"]) == (
        again.graded,
        again.passed,
        again.pass_rate,
    )
    assert metrics["failed"] == again.runs.errored_run
    if again.graded:
        assert metrics["reward_stats"]["mean"] == again.mean
        assert [(p["k"], p["value"]) for p in metrics["pass_at_k"]] == list(again.pass_at_k.items())
    else:
        assert metrics["pass_rate"] is None and "reward_stats" not in metrics
    assert [w["message"] for w in metrics["warnings"]] == [w.message for w in model.warnings]


def _side(summary: ResultSummary, name: str) -> FunctionResult:
    return summary.model().function(name)


def test_two_row_compare_gives_no_verdict_and_each_side_is_its_own_summary(tmp_path: Path) -> None:
    config = {"eval_fns": ["m:first"], "n_runs": 2}
    a = _write(
        tmp_path / "a.jsonl",
        config,
        [[_run(r, i, scores={"m:first": 0.0}) for r in range(2) for i in range(2)]],
    )
    b = _write(
        tmp_path / "b.jsonl",
        config,
        [[_run(r, i, scores={"m:first": 1.0}) for r in range(2) for i in range(2)]],
    )
    result = compare_results(a, b)
    assert result.verdict.outcome == "no_clear_difference"
    assert result.differences["pass_at_1"].low is None and result.differences["pass_at_1"].note
    for side, path in ((result.a, a), (result.b, b)):
        own = _side(read_results(path), "m:first")
        assert (side.summary.mean, side.summary.pass_at_k) == (own.mean, own.pass_at_k)


def test_unequal_n_in_compare_is_warned_and_nothing_is_cut(tmp_path: Path) -> None:
    a = _write(
        tmp_path / "a.jsonl",
        {"eval_fns": ["m:first"], "n_runs": 2},
        [[_run(r, i, scores={"m:first": float(r == 0)}) for r in range(4) for i in range(2)]],
    )
    b = _write(
        tmp_path / "b.jsonl",
        {"eval_fns": ["m:first"], "n_runs": 4},
        [[_run(r, i, scores={"m:first": float(i == 3)}) for r in range(4) for i in range(4)]],
    )
    result = compare_results(a, b)
    assert "n_differs" in [w.code for w in result.warnings]
    own_b = _side(read_results(b), "m:first")
    # B's mean over all its 4 runs (0.25), not over the first 2 (0.0).
    assert result.b.summary.mean == own_b.mean == 0.25
    assert result.differences["mean"].b == pytest.approx(0.25)
    side_messages = [w.message for w in result.warnings]
    for warning in read_results(b).warnings:
        assert f"B: {warning.message}" in side_messages


def test_the_eval_command_exits_1_when_nothing_was_scored(scripted: Any, tmp_path: Path) -> None:
    from tests.cli.test_eval_cli import EXAMPLES, FAILING_AGENT, eval_args, osmosis, write_rows

    (tmp_path / "flaky_agent.py").write_text(FAILING_AGENT)
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    dataset = write_rows(tmp_path / "data.jsonl", [("explode a", "1"), ("explode b", "1")])
    server = scripted({"default": {"content": "1"}})
    args = eval_args(
        server, dataset, tmp_path, "--no-preflight", "--max-failure-rate", "1", agent="flaky_agent:agent"
    )
    result = osmosis(*args, cwd=tmp_path)
    # --max-failure-rate tolerates errored runs, not an eval without a single score.
    assert result.returncode == 1, result.stdout
    [error] = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert error.endswith("no run was scored (2 errored, 0 unscored): its mean and pass rates are n/a")
    assert "Traceback" not in result.stderr
    out = json.loads((tmp_path / "out.json").read_text())["summary"]
    assert set(next(iter(out["eval_fns"].values())).values()) == {None}
    assert "n/a" in result.stdout and "Errored runs: 2" in result.stdout
    assert [w["message"] for w in out["warnings"]] == [
        w.message for w in read_results(tmp_path / "log.jsonl").warnings
    ]


def test_grade_summary_is_the_model_of_its_log(tmp_path: Path) -> None:
    from osmosis_ai.graders.session import grade_summary

    runs = [
        _run(0, 0, scores={"g": 0.75}, passed=True),
        _run(1, 0, eval_errors={"g": "TypeError: no reference"}),
        _run(2, 0, success=False, error="the record holds no model output"),
    ]
    log = _write(
        tmp_path / "grade.jsonl", {"grader": {"name": "g", "pass_threshold": 0.5}}, [runs], kind="grade"
    )
    summary, g = grade_summary(log, "g"), read_results(log).model().function("g")
    # The run without output is 0.0 in the mean, as in `osmosis report` of the same log.
    assert (
        (summary["graded"], summary["mean"], summary["passed"])
        == (g.graded, g.mean, g.passed)
        == (1, 0.375, 1)
    )
    assert (
        (summary["errors"], summary["without_output"])
        == (g.runs.errored_function, g.runs.errored_run)
        == (1, 1)
    )
    assert summary["error_examples"] == ["row 1: TypeError: no reference"]
    assert [w["message"] for w in summary["warnings"]] == [w.message for w in read_results(log).warnings]


# --- the report page, read in headless Chromium ------------------------------------------------------


def _page_number(value: float | int | None, digits: int = 4) -> str:
    """A number as the page prints it (core.js `fmt`): n/a, a whole number with thousands separators, or
    `digits` decimals. Formatting only: the values compared are the model's."""
    if value is None:
        return "n/a"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.{digits}f}"


def _page_stat(value: float | None, digits: int = 4) -> str:
    """A statistic as the page prints it (core.js `fmtStat`): n/a or `digits` decimals, whole or not."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def _page_table(browser: Any, selector: str) -> dict[str, dict[str, str]]:
    """A table of the page keyed by its rows' `data-score`, each row's cells by their column heading."""
    rows = browser.evaluate(
        f"(() => {{ const t = document.querySelector({json.dumps(selector)});"
        " const heads = Array.from(t.querySelectorAll('tr')[0].querySelectorAll('th')).map(h => h.innerText);"
        " return Array.from(t.querySelectorAll('tr[data-score]')).map(r => [r.dataset.score, heads,"
        " Array.from(r.cells).map(c => c.innerText)]); })()"
    )
    return {score: dict(zip(heads, cells, strict=True)) for score, heads, cells in rows}


def _check_interval_cell(text: str, value: float | None, interval: Any) -> None:
    assert text.startswith(_page_stat(value)), (text, value)
    if value is None or interval is None:
        return
    if interval.low is not None:
        assert f"[{_page_stat(interval.low)}, {_page_stat(interval.high)}]" in text, text
    else:
        assert interval.note and f"({interval.note})" in " ".join(text.split()), text


@pytest.mark.parametrize("name", list(LOGS))
def test_the_report_page_shows_the_models_numbers(name: str, tmp_path: Path, browser: Any) -> None:
    from osmosis_ai import _core
    from osmosis_ai.cli.main import main
    from tests.page_driver import open_page, screenshot

    log, _ = LOGS[name](tmp_path / "log.jsonl")
    page = tmp_path / "report.html"
    main(["report", str(log), "-o", str(page)])
    summary = read_results(log)
    open_page(browser, page)
    scores = _page_table(browser, "table.scores")
    tally = _page_table(browser, "table.tally")
    words = dict(_core.ROW_OUTCOMES)
    for f in summary.model().functions:
        shown = scores[f.name]
        runs = {"runs": "finished", "scored": "scored", "passed": "passed", "did not pass": "not_passed"}
        runs |= {
            "errored (run)": "errored_run",
            "errored (function)": "errored_function",
            "unscored": "unscored",
        }
        assert {h: shown[h] for h in runs} == {h: _page_number(getattr(f.runs, k)) for h, k in runs.items()}
        assert [shown[h] for h in ("std", "min", "max")] == [_page_stat(v) for v in (f.std, f.min, f.max)]
        _check_interval_cell(shown["mean"], f.mean, f.intervals.get("mean"))
        last = f.ks[-1] if f.ks else 1
        _check_interval_cell(shown["pass@1"], f.pass_at_k.get(1), f.intervals.get("pass_at_1"))
        _check_interval_cell(
            shown[f"pass@n (n = {last})"], f.pass_at_k.get(last), f.intervals.get(f"pass_at_{last}")
        )
        _check_interval_cell(shown["pass^n"], f.pass_hat_k.get(last), f.intervals.get(f"pass_hat_{last}"))
        rows = tally[f.name]
        assert {word: rows[word] for word in words.values()} == {
            word: _page_number(getattr(f.rows, key)) for key, word in words.items()
        }
    # The same warnings, word for word; the errors' messages; the header's counts and wall time.
    listed = browser.evaluate(
        "Array.from(document.querySelectorAll('ul.warnings li')).map(li => li.innerText)"
    )
    assert [w.message for w in summary.warnings] == listed[: len(summary.warnings)]
    errors = browser.evaluate("(document.querySelector('div.errors') || {innerText: ''}).innerText")
    for f in summary.model().functions:
        assert all(message in errors for message in f.error_messages)
    header = dict(
        line.split("\t", 1)
        for line in browser.evaluate("document.querySelector('table.kv').innerText").splitlines()
        if "\t" in line
    )
    wall = summary.durations.total_duration_ms
    assert header["rows"] == _page_number(summary.model().total_rows)
    assert header["runs"] == _page_number(summary.model().total_runs)
    assert header["wall time (s)"] == (
        "not recorded in this log" if wall is None else _page_number(wall / 1000, 1)
    )
    screenshot(browser, "surfaces-" + name.replace(" ", "-"))
    assert browser.errors() == []
