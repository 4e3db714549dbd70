"""THE platform HTTP client: one connection pool, the package's one retry policy, the platform's headers.

Only idempotent calls (GET, PUT, DELETE, or a POST the caller marks idempotent) are retried, on 429, 5xx
and transport errors, with :class:`osmosis_ai.llm.retry.RetryPolicy` (the package's only backoff).
Non-idempotent calls (submitting a run, creating a dataset) are sent once: a retry could create two.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import httpx

from osmosis_ai._version import __version__
from osmosis_ai.llm.httpx_clients import http_client
from osmosis_ai.llm.retry import (
    RETRYABLE_STATUS,
    RetryLater,
    RetryPolicy,
    retry_after_from_headers,
    retry_blocking,
)
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.responses import error_from_response

__all__ = ["DEFAULT_TIMEOUT", "PlatformClient", "segment"]

DEFAULT_TIMEOUT = 30.0
USER_AGENT = f"osmosis-cli/{__version__}"
# 409 is in the LLM layer's set (some providers use it for "busy"); on the platform it means "already
# exists", an answer a retry cannot change.
_RETRY_STATUS = RETRYABLE_STATUS - {409}
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE"})
# Version notices are shown once per process, however many clients and calls there are.
_SEEN_VERSION_NOTICES: set[str] = set()


def segment(value: str) -> str:
    """A URL path segment: every reserved character encoded (a run named ``a/b`` stays one segment).

    Example:
        >>> segment("my run/1")
        'my%20run%2F1'
    """
    return quote(str(value), safe="")


class PlatformClient:
    """Talks to one platform for one login.

    Args:
        base_url: Normalised platform URL (see :mod:`osmosis_ai.platform.settings`).
        token: Bearer token, or ``None`` for the device-flow endpoints.
        git_identity: ``owner/repo`` sent as ``X-Osmosis-Git`` on workspace-scoped calls.
        env_token: The token came from ``OSMOSIS_TOKEN`` (changes the 401 advice).
        timeout: Default seconds per request.
        retry: Backoff for idempotent calls.
        sleep: Waits between retries (tests pass a recorder).

    Example:
        >>> with PlatformClient("http://127.0.0.1:8000", token="t") as client:  # doctest: +SKIP
        ...     client.get("/api/cli/verify", scoped=False)
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        git_identity: str | None = None,
        env_token: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        from osmosis_ai.redact import remember

        self.base_url = base_url.rstrip("/")
        self.token = token
        remember([token])  # the platform's error texts may quote it: masked wherever they are shown
        self.git_identity = git_identity
        self.env_token = env_token
        self.retry = retry or RetryPolicy(max_retries=3, base_delay=1.0, max_delay=8.0, max_retry_after=60.0)
        self.sleep = sleep
        self.warnings: list[tuple[str, str]] = []
        # Proxies and certificate authorities as for every other client (llm/network.py decides).
        self._http = http_client(timeout=timeout, follow_redirects=False)

    def close(self) -> None:
        """Closes the connection pool."""
        self._http.close()

    def __enter__(self) -> PlatformClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def headers(self, *, scoped: bool, auth: bool) -> dict[str, str]:
        """The headers of a platform request (the token only when ``auth``)."""
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            "X-Osmosis-CLI-Version": __version__,
        }
        if auth:
            if not self.token:
                raise PlatformError("Not logged in: run `osmosis auth login`.", code="AUTH_REQUIRED")
            headers["Authorization"] = f"Bearer {self.token}"
        if scoped:
            if not self.git_identity:
                raise PlatformError(
                    "This command needs a workspace: run it inside the platform-connected repository.",
                    code="WORKSPACE_REQUIRED",
                )
            headers["X-Osmosis-Git"] = self.git_identity
        return headers

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        scoped: bool = True,
        auth: bool = True,
        idempotent: bool | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Sends one platform call and returns its JSON object (``{}`` for an empty body).

        Raises:
            PlatformError: With the CLI code for the status (see :mod:`osmosis_ai.platform.responses`),
                or ``PLATFORM_ERROR`` for a connection failure or a body that is not a JSON object.
        """
        method = method.upper()
        retryable = method in _IDEMPOTENT if idempotent is None else idempotent
        headers = self.headers(scoped=scoped, auth=auth)
        url = self.base_url + path
        query = {k: v for k, v in (params or {}).items() if v is not None}
        content = None if json_body is None else json.dumps(json_body).encode()

        def attempt() -> dict[str, Any]:
            try:
                response = self._http.request(
                    method,
                    url,
                    params=query,
                    content=content,
                    headers=headers,
                    timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
                )
            except httpx.TimeoutException:
                error = PlatformError(f"The platform at {self.base_url} did not answer in time (timed out).")
                raise (RetryLater(error) if retryable else error) from None
            except httpx.TransportError as exc:
                error = PlatformError(
                    f"Connection error: cannot reach {self.base_url} ({type(exc).__name__})."
                )
                raise (RetryLater(error) if retryable else error) from None
            if response.status_code < 400:
                self._note_version(response)
                return self._parse(response)
            if not retryable or response.status_code not in _RETRY_STATUS:
                raise self._error(response)
            raise RetryLater(self._error(response), retry_after_from_headers(response.headers))

        return retry_blocking(self.retry, attempt, sleep=self.sleep)

    def stream_lines(
        self, path: str, *, params: dict[str, Any] | None = None, read_timeout: float = 65.0
    ) -> Iterator[str]:
        """``GET`` a server-sent event stream (scoped, with the token) and yields its lines as they arrive.

        Not retried: a stream that breaks is the caller's to reopen. ``read_timeout`` bounds the wait for
        the next bytes (servers send heartbeats well within it).

        Raises:
            PlatformError: The platform refused (status mapped as for :meth:`request`) or the connection
                failed or went silent.
        """
        headers = {**self.headers(scoped=True, auth=True), "Accept": "text/event-stream"}
        query = {k: v for k, v in (params or {}).items() if v is not None}
        timeout = httpx.Timeout(DEFAULT_TIMEOUT, read=read_timeout)
        try:
            with self._http.stream(
                "GET", self.base_url + path, params=query, headers=headers, timeout=timeout
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    raise self._error(response)
                self._note_version(response)
                yield from response.iter_lines()
        except httpx.TimeoutException:
            raise PlatformError(
                f"The stream from {self.base_url} went silent for {read_timeout:.0f} s."
            ) from None
        except httpx.TransportError as exc:
            raise PlatformError(
                f"Connection error: the stream from {self.base_url} broke ({type(exc).__name__})."
            ) from None

    def get(self, path: str, **kwargs: Any) -> dict[str, Any]:
        """``request("GET", ...)``."""
        return self.request("GET", path, **kwargs)

    def post(self, path: str, json_body: Any = None, **kwargs: Any) -> dict[str, Any]:
        """``request("POST", ...)`` with a JSON body (``{}`` when none)."""
        return self.request("POST", path, json_body={} if json_body is None else json_body, **kwargs)

    def delete(self, path: str, json_body: Any = None, **kwargs: Any) -> dict[str, Any]:
        """``request("DELETE", ...)``."""
        return self.request("DELETE", path, json_body=json_body, **kwargs)

    def _parse(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code == 204 or not response.content.strip():
            return {}
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise PlatformError(
                f"Invalid JSON response from the platform at {self.base_url} (HTTP {response.status_code}).",
                status_code=response.status_code,
            )
        return data

    def _error(self, response: httpx.Response) -> PlatformError:
        try:
            body = response.json()
        except ValueError:
            body = None
        return error_from_response(response.status_code, body, response.text, env_token=self.env_token)

    def _note_version(self, response: httpx.Response) -> None:
        status = response.headers.get("x-osmosis-version-status", "").strip().lower()
        codes = {"upgrade_available": "UPGRADE_AVAILABLE", "deprecated": "DEPRECATED"}
        if status not in codes or status in _SEEN_VERSION_NOTICES:
            return
        _SEEN_VERSION_NOTICES.add(status)
        message = response.headers.get("x-osmosis-version-message", "").strip() or (
            "A newer osmosis-ai is available: pip install -U osmosis-ai"
            if status == "upgrade_available"
            else "This osmosis-ai version is deprecated: pip install -U osmosis-ai"
        )
        self.warnings.append((codes[status], message))
