"""Pages of what the commands really write (a real `osmosis eval` and `osmosis eval-rubric` run against a
scripted model server), opened in Chromium: the numbers the command printed are the page's, an eval
function's errors reach the page, and a rubric file's judge panels (health, repeat noise, gold
agreement) are shown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import osmosis_ai
from osmosis_ai.cli.main import main
from tests.browser import Browser
from tests.cli.test_eval_cli import EXAMPLES, eval_args, osmosis, write_rows
from tests.page_driver import choose, open_card, open_page, plots, screenshot, search, table
from tests.rubric.test_rubric_calibration import PLAN
from tests.rubric.test_rubric_calibration import workspace as workspace  # the fixture, re-used
from tests.stats.test_results_summary import HALF_RAISING, PICKY


def test_the_browser_sees_console_errors(browser: Browser, tmp_path: Path) -> None:
    # The `errors() == []` checks of the page tests would pass vacuously if errors were never collected.
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>console.error('boom'); undefinedFunction();</script></body></html>")
    browser.events.clear()
    browser.open(page)
    errors = browser.errors()
    assert any("boom" in e for e in errors) and any("undefinedFunction" in e for e in errors)


def test_a_real_eval_whose_second_function_raises(browser: Browser, scripted, tmp_path: Path) -> None:
    (tmp_path / "picky_fn.py").write_text(HALF_RAISING)
    (tmp_path / "math_agent.py").symlink_to(EXAMPLES / "math_agent.py")
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    dataset = write_rows(tmp_path / "data.jsonl", [(f"q-{i}", str(i)) for i in range(6)])
    server = scripted({"default": {"content": "4"}})
    args = eval_args(server, dataset, tmp_path, "--no-preflight", "--n", "3", "--max-failure-rate", "1")
    args += ["--eval-fn", PICKY]  # the second eval function raises on odd ground truths
    result = osmosis(*args, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    page = tmp_path / "eval-report.html"
    made = osmosis_ai.report([tmp_path / "log.jsonl", tmp_path / "out.json"], output=page)
    picky = next(f for f in made.runs[0].summary["models"][0]["functions"] if f["name"] == PICKY)
    assert picky["runs"]["errored_function"] == 9 and picky["rows"]["errored"] == 3
    open_page(browser, page)
    assert choose(browser, PICKY, "errored") == 3  # the errored rows of the second function are there
    text = open_card(browser, 1)
    assert "cannot judge 1" in text and "q-1" in text and "ground truth" in text.lower()
    assert "raised on 9 runs" in browser.evaluate("document.querySelector('div.errors').innerText")
    assert {f"p0:pass-curve:{PICKY}", "p0:latency", "p0:tokens", f"p1:score:{PICKY}"} <= set(plots(browser))
    screenshot(browser, "report-real-eval")
    assert browser.errors() == []


def test_rubric_judge_panels(
    browser: Browser, workspace: Path, scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = scripted(PLAN)
    code = main(["eval-rubric", "-r", "helpful", "-d", "data.jsonl", "--repeat", "3", "--gold", "gold.jsonl",
                 "--base-url", server.base_url, "--concurrency", "1", "-o", "out.json", "--log", "rubric-log.jsonl"])  # fmt: skip
    assert code == 0
    payload = json.loads((workspace / "out.json").read_text())
    page = workspace / "rubric.html"
    made = osmosis_ai.report([workspace / "rubric-log.jsonl", workspace / "out.json"], output=page)
    log_judge, json_judge = (r.meta["judge"] for r in made.runs)
    # The log's repeat noise is computed from its runs by eval-rubric's own rule: the same figures.
    assert log_judge["noise"]["mean_variance"] == pytest.approx(payload["judge_noise"]["mean_variance"])
    assert json_judge["gold"] == payload["gold_agreement"] and log_judge["gold"] is None
    open_page(browser, page)
    panels = browser.evaluate(
        "Array.from(document.querySelectorAll('.panel')).map(p => [p.dataset.panel, p.innerText])"
    )
    texts = dict(panels[2:])  # the -o JSON's panels (the log's come first)
    assert f"{payload['gold_agreement']['mae']:.4f}" in texts["gold-agreement"]
    assert f"{payload['judge_noise']['mean_std']:.4f}" in texts["repeat-noise"]
    assert "no gold labels in this file" in dict(panels[:2])["gold-agreement"]
    assert {"j0:health", "j1:health"} <= set(plots(browser))
    assert search(browser, "gamma answer", name="report0") >= 1
    assert "gamma answer" in open_card(browser, 2, name="report0")
    assert browser.evaluate(f'document.querySelector("{table("report1")}").dataset.matching') == "3"
    screenshot(browser, "report-rubric-judge")
    assert browser.errors() == []
