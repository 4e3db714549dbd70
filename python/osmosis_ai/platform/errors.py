"""Errors of the platform layer, each carrying the CLI error code of the JSON envelope.

The codes are the closed set the established CLI documents (``AUTH_REQUIRED``, ``NOT_FOUND``, ...), so
scripts that branch on ``error.code`` keep working.
"""

from __future__ import annotations

from typing import Any

from osmosis_ai.errors import CLIError

__all__ = ["AuthRequiredError", "InsecurePlatformURLError", "InteractiveRequiredError", "PlatformError"]


class PlatformError(CLIError):
    """A platform call or a platform command's local check failed.

    Attributes:
        code: The CLI error code (``VALIDATION``, ``NOT_FOUND``, ``PLATFORM_ERROR``, ...).
        details: Extra structured facts for ``--json`` (never a secret or a token).
        status_code: The HTTP status, when the platform answered.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "PLATFORM_ERROR",
        details: dict[str, Any] | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.details: dict[str, Any] = dict(details or {})
        self.status_code = status_code
        if status_code is not None:
            self.details.setdefault("status_code", status_code)


class AuthRequiredError(PlatformError):
    """No usable login: none stored, expired, or rejected by the platform (401)."""

    def __init__(
        self, message: str, *, details: dict[str, Any] | None = None, status_code: int | None = None
    ):
        super().__init__(message, code="AUTH_REQUIRED", details=details, status_code=status_code)


class InteractiveRequiredError(PlatformError):
    """The command needs a prompt or a confirmation, and the session cannot show one."""

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, code="INTERACTIVE_REQUIRED", details=details)


class InsecurePlatformURLError(PlatformError):
    """A plain-HTTP platform URL to a non-loopback host, refused (``VALIDATION``).

    Attributes:
        warnings: ``(code, message)`` pairs shown before the error (``INSECURE_PLATFORM_URL``), as the
            established CLI warns and then refuses.
    """

    def __init__(self, message: str, *, url: str, warnings: tuple[tuple[str, str], ...]) -> None:
        super().__init__(message, code="VALIDATION", details={"platform_url": url})
        self.warnings = warnings
