"""Import path ``osmosis_ai.rollout.types.protocol`` (0.3): re-exports only."""

from osmosis_ai.rollout.sample import GraderStatus
from osmosis_ai.rollout.server.protocol import (
    CancelRolloutsRequest,
    CancelRolloutsResponse,
    GraderCompleteRequest,
    GraderInitRequest,
    GraderInitResponse,
    RolloutCompleteRequest,
    RolloutInitRequest,
    RolloutInitResponse,
    RolloutStatusResponse,
)

__all__ = [
    "CancelRolloutsRequest",
    "CancelRolloutsResponse",
    "GraderCompleteRequest",
    "GraderInitRequest",
    "GraderInitResponse",
    "GraderStatus",
    "RolloutCompleteRequest",
    "RolloutInitRequest",
    "RolloutInitResponse",
    "RolloutStatusResponse",
]
