"""`osmosis dev server up|down|list|logs` (hidden, as in the established CLI): a remote rollout server for
the rollout folder you are in, running its committed ``main.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli.output import (
    STATE,
    confirm,
    emit_list,
    emit_operation,
    help_without_subcommand,
    status,
    warn,
)
from osmosis_ai.cli.platform_context import platform_session


@click.group("dev", hidden=True, invoke_without_command=True)
@click.pass_context
def dev_group(ctx: click.Context) -> None:
    """Development helpers on the platform."""
    help_without_subcommand(ctx)


@dev_group.group("server", invoke_without_command=True)
@click.pass_context
def server_group(ctx: click.Context) -> None:
    """Run a rollout folder's main.py on the platform for a while, follow its logs, tear it down."""
    help_without_subcommand(ctx)


def _commit(directory: Path, yes: bool) -> str:
    """HEAD of the workspace; a dirty tree needs confirmation (the server runs the commit, not the edits)."""
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.workspace import git_state, source_warnings

    state = git_state(directory)
    if not state.get("git_head"):
        raise PlatformError(
            f"{directory} has no commit yet: commit and push the rollout first.", code="VALIDATION"
        )
    head: str = state["git_head"]
    warnings = source_warnings(directory, pinned=False)
    if state.get("git_dirty"):
        warnings = warnings[1:]  # the uncommitted changes are asked about below
    for text in warnings:
        warn("SOURCE_NOT_PUSHED", text)
    if state.get("git_dirty"):
        prompt = f"The server runs the committed HEAD ({head[:7]}), not your uncommitted changes. Continue?"
        if not confirm(prompt, yes=yes, summary={"commit": head}):
            raise click.Abort()
    return head


@server_group.command("up")
@click.option("--no-ttl", is_flag=True, help="Keep the server until `dev server down` (no auto-teardown).")
@click.option(
    "--ttl-hours",
    type=click.IntRange(min=1),
    default=24,
    show_default=True,
    help="Hours before auto-teardown.",
)
@click.option("-y", "--yes", is_flag=True, help="Do not ask about uncommitted changes.")
def up_cmd(no_ttl: bool, ttl_hours: int, yes: bool) -> None:
    """Start a remote rollout server for this rollout folder (it must hold main.py, committed and pushed)."""
    from osmosis_ai.platform.dev_servers import provision
    from osmosis_ai.platform.errors import PlatformError

    cwd = Path.cwd()
    if not (cwd / "main.py").is_file():
        raise PlatformError(
            f"{cwd} has no main.py: run this from a rollout folder (rollouts/<name>/).", code="VALIDATION"
        )
    with platform_session() as session:
        assert session.workspace is not None
        head = _commit(session.workspace.directory, yes)
        relative = cwd.resolve().relative_to(session.workspace.directory.resolve()).as_posix()
        status(f"Provisioning a rollout server for {relative} at {head[:7]}...")
        created = provision(
            session.client,
            rollout_name=cwd.name,
            commit_sha=head,
            repository_path=relative,
            ttl_hours=None if no_ttl else ttl_hours,
        )
    key = created.get("api_key")
    emit_operation(
        "dev.server.up",
        message=f"Rollout server provisioning at {created['url']}; it may take a few minutes to become ready "
        "(see `osmosis dev server list`).",
        resource=created,
        lines=[("id", created.get("id")), ("api_key", key if isinstance(key, str) and key else None)],
        next_steps=[
            (
                f"osmosis dev server logs {created.get('id')}",
                {"action": "dev_server_logs", "id": created.get("id")},
            )
        ],
    )


@server_group.command("down")
@click.argument("server_id")
def down_cmd(server_id: str) -> None:
    """Tear down a remote rollout server."""
    from osmosis_ai.platform.dev_servers import teardown

    with platform_session() as session:
        answer = teardown(session.client, server_id)
    emit_operation(
        "dev.server.down",
        message=f"Stopping rollout server {server_id}.",
        resource=answer or {"id": server_id},
    )


@server_group.command("list")
@click.option(
    "--limit", type=click.IntRange(1, 50), default=50, show_default=True, help="Servers per page (1-50)."
)
@click.option("--all", "every", is_flag=True, help="Every server (all pages).")
def list_cmd(limit: int, every: bool) -> None:
    """List the workspace's remote rollout servers."""
    from osmosis_ai.cli.bounds import check_limit_all
    from osmosis_ai.platform.dev_servers import list_servers

    check_limit_all(limit, every)
    with platform_session() as session:
        page = list_servers(session.client, limit=limit, every=every)
    emit_list(
        page.items,
        [("id", "ID"), ("name", "ROLLOUT"), ("url", "URL"), ("expires_at", "EXPIRES"), ("status", "STATUS")],
        total_count=page.total_count,
        has_more=page.has_more,
        next_offset=page.next_offset,
        extra=session.context(),
        empty="No rollout servers. Start one from a rollout folder with `osmosis dev server up`.",
        more_hint="Use --all to see every server.",
    )


def _print_entry(entry: dict[str, Any]) -> None:
    timestamp, message = entry.get("timestamp"), entry.get("message")
    if STATE.mode == "json":
        click.echo(json.dumps({"timestamp": timestamp, "message": message}, ensure_ascii=False))
    elif STATE.mode == "plain":
        click.echo(f"{timestamp}\t{message}")
    else:
        click.echo(f"{timestamp}  {message}")


@server_group.command("logs")
@click.argument("server_id")
@click.option(
    "-f",
    "--follow/--no-follow",
    default=None,
    help="Stream new lines as they come (default in the default output mode).",
)
@click.option(
    "-n",
    "--tail",
    type=click.IntRange(1, 200),
    default=100,
    show_default=True,
    help="Recent lines to show first.",
)
def logs_cmd(server_id: str, follow: bool | None, tail: int) -> None:
    """Show a remote rollout server's log (--json: one {timestamp, message} object per line)."""
    from osmosis_ai.platform.dev_servers import server_logs, stream_logs

    with platform_session() as session:
        if not (follow if follow is not None else STATE.mode == "rich"):
            for entry in server_logs(session.client, server_id, tail=tail).items:
                _print_entry(entry)
            return
        try:
            for entry in stream_logs(session.client, server_id, tail=tail):
                _print_entry(entry)
        except KeyboardInterrupt:
            status(f"Detached from {server_id}.")
            raise
