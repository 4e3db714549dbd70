"""What ``osmosis upgrade`` can do for this install: the newest release on the package index, how this copy was
installed, and the one command that upgrades it.

The version source is the index's JSON API, ``<index>/osmosis-ai/json`` (``info.version``), where ``<index>``
is ``OSMOSIS_PACKAGE_INDEX_URL`` or ``https://pypi.org/pypi``; this module is the only place that reads it.
An install made from a source checkout (``make build``, ``pip install -e``) is never replaced by the
index's release: pip would overwrite the checkout's build, so the plan says to update the checkout instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from osmosis_ai.errors import CLIError

__all__ = ["DEFAULT_INDEX", "INDEX_ENV", "UpgradePlan", "install_method", "plan_upgrade", "upgrade_command"]

PACKAGE = "osmosis-ai"
INDEX_ENV = "OSMOSIS_PACKAGE_INDEX_URL"
DEFAULT_INDEX = "https://pypi.org/pypi"


class UpgradeError(CLIError):
    """The index could not be asked, or the upgrade could not run; ``code`` is the CLI error code."""

    def __init__(self, message: str, *, code: str = "PLATFORM_ERROR", details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.details = details or {}


@dataclass(frozen=True)
class UpgradePlan:
    """Where this install stands.

    Attributes:
        method: ``source`` (a checkout's build), ``uv_tool``, ``pipx`` or ``pip``.
        location: The checkout (``source``) or the environment's prefix.
        command: What upgrades it; ``None`` when it is up to date or built from source.
    """

    installed: str
    latest: str
    index: str
    method: str
    location: str
    command: list[str] | None

    @property
    def up_to_date(self) -> bool:
        from packaging.version import Version

        return Version(self.installed) >= Version(self.latest)

    def as_dict(self) -> dict[str, Any]:
        return {
            "installed_version": self.installed,
            "latest_version": self.latest,
            "index": self.index,
            "method": self.method,
            "location": self.location,
            "command": self.command,
        }


def latest_version(index: str | None = None, timeout: float = 10.0) -> tuple[str, str]:
    """``(version, index)``: the newest release the index lists for ``osmosis-ai``.

    Raises:
        UpgradeError: The index cannot be reached or its answer has no usable version.
    """
    import httpx
    from packaging.version import InvalidVersion, Version

    base = (index or os.environ.get(INDEX_ENV) or DEFAULT_INDEX).rstrip("/")
    url = f"{base}/{PACKAGE}/json"
    try:
        from osmosis_ai.llm.httpx_clients import http_client

        with http_client(timeout=timeout, follow_redirects=True) as client:
            response = client.get(url, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        raise UpgradeError(
            f"Could not reach the package index at {base} ({type(exc).__name__}); check the network or set {INDEX_ENV}."
        ) from None
    if response.status_code != 200:
        raise UpgradeError(f"The package index at {base} answered HTTP {response.status_code} for {PACKAGE}.")
    try:
        version = str(json.loads(response.content)["info"]["version"])
        Version(version)
    except (ValueError, KeyError, TypeError, InvalidVersion):
        raise UpgradeError(f"The package index at {base} sent no valid version for {PACKAGE}.") from None
    return version, base


def install_method(direct_url: dict[str, Any] | None, prefix: str) -> tuple[str, str]:
    """``(method, location)`` of an install from its ``direct_url.json`` (PEP 610) and ``sys.prefix``.

    Example:
        >>> install_method({"url": "file:///src/osmosis", "dir_info": {"editable": True}}, "/venv")
        ('source', '/src/osmosis')
        >>> install_method(None, "/home/a/.local/share/uv/tools/osmosis-ai")[0]
        'uv_tool'
    """
    url = (direct_url or {}).get("url", "")
    if url.startswith("file://") and "dir_info" in (direct_url or {}):
        return "source", unquote(urlsplit(url).path)
    normalized = prefix.replace("\\", "/")
    if "/uv/tools/" in normalized:
        return "uv_tool", prefix
    if "/pipx/venvs/" in normalized:
        return "pipx", prefix
    return "pip", prefix


def upgrade_command(method: str, version: str, installer: str = "pip") -> list[str] | None:
    """The command that installs ``osmosis-ai==version`` the way this copy was installed (``None`` for a
    source build). ``installer`` is the ``INSTALLER`` record: ``uv`` installs get ``uv pip`` when uv is here."""
    pinned = f"{PACKAGE}=={version}"
    if method == "source":
        return None
    if method == "uv_tool":
        return ["uv", "tool", "install", "--force", pinned]
    if method == "pipx":
        return ["pipx", "install", "--force", pinned]
    if installer.strip() == "uv" and shutil.which("uv"):
        return ["uv", "pip", "install", "--python", sys.executable, "--upgrade", pinned]
    return [sys.executable, "-m", "pip", "install", "--upgrade", pinned]


def plan_upgrade(index: str | None = None) -> UpgradePlan:
    """Asks the index for the newest release and decides how this install would be upgraded.

    Example:
        >>> plan = plan_upgrade()  # doctest: +SKIP
        >>> plan.up_to_date, plan.method  # doctest: +SKIP
        (True, 'pip')
    """
    import importlib.metadata

    from osmosis_ai._version import __version__

    latest, base = latest_version(index)
    try:
        dist = importlib.metadata.distribution(PACKAGE)
        raw = dist.read_text("direct_url.json")
        installer = dist.read_text("INSTALLER") or "pip"
    except importlib.metadata.PackageNotFoundError:
        raw, installer = None, "pip"
    method, location = install_method(json.loads(raw) if raw else None, sys.prefix)
    return UpgradePlan(
        __version__, latest, base, method, location, upgrade_command(method, latest, installer)
    )


def run_upgrade(
    plan: UpgradePlan, *, capture: bool, timeout: float = 600.0
) -> subprocess.CompletedProcess[str]:
    """Runs the plan's command (its output shown unless ``capture``).

    Raises:
        UpgradeError: No command (a source build), the installer is missing, it failed or timed out.
    """
    if plan.command is None:
        raise UpgradeError(
            f"This osmosis-ai {plan.installed} is built from the source checkout at {plan.location}; the index's "
            f"release would replace that build. Update the checkout instead: git -C {plan.location} pull && "
            f"make -C {plan.location} build",
            code="VALIDATION",
            details=plan.as_dict(),
        )
    if shutil.which(plan.command[0]) is None and plan.command[0] != sys.executable:
        raise UpgradeError(
            f"{plan.command[0]} is not on PATH; upgrade by hand: {' '.join(plan.command)}",
            details=plan.as_dict(),
        )
    try:
        done = subprocess.run(plan.command, capture_output=capture, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise UpgradeError(
            f"The upgrade did not finish in {timeout:.0f} s: {' '.join(plan.command)}", details=plan.as_dict()
        ) from None
    if done.returncode != 0:
        details = {**plan.as_dict(), "stderr": (done.stderr or "")[-2000:]}
        raise UpgradeError(
            f"The upgrade failed (exit {done.returncode}): {' '.join(plan.command)}", details=details
        )
    return done
