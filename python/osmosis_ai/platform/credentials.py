"""Where a login lives: the token in the OS keyring, its metadata in ``~/.config/osmosis/credentials.json``.

The metadata file (version 2, mode 0600, written atomically) maps each normalised platform URL to the
login's user, expiry, token id and token store. The token itself goes to the keyring (service
``osmosis-cli``). CI runners and containers usually have no keyring backend: there the token is kept in
the same 0600 file (``token_store: "file"``), the login says so once, and ``OSMOSIS_TOKEN_STORE=file``
(or ``auth login --token-store file``) chooses that on purpose. A corrupt file or an unknown version
fails closed with a message naming the file, instead of being treated as "logged out" and overwritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from osmosis_ai.platform.errors import AuthRequiredError, PlatformError
from osmosis_ai.platform.settings import DEFAULT_PLATFORM_URL, normalize_platform_url

__all__ = [
    "KEYRING_SERVICE",
    "CredentialStore",
    "Credentials",
    "config_dir",
    "environment_credentials",
    "keyring_available",
    "parse_expiry",
    "resolve_login",
]

KEYRING_SERVICE = "osmosis-cli"
FILE_VERSION = 2
TOKEN_STORES = ("auto", "keyring", "file")


def config_dir() -> Path:
    """``$OSMOSIS_CONFIG_DIR`` or ``~/.config/osmosis``."""
    override = os.environ.get("OSMOSIS_CONFIG_DIR", "").strip()
    return Path(override).expanduser() if override else Path.home() / ".config" / "osmosis"


def parse_expiry(value: Any) -> datetime | None:
    """A timezone-aware datetime from an ISO-8601 string (``Z`` accepted); ``None`` if absent or naive.

    Example:
        >>> parse_expiry("2030-01-01T00:00:00Z").year
        2030
    """
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


@dataclass
class Credentials:
    """A usable login for one platform.

    Attributes:
        token: The bearer token (kept out of ``repr``).
        platform_url: The platform it belongs to.
        source: ``credentials`` (stored login) or ``environment`` (``OSMOSIS_TOKEN``).
        user: ``{id, email, name}`` (empty for an environment token).
        expires_at: Expiry, or ``None`` when unknown (environment tokens).
        token_id: The platform's id of the token, used to revoke it.
        token_store: ``keyring`` or ``file`` for stored logins.
    """

    token: str = field(repr=False)
    platform_url: str
    source: str
    user: dict[str, Any] = field(default_factory=dict)
    expires_at: datetime | None = None
    token_id: str | None = None
    token_store: str | None = None

    def __post_init__(self) -> None:
        from osmosis_ai.redact import remember

        remember([self.token])  # an error text quoting it (a platform's, say) is masked wherever it goes

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= datetime.now(timezone.utc)


def environment_credentials(
    platform_url: str, environ: Mapping[str, str] | None = None
) -> Credentials | None:
    """The ``OSMOSIS_TOKEN`` login, if set, bound to its platform.

    A token from the environment is only sent to the platform named by ``OSMOSIS_TOKEN_PLATFORM_URL``
    (or, when that is unset, to the default platform), so pointing ``--platform`` elsewhere cannot leak it.

    Raises:
        PlatformError: ``ENV_TOKEN_PLATFORM_MISMATCH`` / ``ENV_TOKEN_PLATFORM_REQUIRED``.
    """
    env = os.environ if environ is None else environ
    token = env.get("OSMOSIS_TOKEN", "").strip()
    if not token:
        return None
    bound = env.get("OSMOSIS_TOKEN_PLATFORM_URL", "").strip()
    if bound:
        if normalize_platform_url(bound) != platform_url:
            raise PlatformError(
                f"OSMOSIS_TOKEN is bound to {normalize_platform_url(bound)} (OSMOSIS_TOKEN_PLATFORM_URL) but "
                f"this command talks to {platform_url}; set OSMOSIS_TOKEN_PLATFORM_URL to match, or unset "
                "OSMOSIS_TOKEN.",
                code="ENV_TOKEN_PLATFORM_MISMATCH",
            )
    elif platform_url != DEFAULT_PLATFORM_URL:
        raise PlatformError(
            f"OSMOSIS_TOKEN is set but this command talks to {platform_url}, not the default platform; set "
            f"OSMOSIS_TOKEN_PLATFORM_URL={platform_url} to send the token there.",
            code="ENV_TOKEN_PLATFORM_REQUIRED",
        )
    return Credentials(token=token, platform_url=platform_url, source="environment")


def keyring_available() -> Any:
    """The active keyring backend if it can store secrets, else ``None`` (no backend, or keyring absent)."""
    try:
        import keyring
        from keyring.backends import chainer, fail
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:  # a broken backend configuration counts as none
        return None
    if isinstance(backend, fail.Keyring):
        return None
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return None
    return backend


def _hash24(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class CredentialStore:
    """The credentials file and the keyring entries it points to.

    Args:
        directory: The config directory (default :func:`config_dir`).
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or config_dir()
        self.path = self.directory / "credentials.json"

    # --- the metadata file ----------------------------------------------------------------------------

    def read(self) -> dict[str, Any]:
        """The whole registry (``{"version": 2, "platforms": {...}}``); empty when there is no file.

        Raises:
            PlatformError: ``CREDENTIALS_PARSE_FAILED`` or ``CREDENTIALS_VERSION_CHANGED``.
        """
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {"version": FILE_VERSION, "platforms": {}}
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("platforms", {}), dict):
            raise PlatformError(
                f"{self.path} is corrupt (not the JSON object osmosis writes). Run `osmosis auth login` "
                "(it moves the file aside) or delete the file.",
                code="CREDENTIALS_PARSE_FAILED",
                details={"path": str(self.path)},
            )
        if data.get("version") != FILE_VERSION:
            raise PlatformError(
                f"{self.path} has version {data.get('version')!r}, which this osmosis-ai does not read "
                f"(it writes version {FILE_VERSION}). Run `osmosis auth login` to replace it (the old file is "
                "kept as a .bak).",
                code="CREDENTIALS_VERSION_CHANGED",
                details={"path": str(self.path)},
            )
        data.setdefault("platforms", {})
        return data

    def _write(self, data: dict[str, Any]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(self.directory, 0o700)
        fd, tmp = tempfile.mkstemp(prefix=".credentials-", dir=self.directory)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def move_aside(self) -> Path | None:
        """Renames an unreadable credentials file to ``credentials.json.bak[.N]``; returns the new path."""
        if not self.path.exists():
            return None
        target = self.path.with_name("credentials.json.bak")
        n = 1
        while target.exists():
            target = self.path.with_name(f"credentials.json.bak.{n}")
            n += 1
        os.replace(self.path, target)
        return target

    # --- logins -----------------------------------------------------------------------------------------

    def entry(self, platform_url: str) -> dict[str, Any] | None:
        """The stored metadata for ``platform_url`` (no token), or ``None``."""
        entry = self.read()["platforms"].get(platform_url)
        return entry if isinstance(entry, dict) else None

    def load(self, platform_url: str) -> Credentials | None:
        """The stored login for ``platform_url`` with its token, or ``None`` when there is none.

        Raises:
            PlatformError: ``TOKEN_NOT_FOUND`` when the metadata names a keyring entry that is gone.
        """
        entry = self.entry(platform_url)
        if entry is None:
            return None
        if entry.get("token_store") == "file":
            token = entry.get("access_token")
        else:
            backend = keyring_available()
            account = entry.get("keyring_account")
            token = backend.get_password(KEYRING_SERVICE, account) if backend and account else None
        if not token:
            raise AuthRequiredError(
                f"The login for {platform_url} is recorded in {self.path} but its token is missing from the "
                "keyring. Run `osmosis auth login` again.",
                details={"reason": "TOKEN_NOT_FOUND"},
            )
        return Credentials(
            token=str(token),
            platform_url=platform_url,
            source="credentials",
            user=dict(entry.get("user") or {}),
            expires_at=parse_expiry(entry.get("expires_at")),
            token_id=entry.get("token_id"),
            token_store=entry.get("token_store"),
        )

    def save(
        self,
        platform_url: str,
        token: str,
        *,
        user: dict[str, Any],
        expires_at: str,
        token_id: str | None,
        token_store: str = "auto",
    ) -> tuple[str, list[tuple[str, str]]]:
        """Stores a login, replacing any earlier one for the same platform.

        Args:
            token_store: ``auto`` (keyring when usable, else the 0600 file), ``keyring`` (fail without
                one) or ``file``.

        Returns:
            The store used and any ``(code, message)`` warnings (``KEYRING_UNAVAILABLE`` on fallback).

        Raises:
            PlatformError: ``KEYRING_UNAVAILABLE`` when ``keyring`` was asked for and there is none;
                ``VALIDATION`` for an unknown ``token_store``.
        """
        if token_store not in TOKEN_STORES:
            raise PlatformError(
                f"Unknown token store {token_store!r}: use one of {', '.join(TOKEN_STORES)}",
                code="VALIDATION",
            )
        try:
            data = self.read()
        except PlatformError:
            self.move_aside()
            data = {"version": FILE_VERSION, "platforms": {}}
        old = data["platforms"].get(platform_url)
        warnings: list[tuple[str, str]] = []
        entry: dict[str, Any] = {
            "version": FILE_VERSION,
            "token_type": "Bearer",
            "expires_at": expires_at,
            "created_at": datetime.now(timezone.utc).isoformat(),
            "user": user,
            "token_id": token_id,
            "platform_url": platform_url,
        }
        backend = keyring_available() if token_store != "file" else None
        stored_in_keyring = False
        if backend is not None:
            account = (
                f"platform:{_hash24(platform_url)}:{_hash24(token_id) if token_id else secrets.token_hex(12)}"
            )
            try:
                backend.set_password(KEYRING_SERVICE, account, token)
                entry.update(token_store="keyring", keyring_account=account)
                stored_in_keyring = True
            except Exception as exc:  # a locked or broken backend: fall back like a missing one
                if token_store == "keyring":
                    raise PlatformError(
                        f"The keyring refused the token ({type(exc).__name__}).", code="KEYRING_UNAVAILABLE"
                    ) from None
        if not stored_in_keyring:
            if token_store == "keyring":
                raise PlatformError(
                    "No usable keyring backend on this machine. Use --token-store file (or "
                    "OSMOSIS_TOKEN_STORE=file) to keep the token in a 0600 file instead.",
                    code="KEYRING_UNAVAILABLE",
                )
            entry.update(token_store="file", access_token=token)
            if token_store == "auto":
                warnings.append(
                    (
                        "KEYRING_UNAVAILABLE",
                        f"No usable keyring backend: the token is stored in {self.path} (mode 0600). Set "
                        "OSMOSIS_TOKEN_STORE=file to choose this explicitly and silence this notice.",
                    )
                )
        data["platforms"][platform_url] = entry
        self._write(data)
        if isinstance(old, dict):
            self._forget_keyring(old, keep=entry.get("keyring_account"))
        return str(entry["token_store"]), warnings

    def delete(self, platform_url: str) -> dict[str, Any] | None:
        """Removes the login for ``platform_url`` (metadata and keyring entry); returns what was removed."""
        try:
            data = self.read()
        except PlatformError:
            self.move_aside()
            return None
        old = data["platforms"].pop(platform_url, None)
        if old is None:
            return None
        self._write(data)
        if isinstance(old, dict):
            self._forget_keyring(old, keep=None)
        return old if isinstance(old, dict) else None

    def _forget_keyring(self, entry: dict[str, Any], keep: str | None) -> None:
        account = entry.get("keyring_account")
        if not account or account == keep:
            return
        backend = keyring_available()
        if backend is None:
            return
        with contextlib.suppress(Exception):  # already gone, or the backend is locked: nothing to do
            backend.delete_password(KEYRING_SERVICE, account)


def resolve_login(platform_url: str, environ: Mapping[str, str] | None = None) -> Credentials:
    """The login to use for ``platform_url``: ``OSMOSIS_TOKEN`` if set, else the stored one.

    Raises:
        AuthRequiredError: None stored, or expired; the message names both ways to log in.
    """
    creds = environment_credentials(platform_url, environ) or CredentialStore().load(platform_url)
    if creds is None:
        raise AuthRequiredError(
            f"Not logged in to {platform_url}. Run `osmosis auth login` (or set OSMOSIS_TOKEN in CI)."
        )
    if creds.expired:
        assert creds.expires_at is not None
        raise AuthRequiredError(
            f"Your login to {platform_url} expired on {creds.expires_at:%Y-%m-%d}. Run `osmosis auth login`."
        )
    return creds


def load_credentials(*, include_env: bool = True) -> Credentials | None:
    """The login this machine would use for the configured platform, or None (the 0.3 library call).

    The platform is ``OSMOSIS_PLATFORM_URL`` or the default; ``OSMOSIS_TOKEN`` wins when ``include_env``.
    Unlike :func:`resolve_login` this never raises for a missing login: it returns None. An expired
    login is returned as it is (``Credentials.expired`` says so).

    Example:
        >>> load_credentials(include_env=False)  # doctest: +SKIP
    """
    from osmosis_ai.platform.settings import resolve_settings

    platform_url = resolve_settings(None).url
    if include_env:
        creds = environment_credentials(platform_url)
        if creds is not None:
            return creds
    return CredentialStore().load(platform_url)
