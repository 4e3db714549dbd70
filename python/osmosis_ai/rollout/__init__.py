"""The remote-rollout SDK: the 0.2 agent loop and the 0.3 AgentWorkflow/Grader API, protocol schemas, servers.

0.2 and 0.3 both name a ``RolloutContext`` and a ``RolloutStatus``; here they stay the 0.2 ones (the agent
loop's context and protocol enum, which existing code imports). The 0.3 ones live at
``osmosis_ai.rollout.context.RolloutContext`` (usually reached through ``get_rollout_context()``) and
``osmosis_ai.rollout.sample.RolloutStatus``.

``import osmosis_ai.rollout`` loads pydantic only; the TrainGate client (httpx) and the server (FastAPI,
uvicorn) load on first use of ``OsmosisLLMClient``, ``create_app`` or ``serve_agent_loop``. ``__all__`` is
the established package's list (plus our additions), so ``from osmosis_ai.rollout import *`` gives the
names users' code expects; that star-import loads the lazy modules too.
"""

from __future__ import annotations

from typing import Any

from osmosis_ai._lazy import load_attribute
from osmosis_ai.errors import (
    AgentLoopNotFoundError,
    OsmosisRolloutError,
    OsmosisServerError,
    OsmosisTimeoutError,
    OsmosisTransportError,
    OsmosisValidationError,
    ToolArgumentError,
    ToolExecutionError,
    ToolValidationError,
)
from osmosis_ai.rollout.agent_loop import (
    CompletionsResult,
    LLMClientProtocol,
    RolloutAgentLoop,
    RolloutContext,
    RolloutResult,
)
from osmosis_ai.rollout.backend import ExecutionBackend, LocalBackend
from osmosis_ai.rollout.context import AgentWorkflowContext, GraderContext, SampleSource, get_rollout_context
from osmosis_ai.rollout.loader import AgentLoopLoadError, load_agent_loop
from osmosis_ai.rollout.messages import (
    count_messages_by_role,
    get_message_content,
    get_message_role,
    is_assistant_message,
    is_tool_message,
    is_user_message,
    normalize_stop,
    parse_tool_calls,
)
from osmosis_ai.rollout.network import (
    PublicIPDetectionError,
    detect_public_ip,
    is_private_ip,
    is_valid_hostname_or_ip,
    validate_ipv4,
)
from osmosis_ai.rollout.registry import (
    AgentLoopRegistry,
    get_agent_loop,
    list_agent_loops,
    register_agent_loop,
    unregister_agent_loop,
)
from osmosis_ai.rollout.requests import dataset_row_to_request
from osmosis_ai.rollout.sample import (
    ExecutionRequest,
    ExecutionResult,
    GraderStatus,
    RolloutErrorCategory,
    RolloutSample,
)
from osmosis_ai.rollout.schemas import (
    DEFAULT_MAX_METADATA_SIZE_BYTES,
    CompletionsChoice,
    CompletionsRequest,
    CompletionsResponse,
    CompletionUsage,
    InitResponse,
    MessageDict,
    OpenAIFunctionCallSchema,
    OpenAIFunctionParametersSchema,
    OpenAIFunctionParsedSchema,
    OpenAIFunctionPropertySchema,
    OpenAIFunctionSchema,
    OpenAIFunctionToolCall,
    OpenAIFunctionToolSchema,
    RolloutMetrics,
    RolloutRequest,
    RolloutResponse,
    RolloutStatus,
    SamplingParamsDict,
    ToolResponse,
    get_max_metadata_size_bytes,
    set_max_metadata_size_bytes,
)
from osmosis_ai.rollout.tools import (
    create_tool_error_result,
    create_tool_result,
    execute_tool_calls,
    get_tool_call_info,
    parse_tool_arguments,
    serialize_tool_result,
    validate_tools,
)
from osmosis_ai.rollout.validator import (
    AgentLoopValidationError,
    ValidationError,
    ValidationResult,
    validate_agent_loop,
)
from osmosis_ai.rollout.workflow import (
    AgentWorkflow,
    AgentWorkflowConfig,
    AgentWorkflowOutput,
    BaseConfig,
    ConcurrencyConfig,
    Grader,
    GraderConfig,
)

# name -> module; imported on first attribute access (httpx / FastAPI / uvicorn stay unloaded until then).
_LAZY = {
    "OsmosisLLMClient": "osmosis_ai.rollout.client",
    "create_app": "osmosis_ai.rollout.server",
    "AppState": "osmosis_ai.rollout.server",
    "serve_agent_loop": "osmosis_ai.rollout.serve",
    "validate_and_report": "osmosis_ai.cli.validate",
    "ServeError": "osmosis_ai.rollout.serve",
    "DEFAULT_HOST": "osmosis_ai.rollout.serve",
    "DEFAULT_PORT": "osmosis_ai.rollout.serve",
    "RolloutSettings": "osmosis_ai.rollout.settings",
    "RolloutClientSettings": "osmosis_ai.rollout.settings",
    "RolloutServerSettings": "osmosis_ai.rollout.settings",
    "get_settings": "osmosis_ai.rollout.settings",
    "configure": "osmosis_ai.rollout.settings",
    "reset_settings": "osmosis_ai.rollout.settings",
}


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _LAZY, name, globals())


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_MAX_METADATA_SIZE_BYTES",
    "DEFAULT_PORT",
    "AgentLoopLoadError",
    "AgentLoopNotFoundError",
    "AgentLoopRegistry",
    "AgentLoopValidationError",
    "AgentWorkflow",
    "AgentWorkflowConfig",
    "AgentWorkflowContext",
    "AgentWorkflowOutput",
    "BaseConfig",
    "CompletionUsage",
    "CompletionsChoice",
    "CompletionsRequest",
    "CompletionsResponse",
    "CompletionsResult",
    "ConcurrencyConfig",
    "ExecutionBackend",
    "ExecutionRequest",
    "ExecutionResult",
    "Grader",
    "GraderConfig",
    "GraderContext",
    "GraderStatus",
    "InitResponse",
    "LLMClientProtocol",
    "LocalBackend",
    "MessageDict",
    "OpenAIFunctionCallSchema",
    "OpenAIFunctionParametersSchema",
    "OpenAIFunctionParsedSchema",
    "OpenAIFunctionPropertySchema",
    "OpenAIFunctionSchema",
    "OpenAIFunctionToolCall",
    "OpenAIFunctionToolSchema",
    "OsmosisLLMClient",
    "OsmosisRolloutError",
    "OsmosisServerError",
    "OsmosisTimeoutError",
    "OsmosisTransportError",
    "OsmosisValidationError",
    "PublicIPDetectionError",
    "RolloutAgentLoop",
    "RolloutClientSettings",
    "RolloutContext",
    "RolloutErrorCategory",
    "RolloutMetrics",
    "RolloutRequest",
    "RolloutResponse",
    "RolloutResult",
    "RolloutSample",
    "RolloutServerSettings",
    "RolloutSettings",
    "RolloutStatus",
    "SampleSource",
    "SamplingParamsDict",
    "ServeError",
    "ToolArgumentError",
    "ToolExecutionError",
    "ToolResponse",
    "ToolValidationError",
    "ValidationError",
    "ValidationResult",
    "configure",
    "count_messages_by_role",
    "create_app",
    "create_tool_error_result",
    "create_tool_result",
    "dataset_row_to_request",
    "detect_public_ip",
    "execute_tool_calls",
    "get_agent_loop",
    "get_max_metadata_size_bytes",
    "get_message_content",
    "get_message_role",
    "get_rollout_context",
    "get_settings",
    "get_tool_call_info",
    "is_assistant_message",
    "is_private_ip",
    "is_tool_message",
    "is_user_message",
    "is_valid_hostname_or_ip",
    "list_agent_loops",
    "load_agent_loop",
    "normalize_stop",
    "parse_tool_arguments",
    "parse_tool_calls",
    "register_agent_loop",
    "reset_settings",
    "serialize_tool_result",
    "serve_agent_loop",
    "set_max_metadata_size_bytes",
    "unregister_agent_loop",
    "validate_agent_loop",
    "validate_and_report",
    "validate_ipv4",
    "validate_tools",
]
