"""The rollout servers (FastAPI): ``create_app`` (0.2 agent loops) and ``create_rollout_server`` (0.3 backends)."""

from osmosis_ai.rollout.server.app import create_app
from osmosis_ai.rollout.server.rollout_server import ControllerAuth, create_rollout_server
from osmosis_ai.rollout.server.state import AppState, RolloutRecord

__all__ = ["AppState", "ControllerAuth", "RolloutRecord", "create_app", "create_rollout_server"]
