"""The compare page of tricky pairs of logs, read in headless Chromium, shows what `osmosis compare --json`
says (issue #28's cross-surface test, its compare part; tests/results/test_result_surfaces.py has the rest).

For each pair (nothing scored on one side, partial n, errors in the second of two functions, resumed across
3 invocations, n = 1 against n = 4), one `osmosis compare A B -o page.html --json` writes the page and the
JSON; the page, read as a user sees it, must show every difference with its interval (or the note saying
why there is none) and its verdict, the headline verdict with its reason, McNemar's p, the flips and every
warning, word for word. The page is skipped, as every page test, without chromium.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.results.test_result_surfaces import (
    FNS,
    _page_number,
    _page_stat,
    _run,
    _write,
    errors_in_the_second_function,
    every_run_errored,
    n_is_one,
    partial_n,
    resumed_three_times,
)

Log = Callable[[Path], Any]


def every_attempt_scored(path: Path) -> tuple[Path, int]:
    """The other side of each pair: six rows, four attempts each, every one scored."""
    runs = [
        _run(r, i, scores={"m:first": float((3 * r + i) % 2), "m:second": 0.25 * ((r + i) % 4)})
        for r in range(6)
        for i in range(4)
    ]
    return _write(path, {"eval_fns": FNS, "n_runs": 4}, [runs]), 4


# name: (A, B, the metric compared)
PAIRS: dict[str, tuple[Log, Log, str]] = {
    "nothing scored on one side": (every_attempt_scored, every_run_errored, "m:first"),
    "partial n": (every_attempt_scored, partial_n, "m:first"),
    "errors in the second function": (every_attempt_scored, errors_in_the_second_function, "m:second"),
    "resumed across 3 invocations": (resumed_three_times, every_attempt_scored, "m:first"),
    "n = 1 against n = 4": (n_is_one, every_attempt_scored, "m:second"),
}

# What the page shows, read from its DOM: the differences table by statistic, the two key-value tables
# (the comparison's header, the flips) and the warnings list.
_READ_PAGE = """(() => {
  const cells = (tr) => Array.from(tr.cells).map((c) => c.innerText);
  const kv = (t) => Object.fromEntries(Array.from(t.querySelectorAll('tr')).map(cells));
  const [top, flips] = Array.from(document.querySelectorAll('table.kv')).map(kv);
  return {
    differences: Array.from(document.querySelectorAll('table.differences tr[data-statistic]'))
      .map((tr) => [tr.dataset.statistic, cells(tr)]),
    top: top, flips: flips,
    warnings: Array.from(document.querySelectorAll('ul.warnings li')).map((li) => li.innerText),
  };
})()"""

_VERDICT_WORDS = {"b_better": "B better", "a_better": "B worse", "no_clear_difference": "no clear difference"}


def _compare(name: str, folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict[str, Any]]:
    """Writes the pair's logs and runs `osmosis compare A B -o page.html --json`: the page and the JSON."""
    from osmosis_ai.cli.main import main

    make_a, make_b, metric = PAIRS[name]
    (folder / "a").mkdir()
    (folder / "b").mkdir()
    a, _ = make_a(folder / "a" / "log.jsonl")
    b, _ = make_b(folder / "b" / "log.jsonl")
    page = folder / "compare.html"
    capsys.readouterr()
    args = ["compare", str(a), str(b), "--metric", metric, "--allow-partial", "-o", str(page), "--json"]
    assert main(args) == 0
    return page, json.loads(capsys.readouterr().out)["data"]


def _expected_row(label: str, d: dict[str, Any]) -> list[str]:
    """A differences row as the page must print the JSON's numbers (formatting only)."""
    sign = "+" if d["estimate"] is not None and d["estimate"] > 0 else ""
    if d["low"] is None:
        interval = d["note"] or "no interval"
    else:
        interval = f"[{_page_stat(d['low'])}, {_page_stat(d['high'])}]"
    return [
        label,
        _page_stat(d["a"]),
        _page_stat(d["b"]),
        sign + _page_stat(d["estimate"]),
        interval,
        _VERDICT_WORDS[d["verdict"]],
    ]


def _label(statistic: str) -> str:
    return statistic.replace("pass_at_", "pass@").replace("pass_hat_", "pass^")


@pytest.mark.parametrize("name", list(PAIRS))
def test_the_compare_page_shows_what_compare_json_says(
    name: str, tmp_path: Path, browser: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.page_driver import open_page, screenshot

    page, data = _compare(name, tmp_path, capsys)
    open_page(browser, page)
    shown = browser.evaluate(_READ_PAGE)
    # Every statistic, in the JSON's order, with its interval or its note, and its verdict.
    assert [statistic for statistic, _ in shown["differences"]] == list(data["differences"])
    for statistic, cells in shown["differences"]:
        assert cells == _expected_row(_label(statistic), data["differences"][statistic]), statistic
    # The headline verdict with its reason, McNemar's p and the rows matched.
    verdict = data["verdict"]
    words = _VERDICT_WORDS[verdict["outcome"]]
    assert shown["top"]["verdict"] == f"{words} on {verdict['statistic']}: {verdict['reason']}"
    assert shown["top"]["McNemar exact p (first attempts)"] == _page_number(data["mcnemar_p"])
    assert shown["top"]["rows matched"].startswith(
        f"{data['rows_matched']} (A has {data['rows_a']}, B has {data['rows_b']}"
    )
    flips = data["flips"]
    assert shown["flips"] == {
        "A passed, B did not": str(flips["a_only"]),
        "B passed, A did not": str(flips["b_only"]),
        "both passed": str(flips["both"]),
        "neither passed": str(flips["neither"]),
    }
    # Every warning, word for word, in the same order (each side's own ones prefixed A: / B:).
    assert shown["warnings"] == data["warnings"] and data["warnings"]
    screenshot(browser, "compare-surfaces-" + name.replace(" ", "-"))
    assert browser.errors() == []


def test_the_pairs_cover_what_they_are_named_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The cases are what their names say (so the page test above reads each of them, not five easy ones).
    seen = {}
    for name in PAIRS:
        (tmp_path / name).mkdir()
        seen[name] = _compare(name, tmp_path / name, capsys)[1]
    nothing = seen["nothing scored on one side"]
    assert nothing["sides"]["b"]["mean"] is None and nothing["sides"]["b"]["graded"] == 0
    assert any("no run was scored" in w for w in nothing["warnings"])
    assert any("planned runs are missing" in w for w in seen["partial n"]["warnings"])
    assert any("m:second raised on 6 runs" in w for w in seen["errors in the second function"]["warnings"])
    assert any("n = 1" in w for w in seen["n = 1 against n = 4"]["warnings"])
    # Some differences have intervals, some a note instead, over the pairs.
    differences = [d for data in seen.values() for d in data["differences"].values()]
    assert any(d["low"] is not None for d in differences) and any(d["note"] for d in differences)
