"""Compatibility path ``osmosis_ai.cli.errors`` (0.3.x): re-exports only."""

from osmosis_ai.errors import CLIError

__all__ = ["CLIError"]
