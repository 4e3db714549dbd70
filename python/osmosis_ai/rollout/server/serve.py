"""Compatibility path ``osmosis_ai.rollout.server.serve`` (0.2.x): re-exports only."""

from osmosis_ai.rollout.serve import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    ServeError,
    serve_agent_loop,
    validate_and_report,
)

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "ServeError", "serve_agent_loop", "validate_and_report"]
