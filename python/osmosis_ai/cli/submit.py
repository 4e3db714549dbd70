"""`osmosis eval submit CONFIG` / `osmosis train submit CONFIG`: check a run locally, then submit it.

Everything the established CLI checks before its first network call runs first, in its order: config
location, config contents, workspace layout, rollout directory and entrypoint (imported in a child
process), the pinned commit (locally), and the secrets' per-run values. ``--dry-run`` stops there and
prints the exact request, with secret names and without secret values. Otherwise the command logs in,
checks which secrets the platform already holds, warns about code the platform cannot see (uncommitted
or unpushed), asks for confirmation, and sends the run once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from osmosis_ai._version import __version__
from osmosis_ai.cli.output import confirm, emit_operation, is_interactive, status, warn
from osmosis_ai.cli.run_support import library_errors
from osmosis_ai.eval.run_inputs import read_secrets_file as read_secrets

if TYPE_CHECKING:
    from osmosis_ai.config import EvalConfig, TrainingConfig

SubmitKind = Literal["eval", "training"]

REDACTED = "[REDACTED]"
ENDPOINTS: dict[SubmitKind, str] = {"eval": "/api/cli/eval-runs", "training": "/api/cli/training-runs"}
COMMANDS: dict[SubmitKind, str] = {"eval": "osmosis eval submit", "training": "osmosis train submit"}


def read_secrets_file(secrets_file: str | None) -> dict[str, str]:
    """The values of ``--secrets-file`` (``-`` reads stdin); empty without one.

    Raises:
        CLIError: The file does not exist, or a line is not ``NAME=value``.
    """
    with library_errors({"secrets_file": "--secrets-file"}):
        return read_secrets(secrets_file)


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    if shutil.which("git") is None:
        return None
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=False
    )


def git_identity(root: Path) -> str | None:
    """``owner/repo`` (lower-case) of the workspace's GitHub ``origin`` remote, if it has one."""
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.workspace import origin_identity

    try:
        identity = origin_identity(root)
    except PlatformError:
        return None
    return identity.identity if identity else None


@dataclass
class Preflight:
    """The outcome of the local checks: the request that would be sent, and what the user should know."""

    kind: SubmitKind
    config_path: Path
    workspace: Path
    body: dict[str, Any]
    headers: dict[str, str]
    secret_sources: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    config: EvalConfig | TrainingConfig | None = None
    # Per-run secret values found locally (file, environment); the body holds "[REDACTED]" in their place.
    provided_values: dict[str, str] = field(default_factory=dict, repr=False)
    file_values: dict[str, str] = field(default_factory=dict, repr=False)

    def request(self) -> dict[str, Any]:
        return {"method": "POST", "path": ENDPOINTS[self.kind], "headers": self.headers, "json": self.body}


def run_preflight(kind: SubmitKind, config_arg: str, secrets_file: str | None) -> Preflight:
    """Runs every local check of ``submit`` in order; raises on the first stage that fails."""
    from osmosis_ai.config import load_eval_config, load_training_config
    from osmosis_ai.errors import ConfigError
    from osmosis_ai.workspace_layout import check_config_location, check_workspace, resolve_config_path

    command = COMMANDS[kind]
    path = resolve_config_path(config_arg)
    root = check_config_location(path, kind, command)
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
        file_values = read_secrets_file(secrets_file)
        provided: dict[str, str] = {}
        for name in config.secrets:
            if file_values.get(name):
                sources[name] = "per-run value from --secrets-file"
            elif os.environ.get(name):
                sources[name] = "per-run value from the environment"
            else:
                sources[name] = "stored platform secret (checked by the platform)"
                continue
            # The value travels once in the request; it is never printed.
            provided[name] = REDACTED
        body["secrets"] = {"required": list(config.secrets)}
        if provided:
            body["secrets"]["provided"] = provided
    else:
        file_values = {}
    return Preflight(kind, path, root, body, headers, sources, warnings, config, {}, file_values)


def _summary(preflight: Preflight) -> dict[str, Any]:
    experiment = preflight.body["experiment_config"]
    summary = {
        "Rollout": experiment.get("rollout"),
        "Entrypoint": experiment.get("entrypoint"),
        "Model": experiment.get("model_path"),
        "Dataset": experiment.get("dataset"),
        "Branch": experiment.get("branch"),
        "Commit": experiment.get("commit_sha"),
    }
    return {k: v for k, v in summary.items() if v is not None}


def submit_for_real(preflight: Preflight, yes: bool) -> None:
    """Logs in, settles the secrets, warns, confirms and sends the run; prints the outcome."""
    from osmosis_ai.cli.platform_context import platform_session
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.runs import EVAL, TRAINING, submit_run
    from osmosis_ai.platform.secrets import redact, resolve_submit_secrets
    from osmosis_ai.platform.workspace import resolve_workspace, source_warnings

    kind = EVAL if preflight.kind == "eval" else TRAINING
    workspace = resolve_workspace(preflight.workspace, check_layout=False)  # checked by the pre-flight
    body = json.loads(json.dumps(preflight.body))
    with platform_session(scoped=False) as session:
        session.client.git_identity = workspace.git.identity
        session.workspace = workspace
        provided: dict[str, str] = {}
        summary = _summary(preflight)
        required = list(body.get("secrets", {}).get("required", []))
        if required:
            prompt = (
                (lambda n: click.prompt(f"Value for {n}", hide_input=True, default="", show_default=False))
                if (is_interactive())
                else None
            )
            resolved = resolve_submit_secrets(
                session.client, required, preflight.file_values, os.environ, prompt=prompt
            )
            provided = resolved.provided
            from osmosis_ai.redact import remember

            remember(provided.values())
            body["secrets"] = {"required": required}
            if provided:
                body["secrets"]["provided"] = dict(provided)
            summary.update({f"secret.{n}": source for n, source in resolved.sources.items()})
        pinned = bool(body["experiment_config"].get("commit_sha"))
        for text in source_warnings(workspace.directory, pinned=pinned):
            warn("SOURCE_NOT_PUSHED", text)
        if not pinned:
            status(
                "The platform takes the rollout code from the connected repository's branch; config values "
                "come from this local file."
            )
        for label, value in summary.items():
            status(f"  {label}: {value}")
        if not confirm(f"Submit this {kind.label} run?", yes=yes, summary=summary, default=True):
            emit_operation(f"{kind.command}.submit", status_="cancelled", message="Cancelled.")
            return
        try:
            created = submit_run(session.client, kind, body)
        except PlatformError as exc:
            raise redact(exc, provided.values()) from None
    experiment = body["experiment_config"]
    resource = {
        "id": created["id"],
        "name": created["name"],
        "status": created["status"],
        "model_name": experiment.get("model_path"),
        "dataset_name": experiment.get("dataset"),
        "created_at": created.get("created_at"),
        "url": created.get("platform_url"),
        **workspace.as_dict(),
        "config": {
            "rollout": experiment.get("rollout"),
            "entrypoint": experiment.get("entrypoint"),
            "model": experiment.get("model_path"),
            "dataset": experiment.get("dataset"),
            "branch": experiment.get("branch"),
            "commit_sha": experiment.get("commit_sha"),
        },
    }
    group = kind.command
    steps = [
        (f"osmosis {group} info {created['name']}", {"action": f"{group}_info", "name": created["name"]}),
        (f"osmosis {group} list", {"action": f"{group}_list"}),
    ]
    if created.get("platform_url"):
        steps.append(
            (f"open {created['platform_url']}", {"action": "open_url", "url": created["platform_url"]})
        )
    noun = "Evaluation" if kind is EVAL else "Training"
    emit_operation(
        f"{group}.submit",
        message=f"{noun} run submitted: {created['name']}",
        resource=resource,
        lines=[("Status", created["status"]), ("URL", created.get("platform_url"))],
        next_steps=steps,
    )


def make_submit_command(kind: SubmitKind) -> click.Command:
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
        for text in preflight.warnings:
            warn("PREFLIGHT", text)
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
        submit_for_real(preflight, yes)

    submit.help = f"Check a {label} config and its workspace, then submit the run (--dry-run prints the request instead)."
    return submit


eval_submit = make_submit_command("eval")
train_submit = make_submit_command("training")
