"""Import path ``osmosis_ai.rollout.types`` (0.3): the rollout's data types, re-exported from their homes.

``RolloutStatus`` here is the 0.3 enum (``osmosis_ai.rollout.sample``), as in the established 0.3 package;
``osmosis_ai.rollout.RolloutStatus`` stays the 0.2 one.
"""

from osmosis_ai.rollout.types.config import AgentWorkflowConfig, BaseConfig, ConcurrencyConfig, GraderConfig
from osmosis_ai.rollout.types.output import AgentWorkflowOutput, Messages
from osmosis_ai.rollout.types.protocol import (
    CancelRolloutsRequest,
    CancelRolloutsResponse,
    GraderCompleteRequest,
    GraderInitRequest,
    GraderInitResponse,
    GraderStatus,
    RolloutCompleteRequest,
    RolloutInitRequest,
    RolloutInitResponse,
    RolloutStatusResponse,
)
from osmosis_ai.rollout.types.sample import (
    ExecutionRequest,
    ExecutionResult,
    MessageDict,
    RolloutErrorCategory,
    RolloutSample,
    RolloutStatus,
)

__all__ = [
    "AgentWorkflowConfig",
    "AgentWorkflowOutput",
    "BaseConfig",
    "CancelRolloutsRequest",
    "CancelRolloutsResponse",
    "ConcurrencyConfig",
    "ExecutionRequest",
    "ExecutionResult",
    "GraderCompleteRequest",
    "GraderConfig",
    "GraderInitRequest",
    "GraderInitResponse",
    "GraderStatus",
    "MessageDict",
    "Messages",
    "RolloutCompleteRequest",
    "RolloutErrorCategory",
    "RolloutInitRequest",
    "RolloutInitResponse",
    "RolloutSample",
    "RolloutStatus",
    "RolloutStatusResponse",
]
