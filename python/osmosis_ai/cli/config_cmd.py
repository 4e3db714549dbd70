"""`osmosis config validate PATH...`: check eval/training configs and their workspace, all at once."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

import click

from osmosis_ai.cli.output import help_without_subcommand
from osmosis_ai.errors import CLIError


def _expand(paths: tuple[str, ...], kind: str | None) -> list[str]:
    """Files as given; a directory becomes the config files under it (sorted)."""
    from osmosis_ai.config import infer_kind

    files: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            files.append(path)
            continue
        found = sorted(str(p) for p in Path(path).rglob("*.toml") if kind or infer_kind(p))
        if not found:
            raise CLIError(
                f"{path}: no config files under it (looked for configs/eval/*.toml, configs/training/*.toml)"
            )
        files += found
    return files


@click.group("config", invoke_without_command=True)
@click.pass_context
def config_group(ctx: click.Context) -> None:
    """Check eval and training configs (configs/eval/*.toml, configs/training/*.toml)."""
    help_without_subcommand(ctx)


@config_group.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=False, path_type=str))
@click.option(
    "--kind",
    type=click.Choice(["eval", "training"]),
    default=None,
    help="Treat every file as this kind (default: from its location, configs/eval/ or configs/training/).",
)
@click.option("--no-workspace", is_flag=True, help="Check the files only, not the rollout they point at.")
@click.option("--no-import", is_flag=True, help="Do not import rollout entrypoints to see what they expose.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON report on stdout.")
def validate_command(
    paths: tuple[str, ...],
    kind: Literal["eval", "training"] | None,
    no_workspace: bool,
    no_import: bool,
    as_json: bool,
) -> None:
    """Validate config files: every problem of every file, each with file:line:column.

    A directory stands for the configs under it (its .toml files under configs/eval/ and
    configs/training/, or all its .toml files with --kind). Exits 0 when all files are valid, 1 otherwise.

    \b
    Example:
        osmosis config validate configs/eval/*.toml configs/training/*.toml
        osmosis config validate .
    """
    from dataclasses import asdict

    from osmosis_ai.config import BenchmarkConfig, rollout_target, validate_files
    from osmosis_ai.workspace_layout import EntrypointReport, check_workspace

    files = _expand(paths, kind)
    reports = validate_files(files, kind)
    results: list[dict[str, Any]] = []
    probes: dict[tuple[Path, str], EntrypointReport] = {}
    for report in reports:
        problems = [str(issue) for issue in report.issues]
        warnings: list[str] = []
        # An invalid file still names its rollout: check it too, so one pass reports every problem.
        target = report.config or rollout_target(report)
        # Only eval and training configs get here (--kind and configs/<kind>/ name no other), but the
        # report's type allows a benchmark config, which names no rollout.
        if target is not None and not isinstance(target, BenchmarkConfig) and not no_workspace:
            check = check_workspace(target, import_entrypoint=not no_import, probe_cache=probes)
            problems += check.problems
            warnings += check.warnings
        results.append(
            {
                "path": report.path,
                "kind": report.kind,
                "valid": not problems,
                "problems": problems,
                "issues": [asdict(issue) for issue in report.issues],
                "warnings": warnings,
            }
        )

    invalid = [r for r in results if not r["valid"]]
    if as_json:
        summary = {"schema_version": 1, "valid": not invalid, "files": results}
        click.echo(json.dumps(summary, ensure_ascii=False))
    else:
        for result in results:
            for warning in result["warnings"]:
                click.echo(f"warning: {warning}", err=True)
            if result["valid"]:
                click.echo(f"ok: {result['path']} ({result['kind']} config)")
            for problem in result["problems"]:
                click.echo(problem)
        count = sum(len(r["problems"]) for r in results)
        click.echo(
            f"{len(results)} file(s) checked: {len(results) - len(invalid)} valid, {len(invalid)} invalid, "
            f"{count} problem(s)",
            err=True,
        )
    if invalid:
        if as_json:
            raise click.exceptions.Exit(1)
        raise CLIError(f"{len(invalid)} of {len(results)} config file(s) are invalid")
