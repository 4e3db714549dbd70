"""``osmosis report``: results files to one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from osmosis_ai.errors import CLIError
from osmosis_ai.extras import missing_extra

__all__ = ["report_command"]


@click.command("report")
@click.argument(
    "results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The HTML file to write (default: the first RESULTS with .html).",
)
@click.option(
    "--max-rows",
    type=click.IntRange(min=0),
    default=500,
    show_default=True,
    help="Rows embedded with their runs per file (failing rows first); plots always cover every row.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
def report_command(results: tuple[Path, ...], output: Path | None, max_rows: int, seed: int) -> None:
    """Write one HTML page (no network needed) for results logs or -o JSON files.

    The page shows each run's header, score histograms, pass@k / pass^k curves with 95% bands,
    per-row pass rates, latency and token histograms, judge health (rubric runs), and a row table
    whose rows open their runs.
    """
    from osmosis_ai.cli.output import emit_operation

    try:
        from osmosis_ai.report import report
    except ImportError as exc:
        raise (missing_extra(exc, "osmosis report") or CLIError(str(exc))) from exc
    target = output or results[0].with_suffix(".html")
    try:
        made = report(list(results), output=target, max_rows=max_rows, seed=seed)
    except ImportError as exc:
        raise (missing_extra(exc, "osmosis report") or CLIError(str(exc))) from exc
    lines = [
        (run.header["file"], f"{run.rows_total} rows, n={run.header['n']}, {run.row_counts['failed']} failed, "
         f"{run.row_counts['errored']} errored")
        for run in made.runs
    ]  # fmt: skip
    emit_operation(
        "report",
        message=f"Wrote {target} ({made.html_bytes / 1024:.0f} KiB)",
        resource={
            "output": str(target),
            "html_bytes": made.html_bytes,
            "runs": [
                {
                    "path": r.path,
                    "rows": r.rows_total,
                    "rows_embedded": len(r.rows),
                    "row_counts": r.row_counts,
                }
                for r in made.runs
            ],
        },
        lines=lines,
    )
