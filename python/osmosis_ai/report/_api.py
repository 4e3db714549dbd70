"""``osmosis_ai.report``: summarise results files and write them as one HTML page."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_ai.report._embed import DEFAULT_MAX_DATA_MB, CompressedLines
from osmosis_ai.report._run import RunReport, describe, scan_file

__all__ = ["Report", "report"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Report:
    """What :func:`report` returns.

    Attributes:
        runs: One :class:`RunReport` per results file, in the order given.
        output: The HTML file written, or None.
        html_bytes: Its size in bytes (0 without ``output``).
        data_bytes: The compressed rows and runs the page holds.
    """

    runs: list[RunReport]
    output: Path | None = None
    html_bytes: int = 0
    data_bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data."""
        return {
            "runs": [r.to_dict() for r in self.runs],
            "output": None if self.output is None else str(self.output),
            "html_bytes": self.html_bytes,
            "data_bytes": self.data_bytes,
        }


def _left_out_note(runs_left_out: int, rows_left_out: int, limit_mb: float, path: str) -> str:
    return (
        f"{runs_left_out:,} runs of {rows_left_out:,} rows are not in this page: its data limit is "
        f"{limit_mb:g} MiB compressed (--max-data-mb). Every row is listed and every number covers every run; "
        f"`osmosis view {path}` shows every run."
    )


def report(
    paths: PathLike | Sequence[PathLike],
    *,
    output: PathLike | None = None,
    max_data_mb: float = DEFAULT_MAX_DATA_MB,
    dataset: PathLike | None = None,
    level: float = 0.95,
) -> Report:
    """Summarises results files (any layout the commands write) and optionally writes the HTML page.

    The page holds, per file, every number of the results model (run and row tallies, scores with
    intervals, pass@k / pass^k curves, durations, warnings), score / latency / token plots, per-group
    statistics over the dataset's own fields, judge panels for rubric files, and every row with its runs
    (compressed; the browser decompresses them) up to ``max_data_mb``: past it the rows are all listed
    and the runs that do not fit are left out, which the page and :attr:`RunReport.runs_left_out` say.

    Args:
        paths: A results log or ``-o`` JSON, or several.
        output: Where to write the page; nothing is written when None (the file is still read).
        max_data_mb: Compressed MiB of runs the page may hold.
        dataset: The dataset file for ground truths and fields (default: the one each log names).
        level: Confidence level of the intervals (Wilson for pass rates, Student t for means).

    Returns:
        A :class:`Report`.

    Raises:
        FileNotFoundError: A file does not exist.
        StatsError: A file is not a results file.
        ImportError: ``osmosis-ai[report]`` (vl-convert) is not installed.

    Example:
        >>> import json, pathlib, tempfile
        >>> log = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
        >>> lines = [{"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"]}}]
        >>> lines += [{"row_key": f"k{r}", "row_index": r, "run_index": i, "success": True,
        ...            "scores": {"acc": float((r + i) % 2)}} for r in range(4) for i in range(2)]
        >>> _ = log.write_text("".join(json.dumps(x) + "\\n" for x in lines))
        >>> result = report(log)
        >>> run = result.runs[0]
        >>> (run.rows_total, run.summary["models"][0]["functions"][0]["pass_at_k"]["1"], run.row_counts["passed_some"])
        (4, 0.5, 4)
    """
    from osmosis_ai.report import _charts as charts
    from osmosis_ai.report._page import PageData, write_page_output

    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    budget = int(max_data_mb * (1 << 20))
    runs: list[RunReport] = []
    page = PageData(
        title="osmosis report: " + ", ".join(os.path.basename(os.fspath(p)) for p in items), files=len(items)
    )
    specs: list[tuple[str, dict[str, Any]]] = []
    data_bytes = 0
    for i, path in enumerate(items):
        embedded = CompressedLines(budget=max(budget - data_bytes, 0)) if output is not None else None
        rows = CompressedLines() if output is not None else None
        # A line per run: [row index, outcome per score key, the record as the log has it].
        sink = (lambda row, out, run, e=embedded: e.add([row, out, run])) if embedded is not None else None
        scan = scan_file(path, sink=sink, dataset=dataset)
        summary, meta, file_specs = describe(scan, index=i, level=level)
        left_rows = scan.index.rows_left_out()
        if scan.index.runs_left_out:
            meta["left_out_note"] = _left_out_note(
                scan.index.runs_left_out, left_rows, max_data_mb, os.fspath(path)
            )
        runs.append(
            RunReport(
                os.fspath(path),
                summary,
                meta,
                len(scan.index),
                scan.runs_total,
                scan.index.runs_left_out,
                left_rows,
            )
        )
        if output is None:
            continue
        assert rows is not None and embedded is not None
        for row in scan.index.rows(scan.dataset.rows):
            rows.add({"id": row["i"], **row})
        data_bytes += rows.finish() + embedded.finish()
        del scan  # the row index is not needed past this point: free it before the plots render
        page.summaries.append((f"page-summary-{i}", summary))
        page.metas.append((f"page-meta-{i}", meta))
        page.blocks += [(f"rows-data-{i}", rows), (f"runs-data-{i}", embedded)]
        specs += file_specs
    if output is None:
        return Report(runs=runs)
    page.figures = list(zip([name for name, _ in specs], charts.to_svg([s for _, s in specs]), strict=True))
    target = Path(output)
    size = write_page_output(target, page)
    return Report(runs=runs, output=target, html_bytes=size, data_bytes=data_bytes)
