"""Compatibility path ``osmosis_ai.rollout.core.exceptions`` (0.2.x): re-exports only."""

from osmosis_ai.errors import (
    AgentLoopNotFoundError,
    OsmosisRolloutError,
    OsmosisServerError,
    OsmosisTimeoutError,
    OsmosisTransportError,
    OsmosisValidationError,
    ToolArgumentError,
    ToolExecutionError,
)

__all__ = [
    "AgentLoopNotFoundError",
    "OsmosisRolloutError",
    "OsmosisServerError",
    "OsmosisTimeoutError",
    "OsmosisTransportError",
    "OsmosisValidationError",
    "ToolArgumentError",
    "ToolExecutionError",
]
