"""The context every platform command starts from: settings, workspace, login, and an open client.

Order matters and follows the established CLI: the environment file and platform URL first, then the
workspace (so "not in a workspace" wins over "not logged in"), then the login, then the client.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from osmosis_ai.cli.output import STATE, warn

if TYPE_CHECKING:
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.credentials import Credentials
    from osmosis_ai.platform.settings import PlatformSettings
    from osmosis_ai.platform.workspace import WorkspaceContext


@dataclass
class Session:
    """What a platform command works with."""

    settings: PlatformSettings
    workspace: WorkspaceContext | None
    credentials: Credentials | None
    client: PlatformClient

    def context(self) -> dict[str, object]:
        """The ``git`` / ``workspace_directory`` keys for JSON results (empty outside a workspace)."""
        return self.workspace.as_dict() if self.workspace else {}


def platform_settings() -> PlatformSettings:
    """Loads the env file and resolves the platform URL (warnings are shown here)."""
    from osmosis_ai.platform.errors import InsecurePlatformURLError
    from osmosis_ai.platform.settings import load_env_file, resolve_settings

    load_env_file(Path(STATE.env_file) if STATE.env_file else None, os.environ)
    try:
        settings = resolve_settings(STATE.platform)
    except InsecurePlatformURLError as exc:  # warned, then refused, as the established CLI does
        for code, message in exc.warnings:
            warn(code, message)
        raise
    for code, message in settings.warnings:
        warn(code, message)
    return settings


def current_login(settings: PlatformSettings) -> Credentials:
    """The login to use (``OSMOSIS_TOKEN``, else the stored one); raises ``AuthRequiredError`` if none."""
    from osmosis_ai.platform.credentials import resolve_login

    return resolve_login(settings.url)


@contextmanager
def platform_session(*, scoped: bool = True, login: bool = True) -> Iterator[Session]:
    """Opens the client for one command; shows the platform's version notices when it closes.

    Args:
        scoped: Needs the workspace (``X-Osmosis-Git``).
        login: Needs a login.
    """
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.workspace import resolve_workspace

    settings = platform_settings()
    workspace = resolve_workspace() if scoped else None
    creds = current_login(settings) if login else None
    client = PlatformClient(
        settings.url,
        token=creds.token if creds else None,
        git_identity=workspace.git.identity if workspace else None,
        env_token=bool(creds and creds.source == "environment"),
    )
    try:
        yield Session(settings, workspace, creds, client)
    finally:
        client.close()
        for code, message in client.warnings:
            warn(code, message)
