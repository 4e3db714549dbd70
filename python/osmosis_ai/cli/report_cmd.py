"""``osmosis report``: results files to one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from osmosis_ai.cli.output import stdout_output
from osmosis_ai.errors import CLIError
from osmosis_ai.extras import missing_extra

if TYPE_CHECKING:
    from osmosis_ai.report import RunReport

__all__ = ["report_command"]


def _planned(run: RunReport) -> tuple[str, str]:
    """ " (of N planned)" after the rows and the runs when the log planned more than it holds."""
    model = run.summary["models"][0] if run.summary["models"] else {}
    rows, runs = model.get("planned_rows") or 0, model.get("planned_runs") or 0
    return (
        f" (of {rows:,} planned)" if rows > run.rows_total else "",
        f" (of {runs:,} planned)" if runs > run.runs_total else "",
    )


def _line(run: RunReport) -> str:
    rows = run.row_counts
    planned_rows, planned_runs = _planned(run)
    text = (
        f"{run.rows_total:,} rows{planned_rows}, {run.runs_total:,} runs{planned_runs}, "
        f"n={run.summary['n_runs'] or '?'}: "
        f"{rows.get('passed_every_attempt', 0):,} passed every attempt, {rows.get('passed_some', 0):,} some, "
        f"{rows.get('passed_none', 0):,} none, {rows.get('errored', 0):,} errored, "
        f"{rows.get('incomplete', 0):,} incomplete"
    )
    if run.runs_left_out:
        text += (
            f"; {run.runs_left_out:,} runs of {run.rows_left_out:,} rows left out of the page (over "
            f"--max-data-mb): `osmosis view {run.path}` shows every run"
        )
    return text


@click.command("report")
@click.argument(
    "results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The HTML file to write (default: the first RESULTS with .html; - for standard output).",
)
@click.option(
    "--max-data-mb",
    type=click.FloatRange(min=0),
    default=32,
    show_default=True,
    help="Compressed MiB of runs the page holds; past it every row is still listed, the runs that do not "
    "fit are left out (and named). `osmosis view` has no limit.",
)
@click.option(
    "--dataset",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The dataset file for ground truths and fields (default: the one the log names).",
)
@stdout_output
def report_command(
    results: tuple[Path, ...], output: Path | None, max_data_mb: float, dataset: Path | None
) -> None:
    """Write one HTML page (no network needed) for results logs or -o JSON files.

    The page shows each file's numbers (runs and rows by outcome, scores with intervals, pass@k /
    pass^k curves, durations), score, latency and token plots, per-group statistics over the dataset's
    fields, judge panels for rubric files, and every row: search, filters, sort, a card per row with
    its runs, CSV / JSONL export. `osmosis view LOG` serves the same page for a log of any size.
    """
    from osmosis_ai._files import check_output_file
    from osmosis_ai.cli.output import emit_operation
    from osmosis_ai.cli.run_support import library_errors

    with library_errors({"output": "-o/--output"}):
        check_output_file(output)
    try:
        from osmosis_ai.report import report
    except ImportError as exc:
        raise (missing_extra(exc, "osmosis report") or CLIError(str(exc))) from exc
    target = output or results[0].with_suffix(".html")
    try:
        made = report(list(results), output=target, max_data_mb=max_data_mb, dataset=dataset)
    except ImportError as exc:
        raise (missing_extra(exc, "osmosis report") or CLIError(str(exc))) from exc
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
                    "runs": r.runs_total,
                    "row_counts": r.row_counts,
                    "runs_left_out": r.runs_left_out,
                    "rows_left_out": r.rows_left_out,
                    "warnings": [w["message"] for w in r.summary["warnings"]],
                }
                for r in made.runs
            ],
        },
        lines=[(Path(r.path).name, _line(r)) for r in made.runs],
    )
