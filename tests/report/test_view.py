"""`osmosis view` as a real process on 127.0.0.1: the report and compare pages over HTTP, rows and runs
read from the log on demand, search on the server, the Host check and the page's policy headers; then
the same page driven in Chromium, which makes no request beyond that server."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.browser import Browser
from tests.page_driver import choose, matching, open_card, open_page, screenshot, search
from tests.report_logs import FIRST, write_eval_log

ROWS = 40


@pytest.fixture
def serve(tmp_path: Path) -> Iterator:
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> str:
        process = subprocess.Popen(
            [sys.executable, "-m", "osmosis_ai.cli.main", "view", *args, "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        started.append(process)
        assert process.stdout is not None
        for line in process.stdout:  # waits on the server's own line, not on a timer
            if line.startswith("Serving "):
                return line.split()[1]
        raise AssertionError(f"osmosis view did not start: {process.stderr.read() if process.stderr else ''}")

    yield start
    for process in started:
        process.send_signal(signal.SIGINT)
        try:
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)


def get(url: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_the_server_answers_its_own_host_only_with_the_page_policy(serve, tmp_path: Path) -> None:
    log, _ = write_eval_log(tmp_path, rows=ROWS)
    url = serve(str(log))
    assert url.startswith("http://127.0.0.1:")
    status, headers, body = get(url)
    assert status == 200 and b"data-source='server'" in body
    assert (
        "script-src 'sha256-" in headers["Content-Security-Policy"]
        and "connect-src 'self'" in headers["Content-Security-Policy"]
    )
    assert headers["X-Content-Type-Options"] == "nosniff"
    status, headers, body = get(url + "api/rows")
    rows = (
        [json.loads(x) for x in gzip.decompress(body).splitlines()]
        if headers.get("Content-Encoding") == "gzip"
        else []
    )
    assert status == 200 and len(rows) == ROWS and rows[3]["truth"] == "truth-6"
    status, _, body = get(url + "api/runs?row=3")
    runs = json.loads(body)
    assert (
        status == 200 and len(runs) == 4 and {r["_outcomes"][FIRST] for r in runs} == {"passed", "not_passed"}
    )
    assert json.loads(get(url + "api/search?q=cannot%20parse%20the%20answer%20of%20row%2013")[2]) == [13]
    port = url.rsplit(":", 1)[1].rstrip("/")
    assert get(url, host=f"attacker.example:{port}")[0] == 421  # DNS rebinding: another site's name
    assert get(url + "nothing")[0] == 404 and get(url + "api/runs?row=x")[0] == 400


def test_view_in_chromium_reads_runs_from_the_log_when_a_card_opens(
    browser: Browser, serve, tmp_path: Path
) -> None:
    log, _ = write_eval_log(tmp_path, rows=ROWS)
    url = serve(str(log))
    browser.watch_network()
    open_page(browser, url)
    assert matching(browser) == ROWS
    assert choose(browser, FIRST, "passed_none") == sum(
        1 for i in range(ROWS) if i % 9 != 4 and (i % 11 == 7 or i % 5 == 1)
    )
    choose(browser, FIRST, "any")
    # The run is read from the file when its card opens: a byte-for-byte change made now shows up.
    data = log.read_bytes()
    assert data.count(b"The answer is 6.") == 2  # runs 1 and 2 of row 3
    log.write_bytes(data.replace(b"The answer is 6.", b"The answer is Z."))
    assert search(browser, "Question 3:") == 1
    text = open_card(browser, 3)
    assert "The answer is Z." in text and "truth-6" in text and "cannot parse the answer of row 3" in text
    # The server's search looks through every run's texts as the log was read (as its numbers are).
    assert search(browser, "the answer is 6.") == 1
    runs = [json.loads(line) for line in data.decode().splitlines()[1:]]
    answered = {r["row_index"] for r in runs if "answer is 2" in json.dumps(r["final_messages"]).lower()}
    assert search(browser, "answer is 2") == len(answered) > 1
    screenshot(browser, "view-report")
    assert {u.split("/")[2] for u in browser.requests()} == {url.split("/")[2]}  # nothing beyond the server
    assert browser.errors() == []


def test_view_compares_two_logs(browser: Browser, serve, tmp_path: Path) -> None:
    a, _ = write_eval_log(tmp_path, rows=ROWS)
    b, _ = write_eval_log(tmp_path, rows=ROWS, variant="b")
    url = serve(str(a), str(b), "--metric", FIRST)
    open_page(browser, url)
    assert matching(browser, "compare") == ROWS
    assert search(browser, "result: 22.", "compare") == 1
    text = open_card(
        browser, browser.evaluate("Number(document.querySelector('.rowtable tr.row').dataset.row)"), "compare"
    )
    assert "The answer is 23." in text and "Result: 22." in text
    screenshot(browser, "view-compare")
    assert browser.errors() == []


@settings(max_examples=60, deadline=None)
@given(
    runs=st.lists(
        st.tuples(st.integers(0, 40), st.text(alphabet="ab1 \x00\x01\x02\u0130\u212aK", max_size=12)),
        max_size=30,
    ),
    needle=st.text(alphabet="ab1 \x00\x01\x02k\u0130", min_size=1, max_size=3),
)
def test_the_run_text_index_finds_what_a_scan_of_every_run_finds(runs, needle) -> None:
    # The index of `osmosis view`'s search against the plain rule (`needle in text.lower()` for each text
    # of each run), with tiny chunks so entries fall on every side of a chunk's end; row numbers are
    # digits a needle may hold too, and never match by themselves.
    from osmosis_ai.report import _search
    from osmosis_ai.report._rows import run_texts

    index = _search.RunTextIndex(chunk_bytes=16)
    records = [(row, {"final_messages": [{"role": "assistant", "content": text}], "error": text[:2] or None})
               for row, text in runs]  # fmt: skip
    for row, record in records:
        index.add(row, record)
    index.finish()
    expected = {row for row, record in records if any(needle.lower() in t.lower() for t in run_texts(record))}
    assert index.rows_with(needle.lower()) == expected
    index.close()
