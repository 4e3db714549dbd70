"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``).

No browser driver package: Debian's ``chromium`` reads commands on fd 3 and writes replies and events on
fd 4, NUL-separated JSON. Enough of the protocol to open a page, collect console errors and exceptions,
evaluate script, and take a screenshot. Nothing here reaches the network: pages are ``file://`` URLs.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["Browser", "chromium_path"]


def chromium_path() -> str | None:
    """The chromium executable, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium with one page. Use as a context manager."""

    def __init__(self, executable: str, *, width: int = 1280, height: int = 1800) -> None:
        self._profile = tempfile.mkdtemp(prefix="osmosis-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        # The child sees our pipe ends as fd 3 (commands in) and fd 4 (replies out).
        def child_fds() -> None:
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self._process = subprocess.Popen(
            [
                executable,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-pipe",
                f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # 3 and 4 are listed so the fd cleanup after preexec_fn keeps the dup2'd pipe ends open.
            pass_fds=(3, 4, to_browser_r, from_browser_w),
            preexec_fn=child_fds,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stops this browser (only the process this object started) and removes its profile."""
        with contextlib.suppress(Exception):
            self.call("Browser.close", timeout=5)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(
        self, method: str, *, session: bool = False, timeout: float = 30, **params: Any
    ) -> dict[str, Any]:
        """Sends one command and returns its result; events that arrive meanwhile are kept in :attr:`events`."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def open(self, target: Path | str, *, timeout: float = 30) -> None:
        """Loads a local file (or a URL on 127.0.0.1, as a string) and waits for its load event."""
        url = target if isinstance(target, str) else target.resolve().as_uri()
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + timeout
        while not any(e["method"] == "Page.loadEventFired" for e in self.events):
            self.events.append(self._read_message(deadline))

    def evaluate(self, expression: str, *, timeout: float = 30) -> Any:
        """The value of a script expression in the page (JSON-serialisable values only). A promise is
        awaited: a test waits on the page's own events (``osmosis:ready``, ``osmosis:rendered``, ...)."""
        result = self.call(
            "Runtime.evaluate",
            session=True,
            timeout=timeout,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def _center(self, selector: str) -> tuple[float, float]:
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if box is None:
            raise AssertionError(f"nothing on the page matches {selector!r}")
        return box[0], box[1]

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the middle of the first element matching ``selector``."""
        x, y = self._center(selector)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, button="left", clickCount=1
            )

    def type(self, selector: str, text: str) -> None:
        """Clicks into a text field, selects what it holds and types ``text`` over it (as a user would)."""
        self.click(selector)
        self.evaluate(f"document.querySelector({json.dumps(selector)}).select()")
        self.call("Input.insertText", session=True, text=text)

    def press(self, key: str) -> None:
        """One key press on the focused element (``"ArrowDown"``, ``"Enter"``, ...)."""
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=key,
                      windowsVirtualKeyCode={"ArrowDown": 40, "ArrowUp": 38, "Enter": 13, "Home": 36, "Escape": 27}.get(key, 0))  # fmt: skip

    def choose(self, selector: str, value: str) -> None:
        """Picks the option ``value`` of a ``<select>`` as a user does: a click opens its list, the arrow
        keys move to the option, Enter takes it (and the page sees a ``change``)."""
        options = self.evaluate(
            f"Array.from(document.querySelector({json.dumps(selector)}).options).map(o => o.value)"
        )
        self.click(selector)
        self.press("Home")
        for _ in range(options.index(value)):
            self.press("ArrowDown")
        self.press("Enter")

    def wait_event(self, method: str, *, timeout: float = 30, match: Any = None) -> dict[str, Any]:
        """The first event ``method`` (seen already, or read until it arrives) for which ``match(params)``."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event["method"] == method and (match is None or match(event.get("params", {}))):
                    return event
            seen = len(self.events)
            self.events.append(self._read_message(deadline))

    def allow_downloads(self, folder: Path) -> None:
        """Downloads land in ``folder``, each named by its guid, and report their progress as
        ``Browser.downloadProgress`` events."""
        self.call(
            "Browser.setDownloadBehavior",
            behavior="allowAndName",
            downloadPath=str(folder),
            eventsEnabled=True,
        )

    def watch_network(self) -> None:
        """Records every request the page makes (``Network.requestWillBeSent`` events)."""
        self.call("Network.enable", session=True)

    def requests(self) -> list[str]:
        """The URLs of the requests recorded since :meth:`watch_network`."""
        return [
            e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"
        ]

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        found = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                found.append(str(params.get("exceptionDetails")))
            elif event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(str(params.get("args")))
            elif event["method"] == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(str(params["entry"].get("text")))
        return found

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page."""
        metrics = self.call("Page.getLayoutMetrics", session=True)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 12000), "scale": 1}
        data = self.call(
            "Page.captureScreenshot", session=True, format="png", clip=clip, captureBeyondViewport=True
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path
