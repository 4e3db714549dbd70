"""`osmosis template list` / `osmosis template apply NAME [--force]`: example rollouts bundled with the SDK."""

from __future__ import annotations

from pathlib import Path

import click

from osmosis_ai.cli.output import help_without_subcommand
from osmosis_ai.errors import CLIError


@click.group("template", invoke_without_command=True)
@click.pass_context
def template_group(ctx: click.Context) -> None:
    """List the bundled example rollouts, or apply one to this workspace."""
    help_without_subcommand(ctx)


@template_group.command("list")
def template_list() -> None:
    """List the templates."""
    from osmosis_ai.cli.output import STATE, emit_list
    from osmosis_ai.templates import CATALOG

    items = [{"name": name, "summary": recipe.summary} for name, recipe in CATALOG.items()]
    # --plain: one name per line, as the established CLI prints (scripts read it that way).
    columns = [("name", "NAME")] if STATE.mode == "plain" else [("name", "NAME"), ("summary", "SUMMARY")]
    emit_list(items, columns, total_count=len(items), has_more=False)


@template_group.command("apply", short_help="Write template NAME's rollout, configs and data here.")
@click.argument("name")
@click.option("-f", "--force", is_flag=True, help="Replace the template's own files if they exist.")
def template_apply(name: str, force: bool) -> None:
    """Write template NAME (rollouts/NAME/, its configs, data/multiply.jsonl) into this workspace."""
    from osmosis_ai.cli.output import emit_operation
    from osmosis_ai.platform.workspace import git_toplevel
    from osmosis_ai.templates import apply_template
    from osmosis_ai.workspace_layout import find_workspace_root

    root = git_toplevel(Path.cwd()) or find_workspace_root(Path.cwd())
    if root is None:
        raise CLIError(
            "Run this inside a workspace (a Git repository, or a directory with rollouts/ and configs/)."
        )
    from osmosis_ai.cli.run_support import library_errors

    with library_errors({"force": "--force"}):
        result = apply_template(root, name, force=force)
    steps = [
        f"pip install -e rollouts/{name}",
        f"osmosis eval run configs/eval/{name}.toml --dataset-file data/multiply.jsonl",
        f"osmosis eval submit configs/eval/{name}.toml",
        f"osmosis train submit configs/training/{name}.toml",
    ]
    emit_operation(
        "template.apply",
        message=f"Applied template '{name}' to {root}.",
        resource={"name": result.name, "destinations": result.destinations, "files": result.files},
        next_steps=[(s, {"command": s}) for s in steps],
    )
