"""Compatibility path ``osmosis_ai.rollout.server.serve`` (0.2.x): re-exports only."""

from osmosis_ai.cli.validate import validate_and_report  # the report printer lives with the commands
from osmosis_ai.rollout.serve import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    ServeError,
    serve_agent_loop,
)

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "ServeError", "serve_agent_loop", "validate_and_report"]
