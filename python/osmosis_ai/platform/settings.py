"""Where the platform is: the base URL (flag, environment, ``.env``) and its normalisation.

The base URL decides where the bearer token goes, so it is checked strictly: a non-HTTPS URL is refused
unless its host is a loopback address (a local test server), or the user opts in explicitly with
``OSMOSIS_ALLOW_INSECURE_PLATFORM_URL=1``.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from osmosis_ai.llm.network import is_loopback_host
from osmosis_ai.platform.errors import InsecurePlatformURLError, PlatformError

__all__ = [
    "DEFAULT_PLATFORM_URL",
    "PlatformSettings",
    "is_loopback_host",
    "load_env_file",
    "normalize_platform_url",
    "resolve_settings",
]

DEFAULT_PLATFORM_URL = "https://platform.osmosis.ai"
# The variables that select an auth profile; a .env file may not silently swap one of them.
PROFILE_VARS = ("OSMOSIS_PLATFORM_URL", "OSMOSIS_TOKEN", "OSMOSIS_TOKEN_PLATFORM_URL")
_URL_VARS = {"OSMOSIS_PLATFORM_URL", "OSMOSIS_TOKEN_PLATFORM_URL"}


def normalize_platform_url(raw: str) -> str:
    """Canonical form of a platform URL: lower-case scheme and host, no default port, no trailing ``/``.

    A value without a scheme gets ``http://`` for loopback hosts and ``https://`` otherwise.

    Raises:
        PlatformError: ``VALIDATION`` when the value is not an http(s) URL with a host.

    Example:
        >>> normalize_platform_url(" HTTPS://Platform.Osmosis.AI:443/ ")
        'https://platform.osmosis.ai'
        >>> normalize_platform_url("localhost:8080")
        'http://localhost:8080'
    """
    text = raw.strip()
    has_scheme = "://" in text
    text = text.rstrip("/")
    if not text:
        raise PlatformError("Invalid platform URL: it is empty", code="VALIDATION")
    if not has_scheme:
        host_part = text.split("/", 1)[0].rsplit("@", 1)[-1]
        host_only = host_part.rsplit(":", 1)[0] if host_part.count(":") == 1 else host_part
        text = ("http://" if is_loopback_host(host_only) else "https://") + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    try:
        host = parts.hostname
        port = parts.port
    except ValueError:
        host, port = None, None
    if scheme not in ("http", "https") or not host or parts.username or parts.query or parts.fragment:
        raise PlatformError(
            f"Invalid platform URL {raw.strip()!r}: expected http(s)://host[:port][/path]", code="VALIDATION"
        )
    host = host.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host = f"{host}:{port}"
    return f"{scheme}://{host}{parts.path.rstrip('/')}"


def load_env_file(path: Path | None, environ: MutableMapping[str, str]) -> Path | None:
    """Loads ``path`` (or the nearest ``.env`` upward from the current directory) into ``environ``.

    Variables already set (non-empty) win, as everywhere else. One exception is refused instead: a ``.env``
    that names a *different* platform URL or token than the process already has, because mixing the two
    would send one profile's token to the other's platform.

    Returns:
        The file loaded, or ``None`` when there was none.

    Raises:
        PlatformError: ``CONFLICT`` for a clashing auth variable; ``VALIDATION`` for a missing file.
    """
    from dotenv import dotenv_values, find_dotenv

    if path is None:
        found = find_dotenv(usecwd=True)
        if not found:
            return None
        path = Path(found)
    elif not path.is_file():
        raise PlatformError(f"--env-file {path}: no such file", code="VALIDATION")
    values = {k: v for k, v in dotenv_values(path).items() if v is not None}
    for name in PROFILE_VARS:
        mine, theirs = environ.get(name, "").strip(), values.get(name, "").strip()
        if not mine or not theirs:
            continue
        same = (
            _same_url(mine, theirs) if name in _URL_VARS else mine == theirs  # tokens: exact match only
        )
        if not same:
            raise PlatformError(
                f"{path} sets {name} to a different value than the environment; unset one of them "
                "(mixing two auth profiles would send a token to the wrong platform)",
                code="CONFLICT",
                details={"variable": name, "env_file": str(path)},
            )
    for name, value in values.items():
        if not environ.get(name):
            environ[name] = value
    return path


def _same_url(a: str, b: str) -> bool:
    try:
        return normalize_platform_url(a) == normalize_platform_url(b)
    except PlatformError:
        return a == b


@dataclass(frozen=True)
class PlatformSettings:
    """The platform this process talks to, and warnings about how it was chosen.

    Attributes:
        url: The normalised base URL.
        source: ``flag``, ``environment`` or ``default``.
        warnings: ``(code, message)`` pairs for the CLI to show.
    """

    url: str
    source: str
    warnings: tuple[tuple[str, str], ...] = field(default=())


def resolve_settings(flag: str | None, environ: MutableMapping[str, str] | None = None) -> PlatformSettings:
    """The platform URL from ``--platform``, else ``OSMOSIS_PLATFORM_URL``, else the default.

    Raises:
        PlatformError: ``VALIDATION`` for an invalid URL, or a plain-HTTP URL to a non-loopback host
            without ``OSMOSIS_ALLOW_INSECURE_PLATFORM_URL=1``.

    Example:
        >>> resolve_settings(None, {}).url
        'https://platform.osmosis.ai'
    """
    env = os.environ if environ is None else environ
    raw, source = flag or "", "flag"
    if not (raw or "").strip():
        raw, source = env.get("OSMOSIS_PLATFORM_URL", ""), "environment"
    if not raw.strip():
        return PlatformSettings(DEFAULT_PLATFORM_URL, "default")
    url = normalize_platform_url(raw)
    parts = urlsplit(url)
    warnings: list[tuple[str, str]] = []
    if parts.scheme != "https" and not is_loopback_host(parts.hostname or ""):
        warnings.append(
            (
                "INSECURE_PLATFORM_URL",
                f"Platform URL {url} is not HTTPS: your login token would travel unencrypted.",
            )
        )
        if env.get("OSMOSIS_ALLOW_INSECURE_PLATFORM_URL", "").strip() != "1":
            raise InsecurePlatformURLError(
                f"Refusing the plain-HTTP platform URL {url}: use https://, or set "
                "OSMOSIS_ALLOW_INSECURE_PLATFORM_URL=1 if you really mean it",
                url=url,
                warnings=tuple(warnings),
            )
    return PlatformSettings(url, source, tuple(warnings))
