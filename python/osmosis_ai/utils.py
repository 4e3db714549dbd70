"""Compatibility path ``osmosis_ai.utils`` (0.2.x): re-exports only."""

from osmosis_ai.rewards import osmosis_reward, osmosis_rubric

__all__ = ["osmosis_reward", "osmosis_rubric"]
