"""``osmosis compare A B``: paired differences, flips and McNemar's exact test between two runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from osmosis_ai.errors import CLIError
from osmosis_ai.extras import missing_extra

__all__ = ["compare_command"]


def _label(statistic: str) -> str:
    return statistic.replace("pass_at_", "pass@").replace("pass_hat_", "pass^")


def _text(result: Any) -> list[str]:
    f = result.flips
    lines = [
        f"A: {result.a}",
        f"B: {result.b}",
        f"metric {result.metric}: {result.rows_matched} rows matched by {result.matched_by}; "
        f"95% paired {result.interval_method} intervals of B - A",
        "",
        f"{'statistic':<12}{'A':>9}{'B':>9}{'B - A':>10}  {'interval':<22}verdict",
    ]
    for name, iv in result.differences.items():
        real = iv["low"] is not None and (iv["low"] > 0 or iv["high"] < 0)
        verdict = ("B better" if iv["estimate"] > 0 else "B worse") if real else "no clear difference"
        lines.append(
            f"{_label(name):<12}{result.a_values[name]:>9.4f}{result.b_values[name]:>9.4f}{iv['estimate']:>+10.4f}  "
            f"{'n/a' if iv['low'] is None else '[{:+.4f}, {:+.4f}]'.format(iv['low'], iv['high']):<22}{verdict}"
        )
    lines += [
        "",
        f"First attempts: A passed/B failed {f['a_only']}, A failed/B passed {f['b_only']}, "
        f"both passed {f['both']}, both failed {f['neither']}",
        f"McNemar exact p = {result.mcnemar_p:.4g}",
    ]
    if result.changed_rows:
        lines.append("Rows that changed most (pass rate A -> B):")
        for row in result.changed_rows[:10]:
            key = row["row_key"] or f"row {row['row_index']}"
            lines.append(f"  {key}: {row['pass_rate_a']:.2f} -> {row['pass_rate_b']:.2f}")
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
    help="Also write an HTML page.",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Compare the shared rows when the runs hold different rows (else refuse).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
def compare_command(
    a: Path, b: Path, metric: str | None, output: Path | None, allow_partial: bool, seed: int
) -> None:
    """Is run B better than run A on the same rows, or is it noise?

    Rows are matched by content. Prints the difference B - A of the mean score and of pass@k / pass^k
    for each k with paired bootstrap intervals, the pass/fail flips of each row's first attempt with
    McNemar's exact test, and the rows that changed most.
    """
    from osmosis_ai.cli.output import STATE, emit_detail

    try:
        from osmosis_ai.report import compare
    except ImportError as exc:
        raise (missing_extra(exc, "osmosis compare") or CLIError(str(exc))) from exc
    try:
        result = compare(a, b, metric=metric, allow_partial=allow_partial, seed=seed, output=output)
    except ImportError as exc:
        raise (missing_extra(exc, "osmosis compare") or CLIError(str(exc))) from exc
    data = result.to_dict()
    # The envelope lists the changed rows without their runs (the page has those).
    data["changed_rows"] = [{k: v for k, v in r.items() if k != "runs"} for r in result.changed_rows]
    data["output"] = None if output is None else str(output)
    if STATE.mode == "json":
        emit_detail(data, [])
        return
    for line in _text(result):
        click.echo(line)
    if output is not None:
        click.echo(f"\nWrote {output}")
