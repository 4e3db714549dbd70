"""Compatibility path ``osmosis_ai.rollout.server.api_key`` (0.2.x): re-exports only."""

from osmosis_ai.rollout.serve import generate_api_key

__all__ = ["generate_api_key"]
