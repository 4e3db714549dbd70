"""Platform secrets (provider keys and the like): list, set, delete, per-run values, redaction.

A secret's value goes to the platform once, in a request body, and nowhere else: it is never returned
by the platform, never printed, and scrubbed from any error the platform sends back (:func:`redact`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.platform.client import PlatformClient
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.pages import Page, fetch_all, fetch_page

__all__ = [
    "REDACTED",
    "SubmitSecrets",
    "check_name",
    "delete_secret",
    "list_secrets",
    "redact",
    "resolve_submit_secrets",
    "set_secret",
]

PATH = "/api/cli/environment-secrets"
REDACTED = "[REDACTED]"
_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
# The CLI says "personal"; the wire says "user".
WIRE_SCOPE = {"personal": "user", "workspace": "workspace", "all": "all"}
SHOWN_SCOPE = {"user": "personal", "workspace": "workspace"}
_SECRET_KEYS = {"value", "secret", "secret_value"}


def check_name(name: str) -> str:
    """Validates a secret name (``^[A-Z][A-Z0-9_]*$``, at most 255 characters).

    Raises:
        PlatformError: ``VALIDATION``.

    Example:
        >>> check_name("OPENAI_API_KEY")
        'OPENAI_API_KEY'
    """
    if not _NAME.match(name or "") or len(name) > 255:
        raise PlatformError(
            f"Invalid secret name {name!r}: use upper-case letters, digits and _, starting with a letter "
            "(like OPENAI_API_KEY).",
            code="VALIDATION",
        )
    return name


def _item(secret: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "name", "scope", "created_at", "updated_at", "creator_name", "updater_name")
    item = {k: secret.get(k) for k in keys}
    item["scope"] = SHOWN_SCOPE.get(str(item["scope"]), item["scope"])
    return item


def list_secrets(client: PlatformClient, scope: str = "all", *, limit: int = 50, every: bool = False) -> Page:
    """Secret records (never values) in ``scope`` (``all``, ``workspace`` or ``personal``)."""
    params = {"scope": WIRE_SCOPE[scope]}
    page = (
        fetch_all(client, PATH, "environment_secrets", params=params)
        if every
        else (fetch_page(client, PATH, "environment_secrets", limit=limit, params=params))
    )
    page.items = [_item(s) for s in page.items]
    return page


def set_secret(client: PlatformClient, name: str, value: str, scope: str) -> dict[str, Any]:
    """Creates or replaces a secret; returns its record (no value).

    Raises:
        PlatformError: The platform refused; the value is scrubbed from the error.
    """
    check_name(name)
    try:
        saved = client.post(PATH, {"name": name, "value": value, "scope": WIRE_SCOPE[scope]}, idempotent=True)
    except PlatformError as exc:
        raise redact(exc, [value]) from None
    return _item(saved or {"name": name, "scope": WIRE_SCOPE[scope]})


def delete_secret(client: PlatformClient, name: str, scope: str) -> None:
    """Deletes the secret ``name`` in ``scope`` (``personal`` or ``workspace``).

    Raises:
        PlatformError: ``NOT_FOUND`` naming the other scope when the secret lives there instead.
    """
    check_name(name)
    try:
        names = {s["name"] for s in list_secrets(client, scope, every=True).items}
    except PlatformError:
        names = None  # the pre-check is a courtesy; the DELETE decides
    if names is not None and name not in names:
        other = "workspace" if scope == "personal" else "personal"
        try:
            elsewhere = name in {s["name"] for s in list_secrets(client, other, every=True).items}
        except PlatformError:
            elsewhere = False
        hint = f" It exists in the {other} scope: add --scope {other}." if elsewhere else ""
        raise PlatformError(
            f"No {scope} secret named {name}.{hint}", code="NOT_FOUND", details={"name": name}
        )
    client.delete(PATH, {"name": name, "scope": WIRE_SCOPE[scope]})


def _scrub(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {
            _scrub(k, secrets): REDACTED if str(k).lower() in _SECRET_KEYS else _scrub(v, secrets)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    return value


def redact(error: PlatformError, values: Iterable[str]) -> PlatformError:
    """A copy of ``error`` with every secret value (longest first) replaced by ``[REDACTED]``.

    Example:
        >>> redact(PlatformError("bad value sk-1"), ["sk-1"]).args[0]
        'bad value [REDACTED]'
    """
    secrets = sorted({v for v in values if v}, key=len, reverse=True)
    clean = copy.copy(error)
    clean.args = (_scrub(str(error), secrets),)
    clean.details = _scrub(error.details, secrets)
    return clean


@dataclass
class SubmitSecrets:
    """The secrets step of a submit: values sent with this run, and where each name's value comes from."""

    provided: dict[str, str] = field(repr=False, default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)


def resolve_submit_secrets(
    client: PlatformClient,
    required: list[str],
    file_values: Mapping[str, str],
    environ: Mapping[str, str],
    prompt: Callable[[str], str] | None = None,
) -> SubmitSecrets:
    """Finds a value for each required secret: the secrets file, then the environment, then the platform.

    Names stored on the platform need no local value. A name found nowhere is asked for when ``prompt`` is
    given (an interactive session), else it is an error listing every such name.

    Raises:
        PlatformError: ``INTERACTIVE_REQUIRED`` naming the secrets with no value anywhere.
    """
    result = SubmitSecrets()
    try:
        stored = {s["name"]: s["scope"] for s in list_secrets(client, "all", every=True).items}
    except PlatformError:
        stored = None  # unknown: send what we have and let the platform check the rest
    missing = []
    for name in required:
        if file_values.get(name):
            result.provided[name], result.sources[name] = file_values[name], "run (--secrets-file)"
        elif environ.get(name):
            result.provided[name], result.sources[name] = environ[name], "run (environment)"
        elif stored is None or name in stored:
            result.sources[name] = f"platform ({stored[name]})" if stored else "platform (not checked)"
        elif prompt is not None:
            value = prompt(name)
            if not value:
                raise PlatformError(f"No value entered for {name}.", code="VALIDATION")
            result.provided[name], result.sources[name] = value, "run (prompt)"
        else:
            missing.append(name)
    if missing:
        names = ", ".join(missing)
        raise PlatformError(
            f"No value found for: {names}. Export them, pass --secrets-file, or save them on the platform "
            f"with `osmosis secret set <NAME>`.",
            code="INTERACTIVE_REQUIRED",
            details={"missing": missing, "flags": ["--secrets-file"]},
        )
    return result
