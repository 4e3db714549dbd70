"""``serve_agent_loop``: run the rollout server for an agent loop (what ``osmosis serve`` calls).

Secure by default: the server binds 127.0.0.1 unless a host is given, and requires an API key (one is
generated and printed when none is given). ``local_debug`` turns auth off and is only allowed on a
loopback address. Unless ``skip_register`` (or ``local_debug``), the server registers with the Osmosis
platform once it is up, which needs a login (``osmosis auth login`` or ``OSMOSIS_TOKEN``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai.errors import OsmosisRolloutError
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop
from osmosis_ai.rollout.validator import ValidationResult, validate_agent_loop

if TYPE_CHECKING:
    from osmosis_ai.rollout.settings import RolloutSettings

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "LOG_LEVELS",
    "ServeError",
    "generate_api_key",
    "is_loopback_host",
    "serve_agent_loop",
    "validate_and_report",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9000
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
# Seconds uvicorn waits for open HTTP requests at shutdown (rollouts themselves get shutdown_grace_seconds).
HTTP_SHUTDOWN_TIMEOUT_SECONDS = 10
RELOAD_SPEC_ENV = "OSMOSIS_ROLLOUT_SERVE_SPEC"


class ServeError(OsmosisRolloutError):
    """The server cannot start as asked; the message says what to change."""


def generate_api_key() -> str:
    """Returns a new random API key (``osm_rollout_`` + 43 URL-safe characters).

    Example:
        >>> generate_api_key().startswith("osm_rollout_")
        True
    """
    return "osm_rollout_" + secrets.token_urlsafe(32)


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1).

    Example:
        >>> is_loopback_host("127.0.0.1"), is_loopback_host("0.0.0.0")
        (True, False)
    """
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def validate_and_report(agent_loop: Any, verbose: bool = False) -> ValidationResult:
    """Validates an agent loop and prints the established report (success on stdout, failure on stderr).

    Example:
        >>> validate_and_report(my_agent, verbose=True)  # doctest: +SKIP
    """
    result = validate_agent_loop(agent_loop)
    if result.valid:
        click.secho(f"Agent loop '{result.agent_name}' validated successfully.", fg="green")
        click.echo(f"  - Tools: {result.tool_count}")
        click.echo(f"  - Warnings: {len(result.warnings)}")
        if verbose:
            for warning in result.warnings:
                click.echo(f"    - {warning}")
        return result
    click.secho(f"Agent loop validation failed with {len(result.errors)} error(s):", fg="red", err=True)
    for error in result.errors:
        click.echo(f"  - {error}", err=True)
    if verbose and result.warnings:
        click.echo(f"Warnings ({len(result.warnings)}):", err=True)
        for warning in result.warnings:
            click.echo(f"  - {warning}", err=True)
    return result


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


def register_when_up(platform: Any, host: str, port: int, name: str, key: str | None) -> threading.Thread:
    """Registers with the platform from a background thread once the server answers ``/health``.

    A failed registration is reported and the server keeps serving: it still works for a TrainGate that
    is pointed at it by hand.
    """
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.registration import register_rollout_server, reported_host, wait_until_healthy

    url, login = platform

    def run() -> None:
        if not wait_until_healthy(port):
            click.echo("Registration skipped: the server did not become healthy within 10 s.", err=True)
            return
        address = reported_host(host)
        try:
            env_token = getattr(login, "source", None) == "environment"
            with PlatformClient(url, token=login.token, env_token=env_token) as client:
                result = register_rollout_server(
                    client, host=address, port=port, agent_loop_name=name, api_key=key
                )
        except PlatformError as exc:
            click.echo(f"Registration with {url} failed: {exc} The server keeps running.", err=True)
            return
        if result.healthy:
            click.echo(
                f"[OK] Registered with the Osmosis platform as {address}:{port} (id {result.server_id})."
            )
        else:
            click.echo(
                f"Registered with the Osmosis platform, but its health check of {address}:{port} failed"
                f" ({result.detail or 'unreachable'}): make sure the platform can reach this address.",
                err=True,
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


def _print_panel(
    name: str, host: str, port: int, key_note: str, registration: str, debug_dir: str | None
) -> None:
    click.echo("RolloutServer")
    click.echo(f"  Agent:        {name}")
    click.echo(f"  Address:      http://{host}:{port}")
    click.echo(f"  API Key:      {key_note}")
    click.echo(f"  Registration: {registration}")
    if debug_dir:
        click.echo(f"  Debug Log:    {debug_dir}/")


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
) -> None:
    """Validates the agent loop and serves it with uvicorn until interrupted.

    Args:
        agent_loop: The agent loop instance.
        host: Interface to bind; 127.0.0.1 unless given.
        port: TCP port.
        validate: Run :func:`validate_agent_loop` first and refuse an invalid agent.
        log_level: uvicorn log level; ``debug`` also logs every request.
        reload: Restart on code changes (needs ``module_path``).
        settings: Rollout settings; the process-wide ones when omitted.
        skip_register: Serve without registering with the platform (``local_debug`` implies it).
        api_key: The key TrainGate must send; generated and printed when omitted.
        local_debug: No auth; only on a loopback host.
        debug_dir: Base directory for per-rollout event logs (a ``<unix time>/`` subdirectory is made).
        module_path: ``module:attribute`` of the agent, for ``reload``.
        platform_url: The platform to register with (default: ``OSMOSIS_PLATFORM_URL`` or the hosted one).

    Raises:
        ServeError: Options that cannot work together, missing server dependencies, no login to register.
        AgentLoopValidationError: The agent loop is invalid.
    """
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
        validate_and_report(agent_loop).raise_if_invalid()
    _check_port_free(host, port)
    if local_debug:
        key, key_note = None, "(disabled - local debug)"
    elif api_key:
        key, key_note = api_key, "(provided)"
    else:
        key = generate_api_key()
        key_note = f"{key}\n                (generated; TrainGate must send 'Authorization: Bearer <key>')"
    run_dir = _debug_dir(debug_dir)
    if platform is not None:
        registration = f"with {platform[0]} once the server is up"
    else:
        registration = "skipped (local debug)" if local_debug else "skipped (--skip-register)"
    _print_panel(agent_loop.name, host, port, key_note, registration, run_dir)

    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "access_log": log_level == "debug",
        "timeout_graceful_shutdown": HTTP_SHUTDOWN_TIMEOUT_SECONDS,
        # Open connections are capped, so slow clients cannot pin the server (request bodies have their
        # own size and read-time limits in the app); idle ones are kept longer than clients keep them.
        "timeout_keep_alive": settings.server.keep_alive_seconds,
        "limit_concurrency": settings.server.max_connections,
    }
    if platform is not None:
        register_when_up(platform, host, port, agent_loop.name, key)
    with _stopped_by_signals():
        _run_uvicorn(agent_loop, settings, key, run_dir, module_path if reload else None, options)
    click.echo("RolloutServer stopped.")


class _Stop(Exception):
    """SIGTERM arrived; raised from the signal handler uvicorn restores and re-raises into at exit."""


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop(signum)


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """Turns the signal uvicorn re-raises after its graceful shutdown into a normal return."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_stop) if main else None
    try:
        yield
    except (KeyboardInterrupt, _Stop):
        pass
    finally:
        if main:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _run_uvicorn(
    agent_loop: RolloutAgentLoop,
    settings: RolloutSettings | None,
    key: str | None,
    run_dir: str | None,
    reload_module: str | None,
    options: dict[str, Any],
) -> None:
    import uvicorn

    if reload_module:
        os.environ[RELOAD_SPEC_ENV] = json.dumps(
            {"module": reload_module, "api_key": key, "debug_dir": run_dir}
        )
        uvicorn.run(
            "osmosis_ai.rollout.server.factory:app_from_environment",
            factory=True,
            reload=True,
            reload_dirs=[os.getcwd()],
            **options,
        )
        return
    from osmosis_ai.rollout.server import create_app

    app = create_app(agent_loop, settings=settings, api_key=key, debug_dir=run_dir)
    uvicorn.run(app, **options)
