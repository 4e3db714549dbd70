"""``osmosis view``: the report (or comparison) page of any size of log, served from 127.0.0.1.

The same page and script as ``osmosis report``; only the data source differs. At start the log is read
once, streaming, for the numbers and a row index that remembers where each run is in the file (its line
offset, not the run); a run card reads its runs back from the file when it is opened, and a search looks
through the runs' texts compressed into a temporary file while the log was read (``_search``). Memory
holds the row index, never the runs, whatever the log's size.

The server answers GET only, only for a ``Host`` of 127.0.0.1 / localhost on its own port (another site
cannot reach it through a browser by DNS rebinding), and sends the page's Content-Security-Policy.
"""

from __future__ import annotations

import asyncio
import os
import zlib
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import orjson

from osmosis_ai.llm.http1_server import Http1Server, HttpReply, HttpRequest
from osmosis_ai.report._embed import json_line
from osmosis_ai.report._rows import page_run
from osmosis_ai.report._run import Scan, describe, scan_file
from osmosis_ai.report._search import RunTextIndex
from osmosis_ai.report._source import line_offsets, read_line_at
from osmosis_ai.stats import rebase_indices

if TYPE_CHECKING:
    from osmosis_ai.report._page import PageData

__all__ = ["ViewSite", "compare_site", "report_site", "serve"]

_SEARCH_CACHE = 16
_HTML = "text/html; charset=utf-8"


class _Runs:
    """A scanned file's runs read back on demand, by row (from the log's line offsets)."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self.path = scan.source.path
        self.document = scan.source.layout in ("eval-json", "rubric-json")
        # -o JSON documents are small and have no lines to seek to: their runs stay in memory.
        self.kept: dict[int, list[dict[str, Any]]] = {}
        if self.document:
            for record in scan.source.records():
                row = record.data.get("row_index")
                if isinstance(row, int):
                    self.kept.setdefault(row, []).append(self._page(record.data))
            self.offsets = array("q")
        else:
            self.offsets = line_offsets(self.path)

    def _page(self, record: dict[str, Any]) -> dict[str, Any]:
        index = self.scan.index
        return page_run(record, index.keys, index.threshold)

    def of(self, row: int) -> list[dict[str, Any]]:
        if self.document:
            return self.kept.get(row, [])
        base = self.scan.source.index_base
        records = (read_line_at(self.path, self.offsets[p]) for p in self.scan.index.positions(row))
        return [self._page(rebase_indices(r, base) if base else r) for r in records]


def _scan(path: str | os.PathLike[str], dataset: str | os.PathLike[str] | None) -> tuple[Scan, RunTextIndex]:
    """One read of a results file: its scan (runs found again by position) and its runs' search index."""
    found = RunTextIndex()
    scan = scan_file(
        path, sink=lambda row, _, record: found.add(row, record), keep_positions=True, dataset=dataset
    )
    found.finish()
    return scan, found


def _entry_text(entry: dict[str, Any]) -> str:
    parts = [entry.get(k) for k in ("prompt", "truth", "answer", "error", "key")]
    parts += list((entry.get("fields") or {}).values())
    return "\n".join(p for p in parts if isinstance(p, str)).lower()


@dataclass
class ViewSite:
    """What ``osmosis view`` serves: the page, the gzip-compressed row index, runs and search by row."""

    page: bytes
    rows_gz: bytes
    runs: Callable[[int, str], list[dict[str, Any]]]
    search: Callable[[str], list[int]]
    csp: str
    cache: dict[str, list[int]] = field(default_factory=dict)


def _gzip_lines(entries: Iterable[dict[str, Any]]) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    out = [compressor.compress(json_line(e)) for e in entries]
    out.append(compressor.flush())
    return b"".join(out)


def _page_bytes(data: PageData) -> bytes:
    import io

    from osmosis_ai.report._page import write_page

    buffer = io.BytesIO()
    write_page(buffer, data)
    return buffer.getvalue()


def report_site(path: str | os.PathLike[str], *, dataset: str | os.PathLike[str] | None = None,
                level: float = 0.95) -> ViewSite:  # fmt: skip
    """Reads a results file once and returns what the server answers with."""
    from osmosis_ai.report import _charts as charts
    from osmosis_ai.report._page import PageData, content_security_policy

    scan, found = _scan(path, dataset)
    summary, meta, specs = describe(scan, level=level)
    entries = [{"id": e["i"], **e} for e in scan.index.rows(scan.dataset.rows)]
    texts = {e["id"]: _entry_text(e) for e in entries}
    runs = _Runs(scan)
    svgs = charts.to_svg([s for _, s in specs])
    page = PageData(title=f"osmosis view: {meta['file']}", server=True, summaries=[("page-summary", summary)],
                    metas=[("page-meta", meta)], figures=list(zip([n for n, _ in specs], svgs, strict=True)))  # fmt: skip

    def search(needle: str) -> list[int]:
        return sorted({i for i, t in texts.items() if needle in t} | found.rows_with(needle))

    return ViewSite(_page_bytes(page), _gzip_lines(entries), lambda row, side: runs.of(row), search,
                    content_security_policy(server=True))  # fmt: skip


def compare_site(a: str | os.PathLike[str], b: str | os.PathLike[str], *, metric: str | None = None,
                 allow_partial: bool = False, dataset: str | os.PathLike[str] | None = None,
                 seed: int = 0) -> ViewSite:  # fmt: skip
    """Reads two results files once and returns the comparison the server answers with."""
    from osmosis_ai.report import _charts as charts
    from osmosis_ai.report._compare import compare_scans
    from osmosis_ai.report._compare_page import comparison_summary, figure_specs, pair_entries
    from osmosis_ai.report._page import PageData, content_security_policy

    (scan_a, found_a), (scan_b, found_b) = _scan(a, dataset), _scan(b, dataset)
    comparison, paired = compare_scans(scan_a, scan_b, metric=metric, allow_partial=allow_partial, seed=seed)
    entries = pair_entries(paired, scan_a, scan_b, comparison.metric)
    texts = {e["id"]: _entry_text({**e, "answer": " ".join(s["answer"] or "" for s in (e["a"], e["b"]) if s)})
             for e in entries}  # fmt: skip
    pairs_of: dict[tuple[str, int], list[int]] = {}
    for e in entries:
        for side in ("a", "b"):
            if e[side] is not None:
                pairs_of.setdefault((side, e[side]["i"]), []).append(e["id"])
    sides = {"a": _Runs(scan_a), "b": _Runs(scan_b)}
    specs = figure_specs(comparison)
    page = PageData(title=f"osmosis view: compare {comparison.metric}", page="compare", server=True,
                    summaries=[("page-summary", comparison_summary(comparison))],
                    metas=[("page-meta", {"file": f"{os.path.basename(comparison.a)} vs {os.path.basename(comparison.b)}"})],
                    figures=list(zip([n for n, _ in specs], charts.to_svg([s for _, s in specs]), strict=True)))  # fmt: skip

    def search(needle: str) -> list[int]:
        found = {i for i, t in texts.items() if needle in t}
        for side, index in (("a", found_a), ("b", found_b)):
            for row in index.rows_with(needle):
                found.update(pairs_of.get((side, row), []))
        return sorted(found)

    def runs_of(row: int, side: str) -> list[dict[str, Any]]:
        return sides[side].of(row) if side in sides else []

    return ViewSite(
        _page_bytes(page), _gzip_lines(entries), runs_of, search, content_security_policy(server=True)
    )


def _reply(status: int, body: bytes, content_type: str, csp: str, *extra: tuple[str, str]) -> HttpReply:
    headers = (("Content-Security-Policy", csp), ("X-Content-Type-Options", "nosniff"),
               ("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer"), *extra)  # fmt: skip
    return HttpReply(status, body, content_type, headers)


def handler(site: ViewSite, port: Callable[[], int]) -> Callable[[HttpRequest], Any]:
    """The request handler of a site (``port``: the server's port, known once it listens)."""

    def error(status: int, message: str) -> HttpReply:
        return _reply(status, orjson.dumps({"error": message}), "application/json", site.csp)

    async def handle(request: HttpRequest) -> HttpReply:
        host = request.headers.get("host", "")
        if host not in {f"127.0.0.1:{port()}", f"localhost:{port()}"}:
            return error(
                421, "this server answers only http://127.0.0.1 and http://localhost on its own port"
            )
        if request.method != "GET":
            return error(405, "only GET")
        url = urlsplit(request.path)
        query = parse_qs(url.query)
        if url.path in ("/", "/index.html"):
            return _reply(200, site.page, _HTML, site.csp)
        if url.path == "/api/rows":
            return _reply(200, site.rows_gz, "application/x-ndjson", site.csp, ("Content-Encoding", "gzip"))
        if url.path == "/api/runs":
            try:
                row = int(query["row"][0])
            except (KeyError, ValueError):
                return error(400, "api/runs needs ?row=<row index>")
            side = (query.get("side") or [""])[0]
            runs = await asyncio.to_thread(site.runs, row, side)
            return _reply(
                200, b"[" + b",".join(json_line(r)[:-1] for r in runs) + b"]", "application/json", site.csp
            )
        if url.path == "/api/search":
            needle = (query.get("q") or [""])[0].strip().lower()
            if needle not in site.cache:
                if len(site.cache) >= _SEARCH_CACHE:
                    site.cache.pop(next(iter(site.cache)))
                site.cache[needle] = await asyncio.to_thread(site.search, needle) if needle else []
            return _reply(200, orjson.dumps(site.cache[needle]), "application/json", site.csp)
        return error(404, f"no page at {url.path}")

    return handle


async def serve(site: ViewSite, *, port: int = 0, ready: Callable[[int], None] | None = None) -> None:
    """Serves ``site`` on 127.0.0.1 until cancelled; ``ready(port)`` is called once it listens."""
    server = Http1Server(handler(site, lambda: server.port), host="127.0.0.1", port=port, max_body=0)
    await server.start()
    try:
        if ready is not None:
            ready(server.port)
        await asyncio.Event().wait()
    finally:
        await server.aclose()
