"""Logging in: the device flow, token verification and revocation (no printing; the CLI shows the code).

Device flow: ``POST /api/cli/device/authorize`` gives a user code and a URL; the user approves in a browser
while :func:`poll_device_token` polls ``POST /api/cli/device/token`` every ``interval`` seconds
(``slow_down`` adds 5 s, up to 30 s) until a token arrives, the user refuses, the code expires, or the
overall deadline (``min(900 s, expires_in)``) passes.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from osmosis_ai.platform.client import PlatformClient, segment
from osmosis_ai.platform.credentials import load_credentials, parse_expiry  # load_credentials: the 0.3 path
from osmosis_ai.platform.errors import PlatformError

__all__ = [
    "DeviceCode",
    "Identity",
    "TokenGrant",
    "load_credentials",
    "poll_device_token",
    "revoke_token",
    "start_device_login",
    "verify_token",
]

MAX_INTERVAL = 30.0
SLOW_DOWN_STEP = 5.0
MAX_WAIT = 900.0


@dataclass(frozen=True)
class DeviceCode:
    """What the user needs to approve a device login."""

    device_code: str = field(repr=False)
    user_code: str
    verification_uri: str
    expires_in: float
    interval: float

    @property
    def url(self) -> str:
        return self.verification_uri


@dataclass
class TokenGrant:
    """A token issued by the device flow, with the account it belongs to."""

    token: str = field(repr=False)
    token_id: str | None
    expires_at: str
    user: dict[str, Any]


@dataclass
class Identity:
    """What ``GET /api/cli/verify`` says about a token."""

    token_id: str | None
    user: dict[str, Any]
    expires_at: str
    workspace: dict[str, Any] | None


def _expiry_text(value: Any) -> str:
    parsed = parse_expiry(value)
    if value is not None and parsed is None:
        raise PlatformError(
            f"The platform sent an expiry without a time zone ({value!r}); cannot tell when the login ends."
        )
    return (parsed or datetime.now(timezone.utc) + timedelta(days=90)).isoformat()


def _user(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or not data.get("id") or not data.get("email"):
        raise PlatformError("The platform's answer lacks the account's id and email; try again later.")
    return {"id": str(data["id"]), "email": str(data["email"]), "name": data.get("name")}


def start_device_login(client: PlatformClient, device_name: str | None = None) -> DeviceCode:
    """Asks the platform for a device code (no token needed).

    Example:
        >>> code = start_device_login(client)  # doctest: +SKIP
        >>> code.user_code, code.url  # doctest: +SKIP
        ('ABCD-EFGH', 'https://platform.osmosis.ai/device')
    """
    name = device_name or socket.gethostname() or "Unknown"
    data = client.post("/api/cli/device/authorize", {"deviceName": name}, scoped=False, auth=False)
    try:
        return DeviceCode(
            device_code=str(data["device_code"]),
            user_code=str(data["user_code"]),
            verification_uri=str(data.get("verification_uri_complete") or data["verification_uri"]),
            expires_in=float(data.get("expires_in", MAX_WAIT)),
            interval=max(0.0, float(data.get("interval", 5))),
        )
    except (KeyError, TypeError, ValueError):
        raise PlatformError("The platform's device-login answer is incomplete; try again later.") from None


def poll_device_token(
    client: PlatformClient,
    code: DeviceCode,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> TokenGrant:
    """Polls until the user approves; returns the token.

    Raises:
        PlatformError: ``AUTH_REQUIRED`` when the user refuses or the code expires (the message says to run
            ``osmosis auth login`` again); the platform's own error for 426/429/5xx (polling stops).
    """
    interval = code.interval
    deadline = clock() + min(MAX_WAIT, code.expires_in)
    while True:
        try:
            data = client.post(
                "/api/cli/device/token", {"device_code": code.device_code}, scoped=False, auth=False
            )
        except PlatformError as exc:
            reason = exc.details.get("error") if exc.status_code in (400, 401, 403) else None
            if reason == "authorization_pending":
                pass
            elif reason == "slow_down":
                interval = min(MAX_INTERVAL, interval + SLOW_DOWN_STEP)
            elif reason == "access_denied":
                raise PlatformError(
                    "The login was refused in the browser. Run `osmosis auth login` to try again.",
                    code="AUTH_REQUIRED",
                ) from None
            elif reason == "expired_token":
                raise PlatformError(
                    "The login code expired before it was approved. Run `osmosis auth login` again.",
                    code="AUTH_REQUIRED",
                ) from None
            else:
                raise
        else:
            if not data.get("token"):
                raise PlatformError("The platform approved the login but sent no token; try again.")
            return TokenGrant(
                token=str(data["token"]),
                token_id=data.get("token_id"),
                expires_at=_expiry_text(data.get("expires_at")),
                user=_user(data.get("user")),
            )
        if clock() + interval > deadline:
            raise PlatformError(
                "Timed out waiting for the login to be approved. Run `osmosis auth login` again.",
                code="AUTH_REQUIRED",
            )
        sleep(interval)


def verify_token(client: PlatformClient, *, scoped: bool = False) -> Identity:
    """``GET /api/cli/verify`` with the client's token; ``scoped`` adds the workspace header.

    Raises:
        PlatformError: ``AUTH_REQUIRED`` for a rejected or already expired token.
    """
    data = client.get("/api/cli/verify", scoped=scoped)
    expires = _expiry_text(data.get("expires_at"))
    if parse_expiry(expires) <= datetime.now(timezone.utc):  # type: ignore[operator]
        raise PlatformError("This token has expired. Run `osmosis auth login`.", code="AUTH_REQUIRED")
    workspace = data.get("workspace") if isinstance(data.get("workspace"), dict) else None
    return Identity(
        token_id=data.get("token_id"), user=_user(data.get("user")), expires_at=expires, workspace=workspace
    )


def revoke_token(client: PlatformClient, token_id: str) -> bool | None:
    """Revokes a token on the platform.

    Returns:
        ``True`` when revoked (or already invalid: 401), ``False`` when the platform refused, ``None`` when
        it could not be reached.
    """
    try:
        client.delete(f"/api/cli/tokens/{segment(token_id)}", scoped=False, timeout=5.0, idempotent=False)
    except PlatformError as exc:
        if exc.status_code == 401:
            return True
        return None if exc.status_code is None else False
    return True
