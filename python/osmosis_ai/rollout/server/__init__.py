"""The rollout servers (FastAPI): ``create_app`` (0.2 agent loops) and ``create_rollout_server`` (0.3 backends).

The names load on first use, so ``osmosis_ai.rollout.server.protocol`` (the 0.3 wire models) imports without
FastAPI; without the ``server`` extra the first use says what to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from osmosis_ai._lazy import load_attribute

if TYPE_CHECKING:
    from osmosis_ai.rollout.server.app import create_app
    from osmosis_ai.rollout.server.auth import ControllerAuth
    from osmosis_ai.rollout.server.rollout_server import create_rollout_server
    from osmosis_ai.rollout.server.state import AppState, RolloutRecord

_LAZY = {
    "create_app": "osmosis_ai.rollout.server.app",
    "ControllerAuth": "osmosis_ai.rollout.server.auth",
    "create_rollout_server": "osmosis_ai.rollout.server.rollout_server",
    "AppState": "osmosis_ai.rollout.server.state",
    "RolloutRecord": "osmosis_ai.rollout.server.state",
}


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _LAZY, name, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = ["AppState", "ControllerAuth", "RolloutRecord", "create_app", "create_rollout_server"]
