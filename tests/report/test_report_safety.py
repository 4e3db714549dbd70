"""Model outputs, ground truths, error texts, dataset fields and even score names are untrusted: the page
shows every one as text, runs no script but its own (Content-Security-Policy by hash) and makes no
request. The fuzz corpus of issue #30 is rendered in Chromium, row by row, with the row count checked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import osmosis_ai
from osmosis_ai.report._page import content_security_policy, safe_json
from osmosis_ai.report._source import open_source
from osmosis_ai.runs.log import row_key
from tests.browser import Browser
from tests.page_driver import matching, open_card, open_page, screenshot, search, table

PWN = "window.__pwned = (window.__pwned || 0) + 1"
CORPUS = [
    'Sure:\n<!-- load the widget\n<script src="w.js"></script>',
    "<!--",
    "-->",
    "</script><script>" + PWN + "</script>",
    "<script>" + PWN + "</script>",
    '<img src=x onerror="' + PWN + '">',
    '<a href="javascript:' + PWN + '">click me</a>',
    '<svg onload="' + PWN + '"><circle r=9 /></svg>',
    '<iframe src="javascript:' + PWN + '"></iframe>',
    '<link rel="stylesheet" href="http://198.51.100.7/x.css"><meta http-equiv="refresh" content="0;url=http://198.51.100.7/">',
    "<style>body{display:none}</style><base href='http://198.51.100.7/'>",
    "line\u2028separator\u2029paragraph",
    "nul\u0000byte",
    "&lt;already escaped&gt; &amp; \"quotes\" 'single' `back`",
    "\u202eright-to-left override \U0001f44d",
    "]]><![CDATA[ {{constructor.constructor('" + PWN + "')()}}",
    "x" * 1_000_000,  # a 1 MB line
]
BAD_FN = '</script><img src=x onerror="' + PWN + '">'


def _lines(folder: Path) -> tuple[Path, Path]:
    dataset = folder / "hostile.jsonl"
    rows = [{"system_prompt": "s", "user_prompt": f"prompt {j}: {h}", "ground_truth": f"truth {j}: {h}",
             "topic": h[:80]} for j, h in enumerate(CORPUS)]  # fmt: skip
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    header = {"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc", BAD_FN], "n_runs": 2},
              "dataset": {"path": str(dataset), "size": 0, "fingerprint": "moved"}}  # fmt: skip
    lines = [json.dumps(header)]
    for j, h in enumerate(CORPUS):
        for run in range(2):
            record: dict[str, Any] = {
                "row_key": row_key(rows[j]), "row_index": j, "run_index": run, "success": run == 0,
                "scores": {"acc": float(j % 2), BAD_FN: 0.5} if run == 0 else {}, "error": None if run == 0 else f"error {j}: {h}",
                "final_messages": [{"role": "user", "content": f"prompt {j}: {h}"}, {"role": "assistant", "content": f"answer {j}: {h}"}],
                "explanation": f"explanation {j}: {h}",
                "tool_calls": [{"name": h[:60], "arguments": {"q": h[:200]}, "result": h[:200], "duration_ms": 1.0}],
            }  # fmt: skip
            if run == 0 and j % 3 == 0:
                record["eval_errors"] = {BAD_FN: f"raised {j}: {h}"}
            lines.append(json.dumps(record, ensure_ascii=j % 2 == 0))
    # A lone surrogate escape and bytes that are not UTF-8: the strict reader refuses both lines.
    row = len(CORPUS)
    head = (
        '{"row_key": "%s", "row_index": '
        + str(row)
        + ', "run_index": 0, "success": true, "scores": {"acc": 1.0}, '
    )
    lines.append(
        head.replace("%s", "sur")
        + '"final_messages": [{"role": "assistant", "content": "lone \\ud800 surrogate \\udfff here"}]}'
    )
    bad = (
        head.replace("%s", "bytes").replace(str(row), str(row + 1), 1)
        + '"final_messages": [{"role": "assistant", "content": "bad '
    )
    raw = bad.encode() + b"\xff\xfe" + b' bytes"}]}'
    log = folder / "hostile-log.jsonl"
    log.write_bytes(("\n".join(lines) + "\n").encode("utf-8") + raw + b"\n")
    return log, dataset


ROWS = len(CORPUS) + 2


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    log, dataset = _lines(folder)
    page = folder / "hostile.html"
    made = osmosis_ai.report(log, output=page, dataset=dataset)
    assert made.runs[0].rows_total == ROWS
    return log, page


def test_the_reader_keeps_lines_the_strict_reader_refuses(hostile) -> None:
    log, _ = hostile
    source = open_source(log)
    texts = [
        r.data["final_messages"][0]["content"]
        for r in source.records()
        if r.data["row_key"] in ("sur", "bytes")
    ]
    assert (
        texts == ["lone \ufffd surrogate \ufffd here", "bad \ufffd\ufffd bytes"] and source.lenient_lines == 2
    )


def test_embedded_json_cannot_close_its_script_element() -> None:
    text = safe_json({"a": "</script><!--<script>\u2028\u2029&"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!--<script>\u2028\u2029&"}
    policy = content_security_policy(server=False)
    assert (
        "script-src 'sha256-" in policy and "unsafe-inline" not in policy and "connect-src 'none'" in policy
    )


def test_every_hostile_string_renders_as_text_and_the_row_count_stays_right(
    browser: Browser, hostile
) -> None:
    _, page = hostile
    browser.watch_network()
    open_page(browser, page)
    assert matching(browser) == ROWS
    for j, h in enumerate(CORPUS):
        assert search(browser, f"prompt {j}:") == 1, j
        open_card(browser, j)
        card = f"document.querySelector(\"{table()} tr.row[data-row='{j}']\").nextElementSibling"
        # Long texts show their first 20,000 characters and a button for the rest.
        browser.evaluate(f"{card}.querySelectorAll('button.more').forEach(b => b.click())")
        for part in (
            f"prompt {j}: {h}",
            f"truth {j}: {h}",
            f"answer {j}: {h}",
            f"error {j}: {h}",
            f"explanation {j}: {h}",
        ):
            assert browser.evaluate(f"{card}.textContent.includes({json.dumps(part)})"), (j, part[:60])
        if j % 3 == 0:
            assert browser.evaluate(f"{card}.textContent.includes({json.dumps(f'raised {j}: {h}')})"), j
    assert search(browser, "surrogate") == 1 and "lone \ufffd surrogate \ufffd here" in open_card(
        browser, len(CORPUS)
    )
    assert search(browser, "") == ROWS
    screenshot(browser, "report-hostile")
    # Nothing ran, nothing became an element, nothing was requested.
    assert browser.evaluate("window.__pwned === undefined")
    made = browser.evaluate(
        "document.querySelectorAll('#app img, #app script, #app iframe, #app link, #app style, #app base, #app meta,"
        " #app a[href], #app circle, #app [onerror], #app [onload]').length"
    )
    assert made == 0
    assert browser.requests() == [page.resolve().as_uri()]
    header = browser.evaluate("document.querySelector('table.scores').innerText")
    assert BAD_FN in header  # the hostile score name is a cell's text
    assert browser.errors() == []
