"""Turning a platform error response into a :class:`PlatformError` with the right code and a useful message.

One table for every command: the status decides the CLI code, the body's ``code`` may refine it
(subscription, billing, repository scope), and the message always says what to do next.
"""

from __future__ import annotations

from typing import Any

from osmosis_ai.platform.errors import AuthRequiredError, PlatformError

__all__ = ["error_from_response", "render_issues"]

_STATUS_CODES = {
    400: "VALIDATION",
    404: "NOT_FOUND",
    409: "CONFLICT",
    426: "UPGRADE_REQUIRED",
    429: "RATE_LIMITED",
}

_AUTH_MESSAGES = {
    "TOKEN_EXPIRED": "Your Osmosis login has expired.",
    "TOKEN_REVOKED": "Your Osmosis login was revoked.",
    "TOKEN_INVALID": "The platform does not recognise your login token.",
    "TOKEN_MISSING": "The request carried no login token.",
    "AUTH_HEADER_MISSING": "The request carried no login token.",
}

_SCOPE_MESSAGES = {
    "GIT_SCOPE_REQUIRED": "This command needs a workspace: run it inside the platform-connected repository.",
    "GIT_SCOPE_HEADER_REQUIRED": "This command needs a workspace: run it inside the platform-connected "
    "repository.",
    "GIT_SCOPE_INVALID": "The `origin` remote does not name a valid GitHub repository.",
    "GIT_SCOPE_HEADER_INVALID": "The `origin` remote does not name a valid GitHub repository.",
    "GIT_REPOSITORY_NOT_CONNECTED": "This repository is not connected to an Osmosis workspace. Connect it on "
    "the platform, or check that `origin` points at the connected repository (it may have been renamed).",
    "GIT_REPOSITORY_ACCESS_DENIED": "Your account has no access to the workspace connected to this "
    "repository. Ask a workspace admin to invite you.",
    "GIT_SCOPE_HEADER_ACCESS_DENIED": "Your account has no access to the workspace connected to this "
    "repository. Ask a workspace admin to invite you, or check that `origin` is the connected repository.",
}


def render_issues(issues: Any) -> list[str]:
    """``  - key: message (did you mean 'x'?)`` lines for a 422/400 body's ``issues`` list.

    Example:
        >>> render_issues([{"key": "lr", "message": "unknown key", "key_correction": "learning_rate"}])
        ["  - lr: unknown key (did you mean 'learning_rate'?)"]
    """
    lines = []
    for issue in issues if isinstance(issues, list) else []:
        if not isinstance(issue, dict):
            continue
        line = f"  - {issue.get('key') or '(config)'}: {issue.get('message') or 'invalid'}"
        if issue.get("key_correction"):
            line += f" (did you mean '{issue['key_correction']}'?)"
        lines.append(line)
    return lines


def error_from_response(status: int, body: Any, text: str, *, env_token: bool) -> PlatformError:
    """The error for a non-2xx answer.

    Args:
        status: HTTP status.
        body: The parsed JSON body when it was a JSON object, else ``None``.
        text: The raw body text (used, truncated, when it is not JSON).
        env_token: The token came from ``OSMOSIS_TOKEN`` (changes the way forward on 401).
    """
    body = body if isinstance(body, dict) else None
    details: dict[str, Any] = dict(body) if body else {}
    platform_code = body.get("code") if body else None
    if platform_code:
        details["platform_code"] = platform_code
    shown = ""
    if body:
        shown = str(body.get("error") or body.get("message") or "").strip()
    elif text.strip():
        shown = f"API error: HTTP {status}. Response: {text.strip()[:200]}"

    if status == 401:
        lead = _AUTH_MESSAGES.get(str(platform_code), "Your Osmosis login is not valid (HTTP 401).")
        way = (
            "OSMOSIS_TOKEN is rejected: replace it with a valid token, or unset it and run `osmosis auth login`."
            if env_token
            else "Run `osmosis auth login` to log in again."
        )
        return AuthRequiredError(f"{lead} {way}", details=details, status_code=status)

    if status == 426:
        message = shown or "This version of osmosis-ai is no longer supported by the platform."
        return PlatformError(
            f"{message} Upgrade with `pip install -U osmosis-ai`.",
            code="UPGRADE_REQUIRED",
            details=details,
            status_code=status,
        )

    if status == 403 and (
        platform_code in ("SUBSCRIPTION_REQUIRED", "BILLING_REQUIRED") or "subscription" in shown.lower()
    ):
        code = "BILLING_REQUIRED" if platform_code == "BILLING_REQUIRED" else "SUBSCRIPTION_REQUIRED"
        message = shown or "This workspace needs an active subscription for that."
        return PlatformError(
            f"{message} Check the workspace's billing settings on the platform.",
            code=code,
            details=details,
            status_code=status,
        )

    if platform_code in _SCOPE_MESSAGES:
        message = _SCOPE_MESSAGES[str(platform_code)]
    elif status == 429:
        message = (shown or "The platform is rate-limiting requests.") + " Wait a moment and try again."
    elif status >= 500:
        message = (shown or f"The platform failed (HTTP {status}).") + " Try again later."
    else:
        message = shown or f"The platform refused the request (HTTP {status})."
    lines = render_issues(body.get("issues") if body else None)
    if lines:
        message = message.rstrip(":.") + ":\n" + "\n".join(lines)
    if body and body.get("field") and not lines:
        message += f" (field: {body['field']})"
    return PlatformError(
        message, code=_STATUS_CODES.get(status, "PLATFORM_ERROR"), details=details, status_code=status
    )
