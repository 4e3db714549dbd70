"""``osmosis_ai.report``: summarise results files and write them as one HTML page."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_ai.report._run import DEFAULT_MAX_ROWS, RunReport, build_run_report

__all__ = ["Report", "report"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Report:
    """What :func:`report` returns.

    Attributes:
        runs: One :class:`RunReport` per results file, in the order given.
        output: The HTML file written, or None.
        html_bytes: Its size in bytes (0 without ``output``).
    """

    runs: list[RunReport]
    output: Path | None = None
    html_bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data."""
        return {
            "runs": [r.to_dict() for r in self.runs],
            "output": None if self.output is None else str(self.output),
            "html_bytes": self.html_bytes,
        }


def report(
    paths: PathLike | Sequence[PathLike],
    *,
    output: PathLike | None = None,
    max_rows: int = DEFAULT_MAX_ROWS,
    seed: int = 0,
) -> Report:
    """Summarises results files (any layout the commands write) and optionally writes the HTML page.

    The page holds each run's header, score histograms, pass@k / pass^k curves with 95% confidence bands,
    per-row pass rates, latency and token histograms, judge health for rubric runs, the mixed-rows
    fraction, and a row table whose rows open their runs (messages, tool calls, answer, scores, errors).
    Large runs stay small: plots use aggregates and at most ``max_rows`` rows are embedded.

    Args:
        paths: A results log or ``-o`` JSON, or several.
        output: Where to write the page; nothing is written when None.
        max_rows: Rows embedded with their runs per file (failing rows first).
        seed: Bootstrap seed.

    Returns:
        A :class:`Report`.

    Raises:
        FileNotFoundError: A file does not exist.
        StatsError: A file is not a results file.
        ImportError: ``osmosis-ai[report]`` (polars, altair, vl-convert) is not installed.

    Example:
        >>> import json, pathlib, tempfile
        >>> log = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
        >>> lines = [{"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"]}}]
        >>> lines += [{"row_key": f"k{r}", "row_index": r, "run_index": i, "success": True,
        ...            "scores": {"acc": float((r + i) % 2)}} for r in range(4) for i in range(2)]
        >>> _ = log.write_text("".join(json.dumps(x) + "\\n" for x in lines))
        >>> result = report(log)
        >>> (result.runs[0].rows_total, result.runs[0].metrics["primary"]["acc"]["pass_at_k"]["1"])
        (4, 0.5)
    """
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    runs = [build_run_report(p, max_rows=max_rows, seed=seed) for p in items]
    if output is None:
        return Report(runs=runs)
    from osmosis_ai._files import write_text_output
    from osmosis_ai.report._page import render_run_page

    target = Path(output)
    page = render_run_page(runs)
    write_text_output(target, page)
    return Report(runs=runs, output=target, html_bytes=len(page.encode("utf-8")))
