"""Driving the report, compare and view pages in a real headless Chromium as a user does: type in the
search box, pick filters, click rows and buttons, then read what the page shows. Every wait is on an
event the page sends (``osmosis:ready``, ``osmosis:rendered``, ``osmosis:card``), never on a sleep.
Screenshots are kept in ``$OSMOSIS_TEST_ARTIFACTS`` (default ``test-artifacts/``, not committed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import Browser, chromium_path

ARTIFACTS = Path(
    os.environ.get("OSMOSIS_TEST_ARTIFACTS") or Path(__file__).resolve().parents[1] / "test-artifacts"
)

_READY = (
    "new Promise(r => document.body.dataset.ready ? r(document.body.dataset.ready)"
    " : document.addEventListener('osmosis:ready', () => r(document.body.dataset.ready), {once: true}))"
)


def browser_session() -> Iterator[Browser]:
    """One headless Chromium (the ``browser`` fixture of conftest.py); skips without chromium."""
    path = chromium_path()
    if path is None:
        if os.environ.get("OSMOSIS_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium is not installed; `make browser` installs it (apt-get install chromium)")
        pytest.skip(
            "chromium is not installed: run `make browser` (apt-get install chromium) to run the page tests"
        )
    with Browser(path) as b:
        yield b


def open_page(browser: Browser, target: Path | str) -> None:
    """Opens a page and waits until it has built its tables (its ``osmosis:ready`` event)."""
    browser.events.clear()
    browser.open(target)
    assert browser.evaluate(_READY) == "1", browser.evaluate("document.body.innerText.slice(0, 500)")


def table(name: str = "report0") -> str:
    """The selector of a row table: ``report<i>`` on a report page (file i), ``compare`` on a comparison."""
    return f".rowtable[data-table='{name}']"


def _table(name: str) -> str:
    return f"document.querySelector({json.dumps(table(name))})"


def arm_render(browser: Browser, name: str = "report0") -> None:
    """Prepares to wait for the row table's next render (call before the action that causes it)."""
    browser.evaluate(
        f"(window.__rendered = new Promise(r => {_table(name)}.addEventListener('osmosis:rendered',"
        f" () => r(Number({_table(name)}.dataset.matching)), {{once: true}})), 0)"
    )


def rendered(browser: Browser) -> int:
    """The matching-row count of the render :func:`arm_render` waited for."""
    return int(browser.evaluate("window.__rendered"))


def search(browser: Browser, text: str, name: str = "report0") -> int:
    """Types into the search box; returns how many rows match once the table shows them."""
    arm_render(browser, name)
    browser.type(f"{table(name)} input.search", text)
    return rendered(browser)


def choose(browser: Browser, filter_id: str, value: str, name: str = "report0") -> int:
    """Picks a filter's option with the keyboard; returns the matching rows."""
    browser.choose(f"{table(name)} select[data-filter={json.dumps(filter_id)}]", value)
    return matching(browser, name)


def click(browser: Browser, selector: str, name: str = "report0") -> int:
    """Clicks something that re-renders the table (a header, a pager button); returns the matching rows."""
    arm_render(browser, name)
    browser.click(selector)
    return rendered(browser)


def matching(browser: Browser, name: str = "report0") -> int:
    return int(browser.evaluate(f"{_table(name)}.dataset.matching"))


def shown_rows(browser: Browser, name: str = "report0") -> list[int]:
    """The ids of the rows on the table's current page."""
    return browser.evaluate(
        f"Array.from({_table(name)}.querySelectorAll('tr.row')).map(r => Number(r.dataset.row))"
    )


def open_card(browser: Browser, row_id: int, name: str = "report0") -> str:
    """Clicks a row and returns its card's text once the card is filled (``osmosis:card``)."""
    selector = f"{table(name)} tr.row[data-row='{row_id}']"
    browser.evaluate(
        f"(window.__card = new Promise(r => document.querySelector({json.dumps(selector)}).nextElementSibling"
        ".addEventListener('osmosis:card', e => r(e.target.closest('td').innerText), {once: true})), 0)"
    )
    browser.click(selector)
    return str(browser.evaluate("window.__card"))


def card_html(browser: Browser, row_id: int, name: str = "report0") -> Any:
    """What the opened card holds, as the DOM has it (classes of the score badges, marks, ...)."""
    return browser.evaluate(
        f"(() => {{ const d = document.querySelector(\"{table(name)} tr.row[data-row='{row_id}']\").nextElementSibling;"
        " return {badges: Array.from(d.querySelectorAll('.badge')).map(b => [b.textContent, b.dataset.outcome]),"
        " runs: Array.from(d.querySelectorAll('.run')).map(r => r.className),"
        " marks: Array.from(d.querySelectorAll('mark')).map(m => [m.className, m.textContent]),"
        " tools: Array.from(d.querySelectorAll('table.tools tr')).map(t => t.innerText)}; })()"
    )


def plots(browser: Browser) -> dict[str, list[float]]:
    """Each drawn plot by name: [width, height, marks drawn] of its SVG."""
    found = browser.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#app figure.plot')).map(f => {"
        " const s = f.querySelector('svg'); const b = s.getBoundingClientRect();"
        " return [f.dataset.plot, [b.width, b.height, s.querySelectorAll('.mark-rect path, .mark-line path,"
        " .mark-area path, .mark-symbol path, .mark-rule line, .mark-text text').length]]; }))"
    )
    return found


def screenshot(browser: Browser, name: str) -> Path:
    return browser.screenshot(ARTIFACTS / f"{name}.png")
