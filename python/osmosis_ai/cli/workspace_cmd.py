"""`osmosis workspace list|current|switch` (the 0.2 commands).

In 0.2 a login belonged to one organisation and ``switch`` changed the active one. Now a login covers all
of the user's workspaces and the repository selects one (its ``origin``, sent as ``X-Osmosis-Git``), so
``current`` reports the workspace of the repository you are in, and ``switch`` tells you which repository
to work in for another one.
"""

from __future__ import annotations

from typing import Any

import click

from osmosis_ai.cli.output import emit_detail, emit_list, emit_operation, help_without_subcommand
from osmosis_ai.cli.platform_context import platform_session


@click.group("workspace", invoke_without_command=True)
@click.pass_context
def workspace_group(ctx: click.Context) -> None:
    """Show this repository's platform workspace, or list your workspaces."""
    help_without_subcommand(ctx)


def _workspaces(session: Any) -> list[dict[str, Any]]:
    from osmosis_ai.platform.quickstart import list_workspaces

    return list_workspaces(session.client)


@workspace_group.command("list")
def list_cmd() -> None:
    """List the workspaces your login can use and the repository connected to each."""
    with platform_session(scoped=False) as session:
        items = _workspaces(session)
    emit_list(
        items,
        [("name", "NAME"), ("role", "ROLE"), ("repository", "REPOSITORY")],
        empty="No workspaces: create one on the platform.",
    )


@workspace_group.command("current")
def current_cmd() -> None:
    """Show the workspace of the repository you are in."""
    from osmosis_ai.platform.auth import verify_token

    with platform_session(scoped=True) as session:
        assert session.workspace is not None
        identity = verify_token(session.client, scoped=True)
    workspace = identity.workspace
    data = {
        "workspace": workspace,
        "email": identity.user["email"],
        "expires_at": identity.expires_at,
        **session.context(),
    }
    emit_detail(
        data,
        [
            (
                "Workspace",
                f"{workspace['name']} ({workspace.get('role', 'member')})" if workspace else "not connected",
            ),
            ("Repository", session.workspace.git.identity),
            ("User", identity.user["email"]),
            ("Expires", identity.expires_at[:10]),
        ],
    )


@workspace_group.command("switch")
@click.argument("name")
def switch_cmd(name: str) -> None:
    """Tell which repository selects workspace NAME (workspaces follow the repository you work in)."""
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.workspace import resolve_workspace

    with platform_session(scoped=False) as session:
        items = _workspaces(session)
    match = next((w for w in items if name in (w["name"], w["id"])), None)
    if match is None:
        known = ", ".join(str(w["name"]) for w in items) or "none"
        raise PlatformError(f"No workspace named {name!r}. Your workspaces: {known}.", code="NOT_FOUND")
    try:
        here = resolve_workspace(check_layout=False).git.identity
    except PlatformError:
        here = None
    repo = match["repository"]
    if repo and here == repo:
        message = f"Already in workspace {match['name']}: this repository ({repo}) is connected to it."
    elif repo:
        message = (
            f"Workspace {match['name']} is selected by its repository {repo}: run osmosis inside a clone of it "
            f"(git clone git@github.com:{repo}.git)."
        )
    else:
        message = f"Workspace {match['name']} has no connected repository yet: connect one on the platform."
    emit_operation(
        "workspace.switch", status_="noop", message=message, resource={**match, "current_repository": here}
    )
