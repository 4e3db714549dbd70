"""`osmosis rollout init NAME [--force]`: a 0.3 rollout (AgentWorkflow + Grader) in the current workspace.

Writes ``rollouts/NAME/`` (``main.py``, ``pyproject.toml``, ``README.md``), ``configs/eval/NAME.toml`` and
``configs/training/NAME.toml`` (they pass ``osmosis config validate`` as written), plus sample data
``data/NAME.jsonl`` when missing. Existing targets are a conflict unless ``--force``; even then a symlink
is never followed or replaced.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from osmosis_ai.errors import CLIError


def _conflicts(root: Path, name: str, force: bool) -> list[str]:
    rollout = root / "rollouts" / name
    configs = [root / "configs" / kind / f"{name}.toml" for kind in ("eval", "training")]
    if not force:
        found = [f"rollouts/{name}/"] if rollout.exists() or rollout.is_symlink() else []
        found += [str(p.relative_to(root)) for p in configs if p.exists() or p.is_symlink()]
        return found
    bad = [str(p.relative_to(root)) for p in configs if p.is_symlink() or (p.exists() and not p.is_file())]
    if rollout.is_symlink() or (rollout.exists() and not rollout.is_dir()):
        bad.append(f"rollouts/{name}/")
    if bad:
        raise CLIError(
            "Refusing to replace a symlink or non-regular path (even with --force):\n"
            + "\n".join(f"  - {p}" for p in bad),
            code="CONFLICT",
        )
    return []


@click.command("init", short_help="Create rollouts/NAME/ and its eval and training configs.")
@click.argument("name")
@click.option(
    "-f", "--force", is_flag=True, help="Replace an existing rollout directory and configs of this name."
)
def rollout_init(name: str, force: bool) -> None:
    """Create rollouts/NAME/ (AgentWorkflow + Grader) and configs/{eval,training}/NAME.toml here."""
    from osmosis_ai.cli.output import emit_operation
    from osmosis_ai.scaffold import rollout_scaffold_files, validate_rollout_name
    from osmosis_ai.workspace_layout import find_workspace_root, missing_workspace_dirs

    problem = validate_rollout_name(name)
    if problem:
        raise CLIError(problem)
    root = find_workspace_root(Path.cwd())
    if root is None:
        raise CLIError(
            "Run this inside a workspace (a directory with rollouts/ and configs/); `osmosis init` creates one."
        )
    missing = missing_workspace_dirs(root)
    if missing:
        raise CLIError(
            f"{root} is missing workspace directories:\n"
            + "\n".join(f"  - {d}" for d in missing)
            + "\nRun `osmosis doctor --fix`."
        )
    conflicts = _conflicts(root, name, force)
    if conflicts:
        raise CLIError(
            "Already exists:\n"
            + "\n".join(f"  - {p}" for p in conflicts)
            + "\nRe-run with --force to replace them.",
            code="CONFLICT",
        )
    if force and (root / "rollouts" / name).is_dir():
        shutil.rmtree(root / "rollouts" / name)
    written = []
    for path, text in rollout_scaffold_files(name).items():
        target = root / path
        if path.parts[0] == "data" and (target.exists() or target.is_symlink()):
            continue  # sample data never replaces the user's
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(str(path))
    steps = [
        f"osmosis config validate configs/eval/{name}.toml configs/training/{name}.toml",
        f"osmosis eval run configs/eval/{name}.toml --dataset-file data/{name}.jsonl",
        f"osmosis eval submit configs/eval/{name}.toml",
        f"osmosis train submit configs/training/{name}.toml",
    ]
    emit_operation(
        "rollout.init",
        message=f"Initialized rollout '{name}'.",
        resource={
            "name": name,
            "workspace_directory": str(root),
            "rollout_dir": str(root / "rollouts" / name),
            "configs": {"eval": f"configs/eval/{name}.toml", "training": f"configs/training/{name}.toml"},
            "files": written,
        },
        next_steps=[(s, {"command": s}) for s in steps],
    )
