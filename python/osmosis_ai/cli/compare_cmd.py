"""``osmosis compare A B``: paired differences, flips and McNemar's exact test between two runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from osmosis_ai.cli.output import stdout_output
from osmosis_ai.errors import CLIError
from osmosis_ai.extras import missing_extra

if TYPE_CHECKING:
    from osmosis_ai.report import RunComparison

__all__ = ["compare_command"]


def _label(statistic: str) -> str:
    return statistic.replace("pass_at_", "pass@").replace("pass_hat_", "pass^")


def _stat(value: float | None, spec: str) -> str:
    """A statistic in its column; nothing scored is n/a, never 0."""
    return "n/a" if value is None else format(value, spec)


def _text(result: RunComparison) -> list[str]:
    from osmosis_ai.report._compare_page import verdict

    f = result.flips
    lines = [
        f"A: {result.a}",
        f"B: {result.b}",
        f"metric {result.metric}: {result.rows_matched} rows matched by {result.matched_by}; "
        f"paired {result.interval_method} intervals of B - A",
        "",
        f"{'statistic':<12}{'A':>9}{'B':>9}{'B - A':>10}  {'interval':<22}verdict",
    ]
    notes: list[str] = []
    for name, iv in result.differences.items():
        interval = "no interval" if iv["low"] is None else "[{:+.4f}, {:+.4f}]".format(iv["low"], iv["high"])
        a, b, delta = (_stat(v, f) for v, f in ((iv["a"], ".4f"), (iv["b"], ".4f"), (iv["estimate"], "+.4f")))
        lines.append(f"{_label(name):<12}{a:>9}{b:>9}{delta:>10}  {interval:<22}{verdict(iv['verdict'])}")
        if iv["estimate"] is None and iv["note"] not in notes:
            notes.append(iv["note"])  # why a difference is n/a, once
    mcnemar = _stat(result.mcnemar_p, ".4g")
    lines += [
        *(f"n/a: {note}" for note in notes),
        "",
        f"First attempts: A passed/B did not {f['a_only']}, B passed/A did not {f['b_only']}, "
        f"both passed {f['both']}, neither passed {f['neither']}"
        if result.mcnemar_p is not None
        else "First attempts: no matched row's first attempt counts on both sides",
        f"McNemar exact p = {mcnemar}",
        f"Verdict: {result.verdict.get('reason', verdict(result.verdict.get('outcome', '')))}",
        *(f"Note: {w}" for w in result.warnings),
    ]
    if result.changed_rows:
        lines.append("Rows that changed most (pass rate A -> B):")
        for row in result.changed_rows[:10]:
            # The row's position a user can find in the dataset, not its content digest.
            where = f"row {row['row_index']}"
            if row.get("row_index_b") not in (None, row["row_index"]):
                where += f" (row {row['row_index_b']} in B)"
            lines.append(f"  {where}: {row['pass_rate_a']:.2f} -> {row['pass_rate_b']:.2f}")
    return lines


@click.command("compare")
@click.argument("a", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("b", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--metric", default=None, help="The score name to compare (default: the first A declares).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write an HTML page (- for standard output).",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Compare the shared rows when the runs hold different rows (else refuse).",
)
@click.option(
    "--max-data-mb",
    type=click.FloatRange(min=0),
    default=32,
    show_default=True,
    help="With -o: compressed MiB of runs the page holds (every row is listed; `osmosis view A B` has no limit).",
)
@click.option(
    "--dataset",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The dataset file for ground truths and per-group differences (default: the one A names).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Resampling seed (bootstrap intervals; t needs none).",
)
@stdout_output
def compare_command(
    a: Path,
    b: Path,
    metric: str | None,
    output: Path | None,
    allow_partial: bool,
    max_data_mb: float,
    dataset: Path | None,
    seed: int,
) -> None:
    """Is run B better than run A on the same rows, or is it noise?

    Rows are matched by content. Prints the difference B - A of the mean score and of pass@k / pass^k
    for each k with paired Student t intervals over rows, the pass/fail flips of each row's first attempt with
    McNemar's exact test, and the rows that changed most. With -o, a page puts A and B side by side for
    every matched row (`osmosis view A B` serves it for logs of any size).
    """
    from osmosis_ai._files import check_output_file
    from osmosis_ai.cli.output import STATE, emit_detail
    from osmosis_ai.cli.run_support import library_errors

    with library_errors({"output": "-o/--output"}):
        check_output_file(output)
    try:
        from osmosis_ai.report import compare
    except ImportError as exc:
        raise (missing_extra(exc, "osmosis compare") or CLIError(str(exc))) from exc
    try:
        result = compare(
            a,
            b,
            metric=metric,
            allow_partial=allow_partial,
            seed=seed,
            output=output,
            max_data_mb=max_data_mb,
            dataset=dataset,
        )
    except ImportError as exc:
        raise (missing_extra(exc, "osmosis compare") or CLIError(str(exc))) from exc
    data = result.to_dict()
    # The envelope lists the changed rows without their runs (the page has those).
    data["changed_rows"] = [{k: v for k, v in r.items() if k != "runs"} for r in result.changed_rows]
    data["output"] = None if output is None else str(output)
    if STATE.mode == "json":
        emit_detail(data, [])
        return
    from osmosis_ai.terminal_text import terminal_safe

    for line in _text(result):  # row keys and notes may quote dataset text
        click.echo(terminal_safe(line))
    if output is not None:
        click.echo(f"\nWrote {output}")
