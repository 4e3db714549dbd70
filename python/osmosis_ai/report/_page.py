"""The one HTML document behind the report, compare and view pages: style, script, data, figures.

The page is written in pieces to a binary stream (its data can be tens of MB: it is never one string).
Every value from a results file reaches it as JSON inside a non-executed ``<script type=...json>``
data block with ``<``, ``>``, ``&`` and U+2028/U+2029 escaped, or as base64; the script puts texts
into the DOM as text only. The Content-Security-Policy allows the page's own script and style (by
their hashes) and nothing else: no other script, no network (``osmosis view``: its own server only).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Protocol

from osmosis_ai.report._embed import CompressedLines
from osmosis_ai.report._outcomes import page_words

__all__ = ["PageData", "content_security_policy", "page_script", "page_style", "safe_json", "write_page"]

_SCRIPTS = ("core.js", "summary.js", "card.js", "table.js", "report.js", "compare.js", "main.js")
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


class ByteSink(Protocol):
    """Where :func:`write_page` writes: a binary file, a buffer, or :class:`_TextSink`."""

    def write(self, raw: bytes, /) -> object: ...


@cache
def page_script() -> str:
    """The page's one script: the front end's files in order."""
    folder = resources.files("osmosis_ai.report") / "web"
    return "\n".join(folder.joinpath(name).read_text(encoding="utf-8") for name in _SCRIPTS)


@cache
def page_style() -> str:
    return (resources.files("osmosis_ai.report") / "web" / "page.css").read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def content_security_policy(*, server: bool) -> str:
    """Only the page's own script and style run; no request leaves the page (the view's own server aside)."""
    connect = "'self'" if server else "'none'"
    return (
        f"default-src 'none'; script-src {_hash(page_script())}; style-src {_hash(page_style())}; "
        f"img-src 'none'; connect-src {connect}; base-uri 'none'; form-action 'none'"
    )


def safe_json(value: Any) -> str:
    """JSON that no text inside it can end or re-open the ``<script>`` element it sits in."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    for raw, escaped in _ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


@dataclass
class PageData:
    """What one page holds.

    Attributes:
        title: The document title.
        page: ``"report"`` or ``"compare"``.
        server: Rows and runs come from the local server (``osmosis view``) instead of the page.
        summaries: ``(element id, summary object)`` pairs.
        metas: ``(element id, page meta object)`` pairs.
        figures: ``(plot name, SVG)`` pairs.
        blocks: ``(element id, compressed JSON lines)`` pairs (finished streams).
        files: Results files on a report page.
    """

    title: str
    page: str = "report"
    server: bool = False
    summaries: list[tuple[str, Any]] = field(default_factory=list)
    metas: list[tuple[str, Any]] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    blocks: list[tuple[str, CompressedLines]] = field(default_factory=list)
    files: int = 1


def _json_block(element_id: str, value: Any) -> str:
    return f'<script type="application/json" id="{html.escape(element_id)}">{safe_json(value)}</script>\n'


def _figures(figures: Iterable[tuple[str, str]]) -> str:
    # vl-convert writes SVG with every text escaped; the plot name is ours.
    inner = "".join(
        f"<figure class='plot' data-plot='{html.escape(name, quote=True)}'>{svg}</figure>"
        for name, svg in figures
    )
    return f"<div id='figures' hidden>{inner}</div>\n"


def write_page(out: ByteSink, data: PageData) -> int:
    """Writes the page to ``out``; returns the bytes written."""
    written = 0

    def put(text: str | bytes) -> None:
        nonlocal written
        raw = text.encode("utf-8") if isinstance(text, str) else text
        out.write(raw)
        written += len(raw)

    source = "server" if data.server else "embedded"
    put(
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{content_security_policy(server=data.server)}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(data.title)}</title><style>{page_style()}</style></head>\n"
        f"<body data-page='{data.page}' data-source='{source}' data-files='{data.files}'>"
        "<noscript><p>This page builds its tables with its own script; JavaScript is off.</p></noscript>"
        "<div id='app'></div>\n"
    )
    put(_figures(data.figures))
    for element_id, value in [("page-words", page_words()), *data.summaries, *data.metas]:
        put(_json_block(element_id, value))
    for element_id, lines in data.blocks:
        put(
            f'<script type="application/octet-stream" id="{html.escape(element_id)}" data-lines="{lines.lines}">'
        )
        for chunk in lines.base64_chunks():
            put(chunk)
        put("</script>\n")
    put(f"<script>{page_script()}</script>\n</body></html>\n")
    return written


class _TextSink:
    """The binary ``out`` of :func:`write_page` over an ``-o`` writer (which takes whole text pieces)."""

    def __init__(self, write: Callable[[str], object]) -> None:
        self._write = write

    def write(self, raw: bytes) -> int:
        self._write(raw.decode("utf-8"))
        return len(raw)


def write_page_output(target: str | os.PathLike[str], data: PageData) -> int:
    """Writes the page as the ``-o`` output ``target`` (``-`` for standard output), whole or not at all."""
    from osmosis_ai._files import output_writer

    with output_writer(target) as write:
        return write_page(_TextSink(write), data)
