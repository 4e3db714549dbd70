"""The remote rollout server (FastAPI): ``create_app`` and its state."""

from osmosis_ai.rollout.server.app import create_app
from osmosis_ai.rollout.server.state import AppState, RolloutRecord

__all__ = ["AppState", "RolloutRecord", "create_app"]
