"""Bearer keys of the rollout servers, their one home (no FastAPI needed): :class:`ControllerAuth`, the
controller's key as 0.3 holds it, and the check both servers run on an ``Authorization`` header.

The 0.3 rollout server checks no key by default, as the established one: the platform's controller calls a
user's server without one (its key travels in the request body and comes back on the callbacks). A server
that should refuse other callers is given one:
``create_rollout_server(backend, auth=ControllerAuth(api_key=...))``.
"""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass, field

__all__ = ["API_KEY_ENV", "ControllerAuth", "key_matches"]

logger = logging.getLogger("osmosis_ai.rollout.server")
API_KEY_ENV = "OSMOSIS_ROLLOUT_API_KEY"


def _token(header: str | None) -> str | None:
    """The key of an ``Authorization`` header: ``Bearer <key>`` (scheme case-insensitive) or, as the
    established 0.2 server accepts, the bare key."""
    header = (header or "").strip()
    parts = header.split()
    if len(parts) == 2 and parts[0].lower() == "bearer":
        return parts[1]
    return header or None


def key_matches(expected: str, header: str | None) -> bool:
    """Whether an ``Authorization`` header carries ``expected`` (compared in constant time)."""
    token = _token(header)
    # compare_digest on bytes: constant time, and no TypeError for non-ASCII input.
    return token is not None and secrets.compare_digest(token.encode(), expected.encode())


@dataclass
class ControllerAuth:
    """A controller's bearer key (0.3's class): the key the server sends on a rollout's callbacks, and, given
    to ``create_rollout_server(auth=...)``, the key every caller of the server must send.

    Example:
        >>> auth = ControllerAuth(api_key="k")
        >>> auth, auth.as_bearer_headers(), auth.allows("Bearer k"), ControllerAuth().allows(None)
        (ControllerAuth(api_key=<redacted>), {'Authorization': 'Bearer k'}, True, True)
    """

    api_key: str | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"ControllerAuth(api_key={'<redacted>' if self.api_key else None})"

    def as_bearer_headers(self) -> dict[str, str] | None:
        """``{"Authorization": "Bearer <key>"}``, or None without a key."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else None

    def allows(self, header: str | None) -> bool:
        """Whether a request with this ``Authorization`` header may call (any may, without a key)."""
        return not self.api_key or key_matches(self.api_key, header)

    @classmethod
    def from_environment(cls) -> ControllerAuth:
        """A key to require: ``$OSMOSIS_ROLLOUT_API_KEY``, else a new random one (logged once, so the caller
        can use it)."""
        key = os.environ.get(API_KEY_ENV, "").strip()
        if key:
            return cls(key)
        key = secrets.token_urlsafe(24)
        logger.warning("rollout server API key (set %s to choose one): %s", API_KEY_ENV, key)
        return cls(key)
