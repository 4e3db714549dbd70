"""`osmosis quickstart [-w WORKSPACE]`: an interactive setup of this machine for a platform workspace.

Log in (device code) if needed, pick the workspace, wait for an admin to connect its GitHub repository,
clone it (or reuse the clone you are in, or the one made last time), check billing, then ask what you want
to do and print a prompt for your coding agent. Every step checks live state, so Ctrl+C is safe and
running it again resumes.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import click

from osmosis_ai.cli.output import emit_operation, is_interactive, status, warn
from osmosis_ai.cli.platform_context import platform_settings

if TYPE_CHECKING:
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.credentials import Credentials
    from osmosis_ai.platform.quickstart import QuickstartStatus
    from osmosis_ai.platform.settings import PlatformSettings

MANUAL_SETUP = "https://docs.osmosis.ai/platform/onboarding#manual-setup"


def _check(label: str, detail: str) -> None:
    click.echo(f"* {label} {'.' * max(20 - len(label), 1)}  {detail}")


def _choose(question: str, options: list[tuple[str, str]]) -> str:
    """A numbered menu; returns the chosen option's value."""
    click.echo(question)
    for number, (_, label) in enumerate(options, start=1):
        click.echo(f"  {number}. {label}")
    picked = click.prompt("Choose", type=click.IntRange(1, len(options)))
    return options[picked - 1][0]


def _login(settings: PlatformSettings) -> Credentials:
    """The login to use: the stored (or OSMOSIS_TOKEN) one, else a device-code login saved now."""
    from osmosis_ai.cli.auth_cmd import _device_login, _save_login
    from osmosis_ai.platform.credentials import resolve_login
    from osmosis_ai.platform.errors import AuthRequiredError

    try:
        creds = resolve_login(settings.url)
        _check("CLI auth", f"ok ({creds.user.get('email') or 'OSMOSIS_TOKEN'})")
        return creds
    except AuthRequiredError:
        _check("CLI auth", "not logged in")
    token, identity = _device_login(settings, open_browser=True)
    _save_login(settings, token, identity, "auto")
    click.echo(f"  -> logged in as {identity.user['email']}")
    return resolve_login(settings.url)


def _clone_identity(path: Path) -> str | None:
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.workspace import git_toplevel, origin_identity

    top = git_toplevel(path) if path.is_dir() else None
    try:
        identity = origin_identity(top) if top is not None and top.resolve() == path.resolve() else None
    except PlatformError:
        return None
    return identity.identity if identity else None


def _pick_workspace(
    workspaces: list[dict[str, Any]], requested: str | None
) -> tuple[dict[str, Any], Path | None]:
    """The workspace to set up, and the clone you are standing in when it is that workspace's."""
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.workspace import git_toplevel

    here = git_toplevel(Path.cwd())
    identity = _clone_identity(here) if here is not None else None
    detected = next((w for w in workspaces if identity and (w["repository"] or "").lower() == identity), None)
    if requested is not None:
        chosen = next((w for w in workspaces if (w["name"] or "").lower() == requested.strip().lower()), None)
        if chosen is None:
            names = ", ".join(sorted(str(w["name"]) for w in workspaces))
            raise PlatformError(f"No workspace named {requested!r}. Yours: {names}.", code="NOT_FOUND")
    elif detected is not None or len(workspaces) == 1:
        chosen = detected or workspaces[0]
    else:
        _check("Workspace", "not in a workspace's clone")
        wanted = _choose("Which workspace?", [(str(w["id"]), str(w["name"])) for w in workspaces])
        chosen = next(w for w in workspaces if str(w["id"]) == wanted)
    _check("Workspace", str(chosen["name"]))
    return chosen, here if detected is not None and detected is chosen else None


def _clone(full_name: str) -> Path:
    """Asks where to clone the repository (a clone already there is reused) and clones it."""
    from osmosis_ai.platform.errors import PlatformError

    while True:
        entered = click.prompt(
            f"Where should {full_name} be cloned? (it becomes your workspace directory)",
            default=f"./{full_name.split('/')[-1]}",
        )
        target = (Path.cwd() / Path(entered.strip()).expanduser()).resolve()
        if target.exists() and _clone_identity(target) == full_name.lower():
            return target
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            warn("QUICKSTART", f"{target} exists and is not a clone of {full_name}; choose another place.")
            continue
        break
    transport = _choose("Clone over HTTPS or SSH?", [("https", "HTTPS"), ("ssh", "SSH")])
    url = f"git@github.com:{full_name}.git" if transport == "ssh" else f"https://github.com/{full_name}.git"
    if shutil.which("git") is None:
        raise PlatformError(
            "git is needed to clone the workspace repository: install it, then run quickstart again.",
            code="NOT_FOUND",
        )
    status(f"Cloning {url} into {target}...")
    done = subprocess.run(
        ["git", "clone", "-q", url, str(target)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        last = (done.stderr or "").strip().splitlines()[-1:] or [f"git exited with {done.returncode}"]
        raise PlatformError(
            f"Could not clone {url}: {last[0]}. Check your GitHub access, then run quickstart again."
        )
    # The workspace is found through origin's GitHub URL; a git `insteadOf` mirror would have put its own
    # URL there (fetches still go through the mirror).
    subprocess.run(
        ["git", "-C", str(target), "remote", "set-url", "origin", url], check=False, capture_output=True
    )
    return target


def _repository(
    client: PlatformClient, settings: PlatformSettings, workspace: dict[str, Any], here: Path | None
) -> tuple[QuickstartStatus, Path]:
    """The connected repository (waiting for an admin to connect one) and its local clone."""
    from osmosis_ai.platform.quickstart import (
        forget_clone,
        quickstart_status,
        recall_clone,
        remember_clone,
        wait_for_repository,
    )

    state = quickstart_status(client, workspace["id"])
    if state.repo_connected and state.repo_full_name:
        _check("Workspace repo", state.repo_full_name)
    else:
        _check("Workspace repo", "none connected yet")
        click.echo(
            f"  A workspace admin needs to connect GitHub: {settings.url}/{quote(str(workspace['name']), safe='')}/integrations/git"
        )
        status("Waiting for the repository (Ctrl+C to stop; run `osmosis quickstart` again to resume)...")
        state = wait_for_repository(client, workspace["id"])
        click.echo(f"  -> connected: {state.repo_full_name}")
    full_name = str(state.repo_full_name)
    clone = here or recall_clone(settings.url, workspace["id"])
    if clone is not None and _clone_identity(clone) != full_name.lower():
        forget_clone(settings.url, workspace["id"])
        clone = None
    clone = clone or _clone(full_name)
    click.echo(f"  -> workspace directory: {clone}")
    remember_clone(settings.url, workspace["id"], clone)
    return state, clone


def _billing(
    client: PlatformClient, settings: PlatformSettings, workspace: dict[str, Any], state: QuickstartStatus
) -> QuickstartStatus:
    from osmosis_ai.platform.quickstart import quickstart_status

    if state.billing_ready:
        _check("Billing", "ok")
        return state
    _check("Billing", "no payment method on file")
    click.echo(
        f"  ! Training, evaluations, benchmarks and deployments need billing: {settings.url}/{quote(str(workspace['name']), safe='')}/billing"
    )
    click.prompt("Press Enter to continue", default="", show_default=False)
    state = quickstart_status(client, workspace["id"])
    _check("Billing", "ok" if state.billing_ready else "continuing without it")
    return state


def _handoff(prompt: str | None, clone: Path) -> None:
    click.echo("\n" + "-" * 60)
    if prompt is None:
        click.echo(f"  Setup complete. Your workspace directory is {clone}.")
    else:
        click.echo(
            f"  Setup complete. Open your coding agent (Claude Code, Cursor, ...) in {clone} and paste:\n"
        )
        click.echo(f"  {prompt}\n")
    if clone != Path.cwd().resolve():
        click.echo(f"  Next: cd {shlex.quote(str(clone))}")
    click.echo("-" * 60)


@click.command("quickstart")
@click.option(
    "-w",
    "--workspace",
    "workspace_name",
    default=None,
    metavar="NAME",
    help="The workspace to set up (else the clone you are in, or a choice).",
)
def quickstart_command(workspace_name: str | None) -> None:
    """Set this machine up for a platform workspace, then get a prompt for your coding agent.

    Interactive: it needs a terminal and the default output mode. Ctrl+C is safe; running it again resumes.
    """
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.errors import InteractiveRequiredError, PlatformError
    from osmosis_ai.platform.quickstart import INTENTS, agent_prompt, complete_quickstart, list_workspaces

    if not is_interactive():
        raise InteractiveRequiredError(
            f"osmosis quickstart asks questions, so it needs a terminal and the default output mode (no --json or --plain); set the workspace up by hand instead: {MANUAL_SETUP}",
            details={"docs": MANUAL_SETUP},
        )
    settings = platform_settings()
    creds = _login(settings)
    with PlatformClient(settings.url, token=creds.token, env_token=creds.source == "environment") as client:
        workspaces = list_workspaces(client)
        if not workspaces:
            raise PlatformError(
                f"This login has no workspaces: create one at {settings.url}, then run quickstart again.",
                code="NOT_FOUND",
            )
        workspace, here = _pick_workspace(workspaces, workspace_name)
        state, clone = _repository(client, settings, workspace, here)
        state = _billing(client, settings, workspace, state)
        intent = _choose("\nWhat do you want to do?", list(INTENTS))
        task = (
            click.prompt("Describe your task in a few words").strip() if intent in ("train", "eval") else None
        )
        prompt = agent_prompt(intent, task)
        try:
            complete_quickstart(client, workspace["id"], intent)
            recorded = True
        except PlatformError as exc:
            warn(
                "QUICKSTART_NOT_RECORDED",
                f"Setup is done, but the platform was not told ({exc}); run quickstart again to record it.",
            )
            recorded = False
    _handoff(prompt, clone)
    emit_operation(
        "quickstart",
        message=f"Workspace {workspace['name']} is set up in {clone}.",
        resource={
            "workspace": {"id": workspace["id"], "name": workspace["name"]},
            "repo": {"connected": state.repo_connected, "full_name": state.repo_full_name},
            "workspace_directory": str(clone),
            "billing_ready": state.billing_ready,
            "previously_completed": state.completed,
            "intent": intent,
            "task": task,
            "agent_prompt": prompt,
            "completion_recorded": recorded,
        },
    )
