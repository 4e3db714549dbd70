"""Registering a self-hosted rollout server (``osmosis serve``) with the platform.

Once the server answers its own ``/health``, the platform is told where it is
(``POST /api/cli/rollout-server/register`` with host, port, agent loop name and the server's API key); the
platform then checks the server's health from its side and reports what it found.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from osmosis_ai.platform.client import PlatformClient
from osmosis_ai.platform.errors import PlatformError

__all__ = ["Registration", "register_rollout_server", "reported_host", "wait_until_healthy"]

REGISTER_TIMEOUT = 15.0


@dataclass(frozen=True)
class Registration:
    """The platform's view of the registered server.

    Attributes:
        server_id: The platform's id for it.
        healthy: The platform reached the server (status ``healthy``).
        detail: The platform's health-check error, when it could not reach the server.
    """

    server_id: str | None
    healthy: bool
    detail: str | None


def reported_host(bound_host: str) -> str:
    """The address to give the platform: ``OSMOSIS_ROLLOUT_PUBLIC_HOST`` if set, the bound host unless it is
    a wildcard, else this machine's outbound interface address (found without sending a packet).

    Example:
        >>> reported_host("10.0.0.5")
        '10.0.0.5'
    """
    override = os.environ.get("OSMOSIS_ROLLOUT_PUBLIC_HOST", "").strip()
    if override:
        return override
    if bound_host not in ("0.0.0.0", "::", ""):
        return bound_host
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # a UDP "connect" only picks the route; TEST-NET-1 is never reached
        return str(probe.getsockname()[0])
    return "127.0.0.1"


def wait_until_healthy(port: int, *, timeout: float = 10.0, interval: float = 0.2) -> bool:
    """Polls ``http://127.0.0.1:<port>/health`` until it answers 200, for at most ``timeout`` seconds.

    Our own server on this machine: asked directly, never through a proxy the environment names.
    """
    import httpx

    from osmosis_ai.llm.httpx_clients import http_client

    deadline = time.monotonic() + timeout
    with http_client(direct=True, timeout=2.0) as client:
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if client.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                    return True
            time.sleep(interval)
    return False


def register_rollout_server(
    client: PlatformClient, *, host: str, port: int, agent_loop_name: str, api_key: str | None
) -> Registration:
    """Tells the platform where the rollout server is.

    Raises:
        PlatformError: The platform refused (the API key is never part of the message).
    """
    body: dict[str, Any] = {"host": host, "port": port, "agent_loop_name": agent_loop_name}
    if api_key:
        body["api_key"] = api_key
    try:
        answer = client.post("/api/cli/rollout-server/register", body, scoped=False, timeout=REGISTER_TIMEOUT)
    except PlatformError as exc:
        from osmosis_ai.platform.secrets import redact

        raise redact(exc, [api_key] if api_key else []) from None
    check = found if isinstance(found := answer.get("health_check_result"), dict) else {}
    return Registration(
        server_id=answer.get("id"), healthy=answer.get("status") == "healthy", detail=check.get("error")
    )
