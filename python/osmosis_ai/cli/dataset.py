"""`osmosis dataset ...`: check dataset files (`validate`) and manage datasets on the platform."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from osmosis_ai.cli.commands import LazyCommands
from osmosis_ai.cli.main import LazyGroup
from osmosis_ai.cli.output import help_without_subcommand

if TYPE_CHECKING:
    from osmosis_ai.datasets import Contract

# The platform subcommands, imported on first use: name -> (module, attribute, one-line help).
DATASET_COMMANDS: LazyCommands = {
    "upload": (
        "osmosis_ai.cli.dataset_platform",
        "upload_cmd",
        "Check a file and upload it as a platform dataset.",
    ),
    "list": ("osmosis_ai.cli.dataset_platform", "list_cmd", "List the workspace's datasets."),
    "info": ("osmosis_ai.cli.dataset_platform", "info_cmd", "Show a dataset's status and statistics."),
    "logs": ("osmosis_ai.cli.dataset_platform", "logs_cmd", "Show a dataset's processing log."),
    "preview": ("osmosis_ai.cli.dataset_platform", "preview_cmd", "Show a dataset's first rows."),
    "download": ("osmosis_ai.cli.dataset_platform", "download_cmd", "Download a dataset file."),
}


@click.group("dataset", cls=LazyGroup, lazy_commands=DATASET_COMMANDS, invoke_without_command=True)
@click.pass_context
def dataset_group(ctx: click.Context) -> None:
    """Check dataset files (JSONL, JSON, CSV, Parquet); upload and manage datasets on the platform."""
    help_without_subcommand(ctx)


@dataset_group.command("validate")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--contract",
    type=click.Choice(["eval", "rubric", "eval_run", "any"]),
    default="eval",
    show_default=True,
    help="Row contract: eval datasets (system_prompt, user_prompt, ground_truth), "
    "eval-rubric records (solution_str), eval run datasets (user_prompt, ground_truth or metadata), "
    "or objects only.",
)
@click.option(
    "--max-problems",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Problems to list; all are counted.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def validate(file: str, contract: Contract, max_problems: int, as_json: bool) -> int:
    """Check every row of FILE; list every problem with its line. Exit 1 if there is any."""
    from dataclasses import asdict

    from osmosis_ai.datasets import validate_dataset

    report = validate_dataset(click.format_filename(file), contract=contract, max_problems=max_problems)
    if as_json:
        document = {"schema_version": 1, **asdict(report), "ok": report.ok}
        click.echo(json.dumps(document, ensure_ascii=False, indent=2))
        return 0 if report.ok else 1
    click.echo(f"Dataset:  {report.path} ({report.format}, contract: {contract})")
    click.echo(f"Rows:     {report.rows}")
    click.echo(f"Columns:  {', '.join(report.columns) if report.columns else '(none)'}")
    if report.ok:
        click.echo("Problems: none")
        click.echo("OK")
        return 0
    click.echo(f"Problems: {report.total_problems} in {report.bad_rows} row(s)", err=False)
    for problem in report.problems:
        where = f"{problem.unit} {problem.line}" if problem.line is not None else "file"
        if problem.row is not None and problem.unit == "line":
            where += f" (row {problem.row})"
        field = f" [{problem.field}]" if problem.field else ""
        click.echo(f"  {where}{field}: {problem.message}")
    if report.truncated:
        click.echo(f"  ... {report.total_problems - len(report.problems)} more (raise --max-problems)")
    click.echo("FAILED", err=True)
    return 1
