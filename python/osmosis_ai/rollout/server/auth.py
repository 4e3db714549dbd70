"""Import path ``osmosis_ai.rollout.server.auth`` (0.3): re-exports only."""

from osmosis_ai.rollout.server.rollout_server import ControllerAuth

__all__ = ["ControllerAuth"]
