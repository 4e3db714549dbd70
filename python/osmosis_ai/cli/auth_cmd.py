"""`osmosis auth login|logout|whoami` (and the 0.2 spellings `osmosis login|logout|whoami`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from osmosis_ai.cli.output import STATE, confirm, emit_detail, emit_operation, help_without_subcommand, warn
from osmosis_ai.cli.platform_context import current_login, platform_settings

if TYPE_CHECKING:
    from osmosis_ai.platform.auth import Identity, TokenGrant
    from osmosis_ai.platform.credentials import CredentialStore
    from osmosis_ai.platform.settings import PlatformSettings


@click.group("auth", invoke_without_command=True)
@click.pass_context
def auth_group(ctx: click.Context) -> None:
    """Log in to the Osmosis platform, log out, and show the logged-in account."""
    help_without_subcommand(ctx)


def _save_login(
    settings: PlatformSettings, token: str, identity: Identity | TokenGrant, token_store: str
) -> str:
    """Stores the login and revokes the one it replaces; returns the store used."""
    from osmosis_ai.platform.auth import revoke_token
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.credentials import CredentialStore
    from osmosis_ai.platform.errors import PlatformError

    store = CredentialStore()
    try:
        previous = store.load(settings.url)
    except PlatformError:
        previous = None  # unreadable or incomplete: it is replaced below either way
    used, warnings = store.save(
        settings.url,
        token,
        user=identity.user,
        expires_at=identity.expires_at,
        token_id=identity.token_id,
        token_store=token_store,
    )
    for code, message in warnings:
        warn(code, message)
    if previous and previous.token_id and previous.token_id != identity.token_id and not previous.expired:
        with PlatformClient(settings.url, token=previous.token) as old:
            if revoke_token(old, previous.token_id) is False:
                warn(
                    "TOKEN_REVOKE_FAILED", "The previous login's token could not be revoked on the platform."
                )
    return used


def _device_login(settings: PlatformSettings, open_browser: bool) -> tuple[str, TokenGrant]:
    from osmosis_ai.platform.auth import poll_device_token, start_device_login
    from osmosis_ai.platform.client import PlatformClient

    with PlatformClient(settings.url) as client:
        code = start_device_login(client)
        click.echo(f"To log in, open {code.url}")
        click.echo(f"and enter the code: {code.user_code}")
        if open_browser and sys.stdin.isatty():
            import webbrowser

            webbrowser.open(code.url)
        click.echo("Waiting for approval in the browser (Ctrl+C to cancel)...", err=True)
        grant = poll_device_token(client, code)
    return grant.token, grant


@auth_group.command("login")
@click.option("--token", default=None, help="Log in with an existing token (CI). Prefer OSMOSIS_TOKEN there.")
@click.option(
    "--token-store",
    type=click.Choice(["auto", "keyring", "file"]),
    envvar="OSMOSIS_TOKEN_STORE",
    default="auto",
    show_default=True,
    help="Where the token goes: the OS keyring, a 0600 file, or the keyring when there is one.",
)
@click.option("--no-browser", is_flag=True, help="Only print the login URL (do not open a browser).")
@click.option("-f", "--force", is_flag=True, help="Forget the stored login for this platform first.")
def login(token: str | None, token_store: str, no_browser: bool, force: bool) -> None:
    """Log in: a device code to approve in the browser, or --token."""
    from osmosis_ai.platform.auth import verify_token
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.credentials import environment_credentials
    from osmosis_ai.platform.errors import InteractiveRequiredError

    settings = platform_settings()
    identity: Identity | TokenGrant
    if force:
        from osmosis_ai.platform.credentials import CredentialStore

        CredentialStore().delete(settings.url)
    env_creds = environment_credentials(settings.url) if token is None else None
    if env_creds is not None:
        source, saved, store_used = "environment", False, None
        with PlatformClient(settings.url, token=env_creds.token, env_token=True) as client:
            identity = verify_token(client)
    elif token is not None:
        source = "token"
        with PlatformClient(settings.url, token=token) as client:
            identity = verify_token(client)
        store_used, saved = _save_login(settings, token, identity, token_store), True
    else:
        if STATE.mode != "rich":
            raise InteractiveRequiredError(
                "Device login needs the default output mode; in scripts use --token or OSMOSIS_TOKEN.",
                details={"flags": ["--token"]},
            )
        source = "device"
        token, identity = _device_login(settings, open_browser=not no_browser)
        store_used, saved = _save_login(settings, token, identity, token_store), True
    resource = {
        "email": identity.user["email"],
        "name": identity.user.get("name"),
        "expires_at": identity.expires_at,
        "platform_url": settings.url,
        "workspace": None,
        "source": source,
        "verified": True,
        "saved": saved,
        "token_store": store_used,
    }
    steps = [("osmosis auth whoami", {"action": "auth_whoami"})]
    if source == "environment":
        steps = [("unset OSMOSIS_TOKEN to use a stored login instead", {"action": "unset_env"})]
    emit_operation(
        "auth.login",
        message=f"Logged in to {settings.url} as {identity.user['email']}"
        + ("" if saved else " (OSMOSIS_TOKEN; nothing stored)"),
        resource=resource,
        lines=[("Expires", identity.expires_at[:10]), ("Token store", store_used)],
        next_steps=steps,
    )


def _revoke_stored(store: CredentialStore, url: str) -> bool:
    """Revokes the stored token of ``url`` on its platform (best effort); ``True`` when it was revoked."""
    from osmosis_ai.platform.auth import revoke_token
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.errors import PlatformError

    try:
        creds = store.load(url)
    except PlatformError:
        return False
    if not (creds and creds.token_id and not creds.expired):
        return False
    with PlatformClient(url, token=creds.token) as client:
        outcome = revoke_token(client, creds.token_id)
    if outcome is False:
        warn("TOKEN_REVOKE_FAILED", f"{url} did not revoke the token; it is deleted locally anyway.")
    return bool(outcome)


def _logout_everywhere(store: CredentialStore, yes: bool, env_token: bool) -> None:
    """`logout --all` (0.2.17): every stored login, on every platform, revoked where possible and deleted."""
    from osmosis_ai.platform.errors import PlatformError

    try:
        urls = sorted(store.read()["platforms"])
    except PlatformError:
        urls = []  # unreadable: nothing to revoke; the file is moved aside below
        store.move_aside()
    if not urls:
        message = "Not logged in." + (
            " OSMOSIS_TOKEN is set in the environment; unset it too." if env_token else ""
        )
        emit_operation("auth.logout", status_="noop", message=message, resource={"platforms": []})
        return
    listing = ", ".join(urls)
    if not confirm(
        f"Log out of {len(urls)} platform(s) ({listing})?", yes=yes, summary={"platforms": listing}
    ):
        emit_operation("auth.logout", status_="cancelled", message="Cancelled.")
        return
    done = []
    for url in urls:
        revoked = _revoke_stored(store, url)
        store.delete(url)
        done.append({"platform_url": url, "revoked": revoked})
    emit_operation(
        "auth.logout",
        message=f"Logged out of {len(done)} platform(s).",
        resource={"logged_in": False, "platforms": done, "env_token_set": env_token},
        lines=[(d["platform_url"], "revoked" if d["revoked"] else "deleted locally") for d in done],
    )


@auth_group.command("logout")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--all", "every", is_flag=True, help="Log out of every platform this machine has a login for.")
def logout(yes: bool, every: bool) -> None:
    """Log out: revoke the stored token on the platform and delete it locally."""
    from osmosis_ai.platform.credentials import CredentialStore
    from osmosis_ai.platform.errors import PlatformError

    env_token = bool(os.environ.get("OSMOSIS_TOKEN", "").strip())
    store = CredentialStore()
    if every:
        platform_settings()  # loads the env file, as every platform command does
        _logout_everywhere(store, yes, env_token)
        return
    settings = platform_settings()
    try:
        entry = store.entry(settings.url)
    except PlatformError:
        entry = {"unreadable": True}  # logout is the way out of a corrupt file: go on and move it aside
    if entry is None:
        message = f"Not logged in to {settings.url}." + (
            " OSMOSIS_TOKEN is set in the environment; unset it to stop using it." if env_token else ""
        )
        resource = {"logged_in": env_token, "env_token_set": env_token, "platform_url": settings.url}
        emit_operation("auth.logout", status_="noop", message=message, resource=resource)
        return
    if not confirm(f"Log out of {settings.url}?", yes=yes, summary={"platform": settings.url}):
        emit_operation("auth.logout", status_="cancelled", message="Cancelled.")
        return
    revoked = False if entry.get("unreadable") else _revoke_stored(store, settings.url)
    if entry.get("unreadable"):
        store.move_aside()
    else:
        store.delete(settings.url)
    emit_operation(
        "auth.logout",
        message=f"Logged out of {settings.url}." + (" The token was revoked." if revoked else ""),
        resource={
            "logged_in": False,
            "revoked": revoked,
            "env_token_set": env_token,
            "platform_url": settings.url,
        },
    )


@auth_group.command("whoami")
def whoami() -> None:
    """Show the logged-in account and the workspace of the current repository."""
    from osmosis_ai.platform.auth import verify_token
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.workspace import resolve_workspace

    settings = platform_settings()
    creds = current_login(settings)
    try:
        identity = resolve_workspace(check_layout=False).git.identity
    except PlatformError:
        identity = None
    with PlatformClient(
        settings.url, token=creds.token, git_identity=identity, env_token=creds.source == "environment"
    ) as client:
        try:
            verified = verify_token(client, scoped=identity is not None)
        except PlatformError as exc:
            if exc.code == "AUTH_REQUIRED" or identity is None:
                raise
            verified = verify_token(client, scoped=False)  # the repository lookup failed, not the login
    account = {
        "email": verified.user["email"],
        "name": verified.user.get("name"),
        "expires_at": verified.expires_at,
        "platform_url": settings.url,
        "source": "environment" if creds.source == "environment" else "credentials",
        "token_id": verified.token_id,
    }
    workspace = verified.workspace
    data = {
        **account,
        "account": account,
        "effective_source": account["source"],
        "persistent_login": creds.source != "environment",
        "workspace": workspace,
        "repository": identity,
    }
    ws_text = f"{workspace['name']} ({workspace.get('role', 'member')})" if workspace else None
    emit_detail(
        data,
        [
            ("Email", account["email"]),
            ("Name", account["name"]),
            ("Platform", settings.url),
            ("Expires", None if creds.source == "environment" else account["expires_at"][:10]),
            ("Source", "OSMOSIS_TOKEN" if creds.source == "environment" else f"stored ({creds.token_store})"),
            ("Repository", identity),
            ("Workspace", ws_text or ("not connected" if identity else None)),
        ],
    )


# The 0.2 spellings (`osmosis login`, `osmosis logout`, `osmosis whoami`) run the same commands.
login_alias = login
logout_alias = logout
whoami_alias = whoami
