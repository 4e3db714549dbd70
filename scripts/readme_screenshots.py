"""The README's screenshots of the report and compare pages (docs/*.png), taken in headless Chromium.

Run from the checkout: ``.venv/bin/python scripts/readme_screenshots.py``. The pages are made from the
sample logs of the page tests (tests/report_logs.py): 90 rows x 4 runs over a dataset with topics.
"""

from __future__ import annotations

import base64
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import Browser, chromium_path  # noqa: E402
from tests.page_driver import open_card, open_page, search  # noqa: E402
from tests.report_logs import FIRST, write_eval_log  # noqa: E402

import osmosis_ai  # noqa: E402

OUT = ROOT / "docs"
WIDTH = 1280
SCALE = 0.6  # small files; the text stays readable


def _shot(browser: Browser, name: str, top: float, height: float) -> None:
    clip = {"x": 0, "y": top, "width": WIDTH, "height": height, "scale": SCALE}
    data = browser.call(
        "Page.captureScreenshot", session=True, format="png", clip=clip, captureBeyondViewport=True
    )
    (OUT / name).write_bytes(base64.b64decode(data["data"]))
    print(f"wrote docs/{name} ({(OUT / name).stat().st_size / 1024:.0f} KiB)")


def _top(browser: Browser, selector: str) -> float:
    return float(
        browser.evaluate(f"document.querySelector({selector!r}).getBoundingClientRect().top + window.scrollY")
    )


def main() -> int:
    path = chromium_path()
    if path is None:
        print("chromium is not installed (make browser)", file=sys.stderr)
        return 1
    OUT.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="osmosis-shots-"))
    a, _ = write_eval_log(folder)
    b, _ = write_eval_log(folder, variant="b")
    osmosis_ai.report(a, output=folder / "report.html")
    osmosis_ai.compare(a, b, metric=FIRST, output=folder / "compare.html")
    with Browser(path, width=WIDTH, height=1000) as browser:
        open_page(browser, folder / "report.html")
        _shot(browser, "report-page.png", 0, 1350)
        search(browser, "Question 3:")
        open_card(browser, 3)
        _shot(browser, "report-run-card.png", _top(browser, "#app > section:nth-last-of-type(1)"), 1150)
        open_page(browser, folder / "compare.html")
        search(browser, "Question 11:", "compare")
        row = browser.evaluate("Number(document.querySelector('.rowtable tr.row').dataset.row)")
        open_card(browser, row, "compare")
        _shot(browser, "compare-page.png", _top(browser, ".rowtable"), 1150)
    return 0


if __name__ == "__main__":
    sys.exit(main())
