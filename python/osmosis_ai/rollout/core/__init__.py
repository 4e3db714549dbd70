"""Compatibility path ``osmosis_ai.rollout.core`` (0.2.x): re-exports only.

The agent contract lives in :mod:`osmosis_ai.rollout.agent_loop`, the protocol types in
:mod:`osmosis_ai.rollout.schemas` and the errors in :mod:`osmosis_ai.errors`.
"""

from osmosis_ai.rollout.core.base import RolloutAgentLoop, RolloutContext, RolloutResult
from osmosis_ai.rollout.core.exceptions import (
    AgentLoopNotFoundError,
    OsmosisRolloutError,
    OsmosisServerError,
    OsmosisTimeoutError,
    OsmosisTransportError,
    OsmosisValidationError,
    ToolArgumentError,
    ToolExecutionError,
)
from osmosis_ai.rollout.core.llm_client import CompletionsResult, LLMClientProtocol
from osmosis_ai.rollout.core.schemas import (
    DEFAULT_MAX_METADATA_SIZE_BYTES,
    CompletionsChoice,
    CompletionsRequest,
    CompletionsResponse,
    CompletionUsage,
    InitResponse,
    MessageDict,
    OpenAIFunctionParametersSchema,
    OpenAIFunctionPropertySchema,
    OpenAIFunctionSchema,
    OpenAIFunctionToolSchema,
    RolloutMetrics,
    RolloutRequest,
    RolloutResponse,
    RolloutStatus,
    SamplingParamsDict,
    get_max_metadata_size_bytes,
    set_max_metadata_size_bytes,
)

__all__ = [
    "DEFAULT_MAX_METADATA_SIZE_BYTES",
    "AgentLoopNotFoundError",
    "CompletionUsage",
    "CompletionsChoice",
    "CompletionsRequest",
    "CompletionsResponse",
    "CompletionsResult",
    "InitResponse",
    "LLMClientProtocol",
    "MessageDict",
    "OpenAIFunctionParametersSchema",
    "OpenAIFunctionPropertySchema",
    "OpenAIFunctionSchema",
    "OpenAIFunctionToolSchema",
    "OsmosisRolloutError",
    "OsmosisServerError",
    "OsmosisTimeoutError",
    "OsmosisTransportError",
    "OsmosisValidationError",
    "RolloutAgentLoop",
    "RolloutContext",
    "RolloutMetrics",
    "RolloutRequest",
    "RolloutResponse",
    "RolloutResult",
    "RolloutStatus",
    "SamplingParamsDict",
    "ToolArgumentError",
    "ToolExecutionError",
    "get_max_metadata_size_bytes",
    "set_max_metadata_size_bytes",
]
