"""`osmosis init [DIRECTORY]`: scaffold a workspace (rollout, eval and training configs, sample data)."""

from __future__ import annotations

from pathlib import Path

import click

from osmosis_ai.cli.output import emit_result, json_result
from osmosis_ai.errors import CLIError


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--name", default="demo", show_default=True, help="Rollout name (^[a-z][a-z0-9-]*$).")
@click.option("-f", "--force", is_flag=True, help="Overwrite files the scaffold owns.")
@json_result
def init_command(directory: Path, name: str, force: bool) -> None:
    """Create a workspace in DIRECTORY: rollouts/NAME/, configs/eval/NAME.toml, configs/training/NAME.toml,
    data/NAME.jsonl. The configs pass `osmosis config validate` as written.
    """
    from osmosis_ai.doctor import add_guides
    from osmosis_ai.scaffold import scaffold_files, validate_rollout_name

    problem = validate_rollout_name(name)
    if problem:
        raise click.BadParameter(problem, param_hint="--name")
    root = directory.resolve()
    files = scaffold_files(name)
    existing = [str(path) for path in files if (root / path).exists() or (root / path).is_symlink()]
    if existing and not force:
        listing = "\n".join(f"  - {p}" for p in existing)
        raise CLIError(
            f"These files already exist in {root}:\n{listing}\nRe-run with --force to overwrite them."
        )
    for path in files:
        target = root / path
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise CLIError(f"{target} is a symlink or not a regular file; refusing to overwrite it")
    for sub in ("rollouts", "configs/eval", "configs/training", "data"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        click.echo(f"created {path}")
    guides = add_guides(root)  # what `osmosis doctor` checks; a guide of your own is kept
    for guide in guides:
        click.echo(f"created {guide}")
    click.echo(
        f"\nInitialized rollout '{name}' in {root}.\nNext steps:\n"
        f"  osmosis config validate configs/eval/{name}.toml configs/training/{name}.toml\n"
        f"  osmosis eval submit configs/eval/{name}.toml --dry-run"
    )
    emit_result({"root": str(root), "rollout": name, "created": [*(str(path) for path in files), *guides]})
