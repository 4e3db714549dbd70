"""`osmosis secret list|set|delete`: provider keys and other secrets stored on the platform.

A value is read from a hidden prompt or from an environment variable (``--env``), sent once, and never
printed, logged or echoed in an error.
"""

from __future__ import annotations

import os

import click

from osmosis_ai.cli.bounds import check_limit_all
from osmosis_ai.cli.output import confirm, emit_list, emit_operation, help_without_subcommand, is_interactive
from osmosis_ai.cli.platform_context import platform_session

_SCOPES = click.Choice(["personal", "workspace"])


@click.group("secret", invoke_without_command=True)
@click.pass_context
def secret_group(ctx: click.Context) -> None:
    """Manage platform secrets (provider API keys and the like) for runs of this workspace."""
    help_without_subcommand(ctx)


@secret_group.command("list")
@click.option(
    "--scope", type=click.Choice(["all", "workspace", "personal"]), default="all", show_default=True
)
@click.option("--limit", type=click.IntRange(1, 50), default=50, show_default=True, help="Secrets per page.")
@click.option("--all", "every", is_flag=True, help="Every secret (all pages).")
def list_cmd(scope: str, limit: int, every: bool) -> None:
    """List secret names and scopes (values are never shown)."""
    from osmosis_ai.platform.secrets import list_secrets

    check_limit_all(limit, every)
    with platform_session() as session:
        page = list_secrets(session.client, scope, limit=limit, every=every)
    emit_list(
        page.items,
        [("name", "NAME"), ("scope", "SCOPE"), ("updated_at", "UPDATED"), ("updater_name", "BY")],
        total_count=page.total_count,
        has_more=page.has_more,
        next_offset=page.next_offset,
        extra={**session.context(), "platform_url": page.extra.get("platform_url")},
        empty="No secrets yet. Add one with `osmosis secret set NAME`.",
        more_hint="Use --all to see every secret.",
    )


@secret_group.command("set")
@click.argument("name")
@click.option("--scope", type=_SCOPES, default="personal", show_default=True, help="Who can use it.")
@click.option(
    "--env", "env_var", default=None, metavar="VAR", help="Read the value from this environment variable."
)
def set_cmd(name: str, scope: str, env_var: str | None) -> None:
    """Create or replace a secret; the value comes from a hidden prompt or --env VAR."""
    from osmosis_ai.platform.errors import InteractiveRequiredError, PlatformError
    from osmosis_ai.platform.secrets import check_name, set_secret

    check_name(name)
    # Where the value comes from is settled before any network call.
    if env_var is not None:
        if not env_var.strip():
            raise PlatformError("--env needs a variable name.", code="VALIDATION")
        value = os.environ.get(env_var.strip(), "")
        if not value:
            raise PlatformError(f"Environment variable {env_var} is not set or empty.", code="VALIDATION")
    elif not is_interactive():
        raise InteractiveRequiredError(
            f"No terminal to prompt for the value of {name}: pass --env VAR to read it from the environment.",
            details={"flags": ["--env"]},
        )
    else:
        value = click.prompt(f"Value for {name}", hide_input=True, default="", show_default=False)
        if not value:
            raise PlatformError("No value entered; nothing was saved.", code="VALIDATION")
    with platform_session() as session:
        saved = set_secret(session.client, name, value, scope)
    emit_operation(
        "secret.set",
        message=f'Secret "{name}" saved in {scope} scope.',
        resource={**saved, **session.context()},
        next_steps=[("osmosis secret list", {"action": "secret_list"})],
    )


@secret_group.command("delete")
@click.argument("name")
@click.option("--scope", type=_SCOPES, default="personal", show_default=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def delete_cmd(name: str, scope: str, yes: bool) -> None:
    """Delete a secret."""
    from osmosis_ai.platform.secrets import check_name, delete_secret

    check_name(name)
    with platform_session() as session:
        if not confirm(f"Delete {scope} secret {name}?", yes=yes, summary={"name": name, "scope": scope}):
            emit_operation("secret.delete", status_="cancelled", message="Cancelled.")
            return
        delete_secret(session.client, name, scope)
    emit_operation(
        "secret.delete",
        message=f'Secret "{name}" deleted from {scope} scope.',
        resource={"name": name, "scope": scope, **session.context()},
    )
