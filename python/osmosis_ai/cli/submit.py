"""`osmosis eval submit CONFIG` / `osmosis train submit CONFIG`: the local pre-flight of a cloud run.

Everything the established CLI checks before its first network call runs here, in its order: config
location, config contents, workspace layout, rollout directory and entrypoint (imported in a child
process), the pinned commit (locally), and the secrets' per-run values. ``--dry-run`` then prints the exact
request that would be sent, with secret names and without secret values. Sending it needs a platform
client, which this version does not have yet: without ``--dry-run`` the command says so and exits 1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from osmosis_ai._version import __version__
from osmosis_ai.errors import CLIError

REDACTED = "[REDACTED]"
ENDPOINTS = {"eval": "/api/cli/eval-runs", "training": "/api/cli/training-runs"}
COMMANDS = {"eval": "osmosis eval submit", "training": "osmosis train submit"}
_DOTENV_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_GITHUB_URL = re.compile(
    r"^(?:https?://(?:[^@/]+@)?github\.com/|ssh://git@github\.com/|git@github\.com:)"
    r"(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<repo>[A-Za-z0-9._-]+?)(?:\.git)?/?$",
    re.IGNORECASE,
)


def parse_secrets_file(text: str, label: str) -> dict[str, str]:
    """Parses dotenv text (``NAME=value``, optional ``export``, ``#`` comments, one pair of quotes).

    Errors cite the source and line number only, never the line's content (it may hold a secret).

    Example:
        >>> parse_secrets_file("export A='x'\\n# c\\nB=y\\n", "f")
        {'A': 'x', 'B': 'y'}
    """
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _DOTENV_LINE.match(stripped)
        if match is None:
            raise CLIError(f"{label}:{number}: expected NAME=value (the line's content is not shown)")
        value = match.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[match.group(1)] = value
    return values


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    if shutil.which("git") is None:
        return None
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=False
    )


def git_identity(root: Path) -> str | None:
    """``owner/repo`` (lower-case) of the workspace's GitHub ``origin`` remote, if it has one."""
    proc = _git(root, "remote", "get-url", "origin")
    if proc is None or proc.returncode != 0:
        return None
    match = _GITHUB_URL.match(proc.stdout.strip())
    return f"{match['owner']}/{match['repo']}".lower() if match else None


@dataclass
class Preflight:
    """The outcome of the local checks: the request that would be sent, and what the user should know."""

    kind: str
    config_path: Path
    workspace: Path
    body: dict[str, Any]
    headers: dict[str, str]
    secret_sources: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def request(self) -> dict[str, Any]:
        return {"method": "POST", "path": ENDPOINTS[self.kind], "headers": self.headers, "json": self.body}


def run_preflight(kind: str, config_arg: str, secrets_file: str | None) -> Preflight:
    """Runs every local check of ``submit`` in order; raises on the first stage that fails."""
    from osmosis_ai.config import load_eval_config, load_training_config
    from osmosis_ai.errors import ConfigError
    from osmosis_ai.workspace import check_config_location, check_workspace, resolve_config_path

    command = COMMANDS[kind]
    path = resolve_config_path(config_arg)
    root = check_config_location(path, kind, command)  # type: ignore[arg-type]
    config = load_eval_config(path) if kind == "eval" else load_training_config(path)
    check = check_workspace(config, root=root)
    if check.problems:
        raise ConfigError(f"{command} pre-flight failed:\n" + "\n".join(f"  {p}" for p in check.problems))
    warnings = list(check.warnings)

    sha = config.experiment.commit_sha
    if sha:
        probe = _git(root, "cat-file", "-e", f"{sha}^{{commit}}")
        if probe is not None and probe.returncode != 0:
            warnings.append(
                f"{config.where('experiment.commit_sha')}: commit {sha} is not in the local repository; "
                "the platform fetches it from the connected repository, so make sure it is pushed"
            )

    headers = {
        "Content-Type": "application/json",
        "User-Agent": f"osmosis-cli/{__version__}",
        "X-Osmosis-CLI-Version": __version__,
        "Authorization": f"Bearer {REDACTED}",
    }
    identity = git_identity(root)
    if identity:
        headers["X-Osmosis-Git"] = identity
    else:
        warnings.append(
            f"{root} has no GitHub `origin` remote; the platform finds the workspace (and the rollout code) "
            "through it"
        )

    body = config.request_body()
    sources: dict[str, str] = {}
    if config.secrets:
        file_values: dict[str, str] = {}
        if secrets_file is not None:
            if secrets_file == "-":
                file_values = parse_secrets_file(click.get_text_stream("stdin").read(), "<stdin>")
            elif not Path(secrets_file).is_file():
                raise CLIError(f"--secrets-file {secrets_file}: no such file")
            else:
                file_values = parse_secrets_file(Path(secrets_file).read_text(encoding="utf-8"), secrets_file)
        provided: dict[str, str] = {}
        for name in config.secrets:
            if file_values.get(name):
                sources[name] = "per-run value from --secrets-file"
            elif os.environ.get(name):
                sources[name] = "per-run value from the environment"
            else:
                sources[name] = "stored platform secret (checked by the platform)"
                continue
            # The value would travel once in the request; it is never printed.
            provided[name] = REDACTED
        body["secrets"] = {"required": list(config.secrets)}
        if provided:
            body["secrets"]["provided"] = provided
    return Preflight(kind, path, root, body, headers, sources, warnings)


def make_submit_command(kind: str) -> click.Command:
    """Builds ``submit`` for ``kind`` ("eval" or "training"); both share one pre-flight."""
    label = "evaluation" if kind == "eval" else "training"

    @click.command("submit")
    @click.argument("config_path")
    @click.option(
        "--dry-run", is_flag=True, help="Run every local check and print the request; send nothing."
    )
    @click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
    @click.option(
        "--secrets-file",
        default=None,
        help="dotenv file (or - for stdin) with per-run values of [secrets].required names.",
    )
    def submit(config_path: str, dry_run: bool, yes: bool, secrets_file: str | None) -> None:
        preflight = run_preflight(kind, config_path, secrets_file)
        for warning in preflight.warnings:
            click.echo(f"warning: {warning}", err=True)
        if dry_run:
            out = {
                "dry_run": True,
                "config": str(preflight.config_path),
                "workspace_directory": str(preflight.workspace),
                "request": preflight.request(),
                "secrets": preflight.secret_sources,
                "warnings": preflight.warnings,
            }
            click.echo(json.dumps(out, indent=2, ensure_ascii=False))
            return
        raise CLIError(
            f"Pre-flight passed, but no platform is configured: this version of osmosis-ai cannot submit "
            f"{label} runs yet. Run with --dry-run to see the exact request that would be sent."
        )

    submit.help = (
        f"Check a {label} config and its workspace, then submit the run (use --dry-run to print the request)."
    )
    return submit


eval_submit = make_submit_command("eval")
train_submit = make_submit_command("training")
