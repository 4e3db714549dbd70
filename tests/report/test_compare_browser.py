"""The comparison page in Chromium: A and B side by side for every matched row with the differing words
marked, the only-flips / only-differences filters, per-group deltas, a zero line on the delta plots."""

from __future__ import annotations

from pathlib import Path

import pytest

import osmosis_ai
from tests.browser import Browser
from tests.page_driver import (
    card_html,
    choose,
    click,
    matching,
    open_card,
    open_page,
    screenshot,
    search,
    shown_rows,
    table,
)
from tests.report_logs import FIRST, passes, write_eval_log

ROWS = 90


def first_passes(i: int, variant: str) -> bool:
    return passes(i, 0, variant) and i % 11 != 7  # rows i % 11 == 7 score 0.0 on every run


FLIPS = [i for i in range(ROWS) if first_passes(i, "a") != first_passes(i, "b")]
DIFFERENT = [i for i in range(ROWS) if i % 5 == 1 or i % 10 == 0]


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, osmosis_ai.report.RunComparison]:
    folder = tmp_path_factory.mktemp("compare")
    a, _ = write_eval_log(folder, rows=ROWS)
    b, _ = write_eval_log(folder, rows=ROWS, variant="b")
    page = folder / "compare.html"
    return page, osmosis_ai.compare(a, b, output=page, metric=FIRST)


def test_every_matched_row_and_the_filters(browser: Browser, comparison) -> None:
    page, result = comparison
    assert result.rows_matched == ROWS and result.flips["a_only"] + result.flips["b_only"] == len(FLIPS)
    open_page(browser, page)
    assert matching(browser, "compare") == ROWS
    first = shown_rows(browser, "compare")
    click(browser, f"{table('compare')} button.next", "compare")
    assert sorted(first + shown_rows(browser, "compare")) == list(range(ROWS))
    assert choose(browser, "show", "flips", "compare") == len(FLIPS)
    assert choose(browser, "show", "differences", "compare") == len(DIFFERENT)
    assert sorted(browser.evaluate(
        f"Array.from(document.querySelectorAll(\"{table('compare')} tr.row td:first-child\")).map(td => Number(td.innerText))"
    )) == DIFFERENT[:50]  # fmt: skip
    screenshot(browser, "compare-only-differences")
    choose(browser, "show", "any", "compare")
    assert browser.errors() == []


def test_a_and_b_side_by_side_with_the_differing_words_marked(browser: Browser, comparison) -> None:
    page, _ = comparison
    open_page(browser, page)
    assert (
        search(browser, "Question 11:", "compare") == 1
    )  # row 11: A never passes, B passes its first attempt
    row = shown_rows(browser, "compare")[0]
    text = open_card(browser, row, "compare")
    assert "truth-22" in text and "The answer is 23." in text and "Result: 22." in text
    dom = card_html(browser, row, "compare")
    marks = {tuple(m) for m in dom["marks"]}
    assert ("only-a", "The") in marks and ("only-b", "Result") in marks and ("only-b", "22") in marks
    columns = browser.evaluate(
        f"Array.from(document.querySelector(\"{table('compare')} tr.row[data-row='{row}']\").nextElementSibling"
        ".querySelectorAll('.side-by-side > .side')).map(s => s.className)"
    )
    assert columns[:2] == ["side side-a", "side side-b"] and len(columns) == 8  # 4 runs, A beside B
    screenshot(browser, "compare-side-by-side")
    assert browser.errors() == []


def test_delta_plots_have_a_zero_line_and_groups_have_deltas(browser: Browser, comparison) -> None:
    page, result = comparison
    open_page(browser, page)
    svg = browser.evaluate("document.querySelector(\"figure[data-plot='c:difference']\").innerHTML")
    assert 'stroke-dasharray="4,4"' in svg  # the zero line
    assert set(result.groups) == {"topic", "difficulty"}
    browser.choose("select.group-by", "topic")
    groups = browser.evaluate(
        "Array.from(document.querySelectorAll('table.groups tr.group')).map(r => r.innerText)"
    )
    assert len(groups) == 3 and all("[" in g for g in groups)
    visible = browser.evaluate(
        "Array.from(document.querySelectorAll('figure.plot')).filter(f => f.dataset.plot.startsWith('d:') && !f.hidden)"
        ".map(f => [f.dataset.plot, f.innerHTML.includes('stroke-dasharray=\"4,4\"')])"
    )
    assert visible == [["d:topic", True]]
    verdicts = browser.evaluate(
        "Array.from(document.querySelectorAll('table.differences tr[data-statistic]')).map(r => r.lastChild.innerText)"
    )
    assert len(verdicts) == len(result.differences)
    screenshot(browser, "compare-groups")
    assert browser.errors() == []


def test_whole_statistics_keep_their_decimals(browser: Browser, tmp_path: Path) -> None:
    # Finding 11: A never passes, so its pass rates are exactly 0: printed 0.0000 as their neighbours.
    from tests.report.test_report import write_log

    a = write_log(tmp_path / "a.jsonl", [(f"k{i}", [0.0, 0.0, 0.0]) for i in range(8)])
    b = write_log(tmp_path / "b.jsonl", [(f"k{i}", [float(i % 2), 1.0, 0.0]) for i in range(8)])
    page = tmp_path / "compare.html"
    osmosis_ai.compare(a, b, output=page)
    open_page(browser, page)
    cells = browser.evaluate(
        "Array.from(document.querySelectorAll('table.differences tr[data-statistic]'))"
        ".map(r => [r.children[1].innerText, r.children[2].innerText])"
    )
    assert cells and all(a_value == "0.0000" for a_value, _ in cells), cells
    assert all("." in b_value for _, b_value in cells), cells
    assert browser.errors() == []
