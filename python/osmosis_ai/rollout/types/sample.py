"""Import path ``osmosis_ai.rollout.types.sample`` (0.3): re-exports only."""

from osmosis_ai.rollout.sample import (
    ExecutionRequest,
    ExecutionResult,
    MessageDict,
    RolloutErrorCategory,
    RolloutSample,
    RolloutStatus,
)

__all__ = [
    "ExecutionRequest",
    "ExecutionResult",
    "MessageDict",
    "RolloutErrorCategory",
    "RolloutSample",
    "RolloutStatus",
]
