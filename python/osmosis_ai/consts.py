"""Compatibility path ``osmosis_ai.consts`` (0.2.x): re-exports only."""

from osmosis_ai._version import __version__ as PACKAGE_VERSION

package_name = "osmosis-ai"

__all__ = ["PACKAGE_VERSION", "package_name"]
