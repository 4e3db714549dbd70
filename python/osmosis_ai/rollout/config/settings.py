"""Compatibility path ``osmosis_ai.rollout.config.settings`` (0.2.x): re-exports only."""

from osmosis_ai.rollout.settings import (
    RolloutClientSettings,
    RolloutServerSettings,
    RolloutSettings,
    configure,
    get_settings,
    reset_settings,
)

__all__ = [
    "RolloutClientSettings",
    "RolloutServerSettings",
    "RolloutSettings",
    "configure",
    "get_settings",
    "reset_settings",
]
