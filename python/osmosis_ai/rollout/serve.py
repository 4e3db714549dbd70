"""``serve_agent_loop``: run the rollout server for an agent loop (what ``osmosis serve`` calls).

Secure by default: the server binds 127.0.0.1 unless a host is given, and requires an API key (one is
generated and printed when none is given). ``local_debug`` turns auth off and is only allowed on a
loopback address. Unless ``skip_register`` (or ``local_debug``), the server registers with the Osmosis
platform once it is up, which needs a login (``osmosis auth login`` or ``OSMOSIS_TOKEN``).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from osmosis_ai.errors import OsmosisRolloutError
from osmosis_ai.llm.network import is_loopback_host
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop
from osmosis_ai.rollout.validator import ValidationResult, validate_agent_loop

if TYPE_CHECKING:
    from osmosis_ai.rollout.settings import RolloutSettings

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "LOG_LEVELS",
    "ServeError",
    "ServeEvents",
    "ServeStart",
    "generate_api_key",
    "is_loopback_host",
    "serve_agent_loop",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9000
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

logger = logging.getLogger("osmosis_ai.rollout.serve")


class ServeError(OsmosisRolloutError):
    """The server cannot start as asked; the message says what to change."""


def generate_api_key() -> str:
    """Returns a new random API key (``osm_rollout_`` + 43 URL-safe characters).

    Example:
        >>> generate_api_key().startswith("osm_rollout_")
        True
    """
    return "osm_rollout_" + secrets.token_urlsafe(32)


def _check_options(host: str, skip_register: bool, api_key: str | None, local_debug: bool) -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ServeError(
            f"The rollout server needs FastAPI and uvicorn ({exc}): pip install 'osmosis-ai[server]'"
        ) from None
    if local_debug:
        if api_key:
            raise ServeError("--local disables API-key auth; do not combine it with --api-key")
        if not is_loopback_host(host):
            raise ServeError(
                f"--local (no auth) only binds a loopback address such as 127.0.0.1, not '{host}'; "
                "to serve on other interfaces, drop --local and use an API key"
            )
    if api_key is not None and not api_key.strip():
        raise ServeError("--api-key must not be empty")


def _check_port_free(host: str, port: int) -> None:
    """Fails early, with a plain message, when uvicorn could not bind (it would exit with its own log)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise ServeError(f"cannot listen on {host}:{port}: the host does not resolve ({exc})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        try:
            probe.bind(address)
        except OSError as exc:
            raise ServeError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another port with -p)"
            ) from None


def _platform_login(platform_url: str | None) -> Any:
    """The platform URL and login registration will use; a clear error naming both ways forward if none."""
    from osmosis_ai.platform.credentials import resolve_login
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.settings import resolve_settings

    try:
        url = resolve_settings(platform_url).url
        return url, resolve_login(url)
    except PlatformError as exc:
        raise ServeError(
            f"{exc} Registration with the platform needs a login. To serve without registering, add "
            "--skip-register (an API key protects the server; give TrainGate the key) or --local (loopback "
            "only, no auth, for development)."
        ) from None


def register_when_up(
    platform: Any, host: str, port: int, name: str, key: str | None, events: ServeEvents | None = None
) -> threading.Thread:
    """Registers with the platform from a background thread once the server answers ``/health``.

    A failed registration is reported and the server keeps serving: it still works for a TrainGate that
    is pointed at it by hand. ``events`` hears how it went (default: logged, see :class:`ServeEvents`).
    """
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.registration import register_rollout_server, reported_host, wait_until_healthy

    url, login = platform
    events = events or ServeEvents()

    def run() -> None:
        if not wait_until_healthy(port):
            events.message("Registration skipped: the server did not become healthy within 10 s.", True)
            return
        address = reported_host(host)
        try:
            env_token = getattr(login, "source", None) == "environment"
            with PlatformClient(url, token=login.token, env_token=env_token) as client:
                result = register_rollout_server(
                    client, host=address, port=port, agent_loop_name=name, api_key=key
                )
        except PlatformError as exc:
            events.message(f"Registration with {url} failed: {exc} The server keeps running.", True)
            return
        if result.healthy:
            events.message(
                f"[OK] Registered with the Osmosis platform as {address}:{port} (id {result.server_id}).",
                False,
            )
        else:
            events.message(
                f"Registered with the Osmosis platform, but its health check of {address}:{port} failed"
                f" ({result.detail or 'unreachable'}): make sure the platform can reach this address.",
                True,
            )

    thread = threading.Thread(target=run, name="osmosis-register", daemon=True)
    thread.start()
    return thread


def _debug_dir(log_dir: str | None) -> str | None:
    if log_dir is None:
        return None
    path = os.path.join(log_dir, str(int(time.time())))
    os.makedirs(path, exist_ok=True)
    return path


@dataclass(frozen=True)
class ServeStart:
    """What the server is about to serve, for the start-up panel.

    Attributes:
        agent_name: The agent loop's name.
        host: The interface bound.
        port: The TCP port.
        api_key: The key TrainGate must send (None with auth off).
        key_source: ``"generated"``, ``"provided"`` or ``"disabled"``.
        registration: Where and when the server registers, or why it does not.
        debug_dir: Where per-rollout event logs go, if anywhere.
    """

    agent_name: str
    host: str
    port: int
    api_key: str | None
    key_source: str
    registration: str
    debug_dir: str | None


class ServeEvents:
    """What :func:`serve_agent_loop` tells its operator. This default logs it (logger
    ``osmosis_ai.rollout.serve``; a generated key at WARNING, so it is seen without logging set up);
    ``osmosis serve`` passes one that prints."""

    def validated(self, result: ValidationResult) -> None:
        """The agent loop was checked (an invalid one is raised after this)."""
        level = logging.INFO if result.valid else logging.ERROR
        logger.log(
            level,
            "agent loop validation: %s",
            "ok" if result.valid else "; ".join(str(e) for e in result.errors),
        )

    def starting(self, start: ServeStart) -> None:
        """The server is about to listen."""
        logger.info("rollout server for %s on http://%s:%d", start.agent_name, start.host, start.port)
        if start.key_source == "generated":
            logger.warning("rollout server API key (generated; TrainGate must send it): %s", start.api_key)

    def message(self, text: str, problem: bool) -> None:
        """A line of news (registration); ``problem`` for what needs the operator's attention."""
        logger.log(logging.WARNING if problem else logging.INFO, "%s", text)


def serve_agent_loop(
    agent_loop: RolloutAgentLoop,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    validate: bool = True,
    log_level: str = "info",
    reload: bool = False,
    settings: RolloutSettings | None = None,
    skip_register: bool = False,
    api_key: str | None = None,
    local_debug: bool = False,
    debug_dir: str | None = None,
    module_path: str | None = None,
    platform_url: str | None = None,
    events: ServeEvents | None = None,
) -> int | None:
    """Validates the agent loop and serves it with uvicorn until a signal stops it.

    The first SIGTERM or Ctrl+C begins the shutdown: new inits are answered 503 with ``Retry-After`` while
    running rollouts get their grace period; a second Ctrl+C stops at once.

    Args:
        agent_loop: The agent loop instance.
        host: Interface to bind; 127.0.0.1 unless given.
        port: TCP port.
        validate: Run :func:`validate_agent_loop` first and refuse an invalid agent.
        log_level: uvicorn log level; ``debug`` also logs every request.
        reload: Restart on code changes (needs ``module_path``).
        settings: Rollout settings; the process-wide ones when omitted.
        skip_register: Serve without registering with the platform (``local_debug`` implies it).
        api_key: The key TrainGate must send; generated (and reported to ``events``) when omitted.
        local_debug: No auth; only on a loopback host.
        debug_dir: Base directory for per-rollout event logs (a ``<unix time>/`` subdirectory is made).
        module_path: ``module:attribute`` of the agent, for ``reload``.
        platform_url: The platform to register with (default: ``OSMOSIS_PLATFORM_URL`` or the hosted one).
        events: Receives the validation report, the start-up details and registration news (default: logged).

    Returns:
        The signal that stopped the server (``signal.SIGTERM`` or ``signal.SIGINT``), or None.

    Raises:
        ServeError: Options that cannot work together, missing server dependencies, no login to register.
        AgentLoopValidationError: The agent loop is invalid.
    """
    events = events or ServeEvents()
    if log_level not in LOG_LEVELS:
        raise ServeError(f"log level must be one of {', '.join(LOG_LEVELS)}, got '{log_level}'")
    _check_options(host, skip_register, api_key, local_debug)
    platform = None if (skip_register or local_debug) else _platform_login(platform_url)
    if settings is None:
        from osmosis_ai.rollout.settings import get_settings

        settings = get_settings()  # a bad OSMOSIS_ROLLOUT_* variable fails here, before anything is printed
    if reload and not module_path:
        raise ServeError(
            "reload needs the agent as 'module:attribute' (osmosis serve -m MODULE:ATTR --reload)"
        )
    if validate:
        result = validate_agent_loop(agent_loop)
        events.validated(result)
        result.raise_if_invalid()
    _check_port_free(host, port)
    key, source = (None, "disabled") if local_debug else (api_key, "provided") if api_key else (None, "")
    if not local_debug and key is None:
        key, source = generate_api_key(), "generated"
    run_dir = _debug_dir(debug_dir)
    if platform is not None:
        registration = f"with {platform[0]} once the server is up"
    else:
        registration = "skipped (local debug)" if local_debug else "skipped (--skip-register)"
    events.starting(ServeStart(agent_loop.name, host, port, key, source, registration, run_dir))
    if platform is not None:
        register_when_up(platform, host, port, agent_loop.name, key, events)
    from osmosis_ai.rollout.server.graceful import run_server

    return run_server(
        agent_loop,
        settings,
        host=host,
        port=port,
        log_level=log_level,
        api_key=key,
        debug_dir=run_dir,
        reload_module=module_path if reload else None,
    )
