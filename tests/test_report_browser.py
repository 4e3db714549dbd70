"""Report and comparison pages opened in a real headless Chromium: no console errors, every plot rendered,
the row table works (a failing row's runs appear after a click). One screenshot per page is kept as a test
artifact in ``$OSMOSIS_TEST_ARTIFACTS`` (default ``test-artifacts/``).

Chromium comes from the project's set-up (``make browser``, run by ``make test``). Without it these tests
skip, unless ``OSMOSIS_REQUIRE_BROWSER=1`` (CI) makes its absence a failure.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import osmosis_ai
from tests.browser import Browser, chromium_path
from tests.test_eval_cli import EXAMPLES, eval_args, osmosis, write_rows
from tests.test_report import write_log
from tests.test_results_summary import HALF_RAISING, PICKY

ARTIFACTS = Path(
    os.environ.get("OSMOSIS_TEST_ARTIFACTS") or Path(__file__).resolve().parents[1] / "test-artifacts"
)


@pytest.fixture(scope="module")
def browser() -> Browser:
    path = chromium_path()
    if path is None:
        if os.environ.get("OSMOSIS_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium is not installed; `make browser` installs it (apt-get install chromium)")
        pytest.skip(
            "chromium is not installed: run `make browser` (apt-get install chromium) to run the page tests"
        )
    with Browser(path) as b:
        yield b


PLOTS = """Array.from(document.querySelectorAll('figure.plot')).map(f => {
  const svg = f.querySelector('svg'); const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  return [f.dataset.plot, box.width, box.height,
          svg ? svg.querySelectorAll('path, rect, line, circle, text').length : 0,
          svg ? svg.querySelectorAll('.mark-rect path, .mark-line path, .mark-area path, .mark-symbol path, .mark-rule line, .mark-rect path').length : 0];
})"""

OPEN_FAILING_ROW = """(() => {
  const row = document.querySelector('table.rows tr.row[data-status="%s"]');
  if (!row) return null;
  const detail = row.nextElementSibling;
  const before = detail.hidden;
  row.click();
  return {before: before, after: detail.hidden, text: detail.innerText,
          messages: detail.querySelectorAll('.msg').length};
})()"""


def check_page(browser: Browser, page: Path, expected_plots: set[str], status: str = "failed") -> dict:
    """Opens a page and checks what every page must hold; returns the opened row's detail."""
    browser.events.clear()
    browser.open(page)
    plots = browser.evaluate(PLOTS)
    names = {p[0] for p in plots}
    assert expected_plots <= names, f"missing plots: {expected_plots - names}"
    for name, width, height, elements, marks in plots:
        assert width > 100 and height > 100 and elements > 10 and marks > 0, (
            name,
            width,
            height,
            elements,
            marks,
        )
    assert browser.evaluate("document.querySelectorAll('table.rows tbody tr.row').length") > 0
    detail = browser.evaluate(OPEN_FAILING_ROW % status)
    assert detail is not None, f"no {status} row in the table"
    assert detail["before"] is True and detail["after"] is False and detail["text"].strip()
    assert browser.errors() == []
    browser.screenshot(ARTIFACTS / f"{page.stem}.png")
    return detail


def test_the_browser_sees_console_errors(browser: Browser, tmp_path: Path) -> None:
    # The page checks would be empty if errors were never collected.
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>console.error('boom'); undefinedFunction();</script></body></html>")
    browser.events.clear()
    browser.open(page)
    errors = browser.errors()
    assert (
        len(errors) >= 2
        and any("boom" in e for e in errors)
        and any("undefinedFunction" in e for e in errors)
    )


def test_eval_report_in_chromium(browser: Browser, scripted, tmp_path: Path) -> None:
    # A real `osmosis eval` run (scripted model server) whose eval function raises on half the rows.
    (tmp_path / "picky_fn.py").write_text(HALF_RAISING)
    (tmp_path / "math_agent.py").symlink_to(EXAMPLES / "math_agent.py")
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    dataset = write_rows(tmp_path / "data.jsonl", [(f"q-{i}", str(i)) for i in range(6)])
    server = scripted({"default": {"content": "4"}})
    args = eval_args(server, dataset, tmp_path, "--no-preflight", "--n", "3", "--max-failure-rate", "1")
    args[args.index("--eval-fn") + 1] = PICKY
    assert osmosis(*args, cwd=tmp_path).returncode == 0
    page = tmp_path / "eval-report.html"
    made = osmosis_ai.report([tmp_path / "log.jsonl", tmp_path / "out.json"], output=page)
    assert [r.header["layout"] for r in made.runs] == ["log", "eval-json"]
    detail = check_page(
        browser,
        page,
        {f"score:{PICKY}", f"pass-curve:{PICKY}", "latency_ms", "tokens", "row-pass-rate"},
        "errored",
    )
    assert "cannot judge" in detail["text"]  # the eval function's error text, visible after the click


def test_rubric_report_in_chromium(browser: Browser, scripted, tmp_path: Path, monkeypatch) -> None:
    from osmosis_ai.cli.main import main
    from tests.test_cli_eval_rubric import CONFIG, write_records

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_EVAL_RESULT_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "rubric_configs.yaml").write_text(CONFIG, encoding="utf-8")
    write_records(
        tmp_path / "data.jsonl", [{"rubric_id": "polite", "solution_str": f"answer {i}"} for i in range(4)]
    )
    server = scripted({"default": {"score": 0.5}})
    server.set_plan(
        {"by_model": {}, "responses": [{"score": 0.25}, {"content": "not json"}] * 3, "default": {"score": 1}}
    )
    assert main(["eval-rubric", "-r", "polite", "-d", "data.jsonl", "-o", "rubric.json", "--base-url",
                 server.base_url, "--concurrency", "1", "--number", "2"]) == 0  # fmt: skip
    # A rubric-kind results log as the engine writes it, with the judge's health fields.
    log = tmp_path / "rubric-log.jsonl"
    records = [{"format": "osmosis-results/1", "kind": "rubric", "config": {"rubric_id": "polite"}}]
    for row in range(8):
        for run in range(2):
            ok = (row + run) % 3 != 0
            records.append({"row_key": f"r{row}", "row_index": row, "run_index": run, "success": ok,
                            "scores": {"polite": 0.2 * row % 1.0} if ok else {}, "status": "success" if ok else "unscored",
                            "error": None if ok else "judge reply was not JSON", "parse_failures": int(not ok),
                            "clamped": row == 5, "retries": run, "attempts": 1 + run, "explanation": f"why {row}",
                            "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}})  # fmt: skip
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    page = tmp_path / "rubric-report.html"
    made = osmosis_ai.report([log, tmp_path / "rubric.json"], output=page)
    assert made.runs[0].judge == {"parse_failures": 5, "clamped": 2, "retries": 8, "unscored": 5, "errors": 0}
    assert made.runs[1].judge["parse_failures"] == 3  # the -o JSON's judge fields reach the page too
    detail = check_page(
        browser, page, {"judge-health", "score:polite", "pass-curve:polite", "tokens"}, "errored"
    )
    assert "judge reply was not JSON" in detail["text"]


def test_eval_run_report_and_comparison_in_chromium(browser: Browser, tmp_path: Path) -> None:
    # `osmosis eval run` logs (kind "eval-run") have the eval record shape; these carry messages and tool calls.
    extra = {
        "messages": [
            {"role": "user", "content": "What is 6 x 7?"},
            {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "multiply"}}]},
            {"role": "tool", "content": "42"},
            {"role": "assistant", "content": "The answer is 41."},
        ],
        "tool_calls": [{"name": "multiply", "arguments": {"a": 6, "b": 7}, "result": "42"}],
    }
    rows_a = [(f"k{i}", [float(i % 3 == 0), float(i % 2 == 0), 1.0, 0.0]) for i in range(30)]
    rows_b = [(f"k{i}", [float(i % 3 != 1), 1.0, 1.0, float(i % 4 == 0)]) for i in range(30)]
    a = write_log(tmp_path / "eval-run-a.jsonl", rows_a, kind="eval-run", extra=extra)
    b = write_log(tmp_path / "eval-run-b.jsonl", rows_b, kind="eval-run", extra=extra)
    page = tmp_path / "eval-run-report.html"
    osmosis_ai.report(a, output=page)
    detail = check_page(
        browser, page, {"score:acc", "pass-curve:acc", "row-pass-rate", "latency_ms"}, "failed"
    )
    assert detail["messages"] >= 5 and "The answer is 41." in detail["text"] and '"a": 6' in detail["text"]

    compare_page = tmp_path / "comparison.html"
    result = osmosis_ai.compare(a, b, output=compare_page)
    assert result.rows_matched == 30
    detail = check_page(browser, compare_page, {"difference", "pass-curves"}, "improved")
    assert (
        "run 0 [A]" in detail["text"] and "run 0 [B]" in detail["text"] and "What is 6 x 7?" in detail["text"]
    )
