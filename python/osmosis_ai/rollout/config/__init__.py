"""Compatibility path ``osmosis_ai.rollout.config`` (0.2.x): re-exports only.

The settings are defined in :mod:`osmosis_ai.rollout.settings`.
"""

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
