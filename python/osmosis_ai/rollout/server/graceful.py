"""uvicorn's server as ``osmosis serve`` runs it: the connection gate, and a shutdown that keeps answering.

uvicorn closes its listening socket as soon as a signal arrives, so during the rollouts' grace period a new
init met "connection refused" instead of a 503 it could retry. Here the first SIGTERM or Ctrl+C only begins
the shutdown: the listener stays open, inits are answered 503 with ``Retry-After``, health and status are
answered, and running rollouts get what is left of their grace period; then uvicorn shuts down as usual.
A second Ctrl+C stops at once. The gate (:mod:`osmosis_ai.rollout.server.connections`) is built from the
app's settings and head check, also in the worker process ``--reload`` starts.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from types import FrameType
from typing import TYPE_CHECKING, Any

import uvicorn

from osmosis_ai.rollout.server.connections import (
    ConnectionGate,
    GateLimits,
    GuardedH11Protocol,
    fit_to_file_limit,
)

if TYPE_CHECKING:
    from osmosis_ai.rollout.agent_loop import RolloutAgentLoop
    from osmosis_ai.rollout.server.state import AppState
    from osmosis_ai.rollout.settings import RolloutSettings

__all__ = ["GatedServer", "gate_limits", "run_server"]

RELOAD_SPEC_ENV = "OSMOSIS_ROLLOUT_SERVE_SPEC"
# Seconds uvicorn waits for open HTTP requests at shutdown (rollouts themselves get shutdown_grace_seconds).
HTTP_SHUTDOWN_TIMEOUT_SECONDS = 10


def gate_limits(settings: RolloutSettings) -> GateLimits:
    """The gate's numbers from the server settings."""
    server = settings.server
    return GateLimits(
        head_timeout_seconds=server.head_timeout_seconds,
        max_connections=server.max_connections,
        max_untrusted=server.max_untrusted_connections,
        max_untrusted_per_address=server.max_untrusted_per_address,
    )


def _rollout_app(app: Any) -> Any:
    """The app ``create_app`` built, under the middleware uvicorn wraps it in (None if there is none)."""
    for _ in range(8):
        if app is None:
            return None
        state = getattr(app, "state", None)
        if getattr(state, "head_check", None) is not None:
            return app
        app = getattr(app, "app", None)
    return None


class GatedServer(uvicorn.Server):
    """uvicorn's ``Server`` with the gate installed and the draining shutdown (see the module docstring)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.stop_signal: int | None = None
        self._rollouts: AppState | None = None
        self._draining: asyncio.Task[None] | None = None

    async def startup(self, sockets: Any = None) -> None:
        app = _rollout_app(self.config.loaded_app)
        if app is not None:
            self._rollouts = app.state.rollout
            limits = fit_to_file_limit(gate_limits(app.state.rollout.settings))
            self.server_state.osmosis_gate = ConnectionGate(limits, app.state.head_check)  # type: ignore[attr-defined]
        await super().startup(sockets=sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.stop_signal is None:
            self.stop_signal = sig  # the next tick begins the drain
        elif sig == signal.SIGINT:
            self.force_exit = self.should_exit = True

    async def on_tick(self, counter: int) -> bool:
        if self.stop_signal is not None and self._draining is None:
            self._draining = asyncio.create_task(self._drain())
        return await super().on_tick(counter)

    async def _drain(self) -> None:
        if self._rollouts is not None:
            await self._rollouts.drain()
        self.should_exit = True


def run_server(
    agent_loop: RolloutAgentLoop,
    settings: RolloutSettings,
    *,
    host: str,
    port: int,
    log_level: str,
    api_key: str | None,
    debug_dir: str | None,
    reload_module: str | None,
) -> int | None:
    """Serves the agent loop until a signal stops it; returns that signal (None if it stopped otherwise).

    With ``reload_module`` uvicorn's reloader runs the server in a child process that rebuilds the app from
    ``module:attribute`` (see :mod:`osmosis_ai.rollout.server.factory`).
    """
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "access_log": log_level == "debug",
        "timeout_graceful_shutdown": HTTP_SHUTDOWN_TIMEOUT_SECONDS,
        # Idle ones are kept longer than clients keep them; the gate bounds every other kind.
        "timeout_keep_alive": settings.server.keep_alive_seconds,
        "http": GuardedH11Protocol,
    }
    if reload_module:
        from uvicorn.supervisors import ChangeReload

        os.environ[RELOAD_SPEC_ENV] = json.dumps(
            {"module": reload_module, "api_key": api_key, "debug_dir": debug_dir}
        )
        config = uvicorn.Config(
            "osmosis_ai.rollout.server.factory:app_from_environment",
            factory=True,
            reload=True,
            reload_dirs=[os.getcwd()],
            **options,
        )
        server = GatedServer(config)
        ChangeReload(config, target=server.run, sockets=[config.bind_socket()]).run()
        return None
    from osmosis_ai.rollout.server import create_app

    app = create_app(agent_loop, settings=settings, api_key=api_key, debug_dir=debug_dir)
    server = GatedServer(uvicorn.Config(app, **options))
    try:
        server.run()
    except KeyboardInterrupt as exc:  # before uvicorn took the signals over, or a second Ctrl+C / SIGTERM
        return getattr(exc, "signum", signal.SIGINT)  # the CLI's SIGTERM raises Terminated (its signum)
    return server.stop_signal
