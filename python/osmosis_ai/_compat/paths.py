"""Every established import path this package keeps for users' code, as data: path -> name -> home.

A home is ``module`` (the name is the same there) or ``module:attribute`` (an established alias). The
paths come from the established 0.2.x and 0.3.x packages (``spec/compat-surface.md``); none of them is
a module of this package, and nothing here imports anything (see :mod:`osmosis_ai._compat`).
"""

from __future__ import annotations

__all__ = ["ESTABLISHED", "NOT_PROVIDED", "PACKAGES"]


def _at(home: str, names: str) -> dict[str, str]:
    """``{name: home}`` for the whitespace-separated ``names``."""
    return dict.fromkeys(names.split(), home)


_ERRORS = "osmosis_ai.errors"
_JUDGE_ERRORS = _at(_ERRORS, "MissingAPIKeyError ModelNotFoundError ProviderRequestError")
_ROLLOUT_ERRORS = _at(
    _ERRORS,
    "AgentLoopNotFoundError OsmosisRolloutError OsmosisServerError OsmosisTimeoutError OsmosisTransportError "
    "OsmosisValidationError ToolArgumentError ToolExecutionError",
)
_LOOP = _at("osmosis_ai.rollout.agent_loop", "CompletionsResult LLMClientProtocol")
_LOOP_BASE = {
    **_LOOP,
    **_at("osmosis_ai.rollout.agent_loop", "RolloutAgentLoop RolloutContext RolloutResult"),
}
_SCHEMAS = _at(
    "osmosis_ai.rollout.schemas",
    "DEFAULT_MAX_METADATA_SIZE_BYTES CompletionUsage CompletionsChoice CompletionsRequest CompletionsResponse "
    "InitResponse MessageDict OpenAIFunctionParametersSchema OpenAIFunctionPropertySchema OpenAIFunctionSchema "
    "OpenAIFunctionToolSchema RolloutMetrics RolloutRequest RolloutResponse RolloutStatus SamplingParamsDict "
    "get_max_metadata_size_bytes set_max_metadata_size_bytes",
)
_SETTINGS = _at(
    "osmosis_ai.rollout.settings",
    "RolloutClientSettings RolloutServerSettings RolloutSettings configure get_settings reset_settings",
)
_WORKFLOW_CONFIG = _at(
    "osmosis_ai.rollout.workflow", "AgentWorkflowConfig BaseConfig ConcurrencyConfig GraderConfig"
)
_WORKFLOW_OUTPUT = _at("osmosis_ai.rollout.workflow", "AgentWorkflowOutput Messages")
_PROTOCOL = {
    **_at("osmosis_ai.rollout.sample", "GraderStatus"),
    **_at(
        "osmosis_ai.rollout.server.protocol",
        "CancelRolloutsRequest CancelRolloutsResponse GraderCompleteRequest GraderInitRequest GraderInitResponse "
        "RolloutCompleteRequest RolloutInitRequest RolloutInitResponse RolloutStatusResponse",
    ),
}
# 0.3's RolloutStatus: the enum of osmosis_ai.rollout.sample (osmosis_ai.rollout.RolloutStatus is 0.2's).
_SAMPLE = _at(
    "osmosis_ai.rollout.sample",
    "ExecutionRequest ExecutionResult MessageDict RolloutErrorCategory RolloutSample RolloutStatus",
)
_RUBRIC_TYPES = {**_JUDGE_ERRORS, **_at("osmosis_ai.rubric.evaluate", "ModelInfo RewardRubricRunResult")}
_RUBRIC_03 = {**_JUDGE_ERRORS, **_at("osmosis_ai.rubric.evaluate", "RubricResult")}

ESTABLISHED: dict[str, dict[str, str]] = {
    # 0.2.x
    "osmosis_ai.utils": _at("osmosis_ai.rewards", "osmosis_reward osmosis_rubric"),
    "osmosis_ai.consts": {
        "PACKAGE_VERSION": "osmosis_ai._version:__version__",
        "package_name": "osmosis_ai._version:DISTRIBUTION",
    },
    "osmosis_ai.rubric_types": _RUBRIC_TYPES,
    "osmosis_ai.rubric_eval": {
        **_RUBRIC_TYPES,
        **_at("osmosis_ai.rubric.evaluate", "aevaluate_rubric evaluate_rubric"),
        **_at("osmosis_ai.rubric.judge", "DEFAULT_API_KEY_ENV JudgeUnscoredError ensure_api_key_available"),
        "DEFAULT_REQUEST_TIMEOUT_SECONDS": "osmosis_ai.rubric.judge_request:DEFAULT_TIMEOUT",
    },
    "osmosis_ai.cli_services": {
        "CLIError": _ERRORS,
        "RubricConfig": "osmosis_ai.rubric.config:RubricEntry",
        "load_rubric_suite": "osmosis_ai.rubric.config:load_rubric_configs",
    },
    "osmosis_ai.cli_services.dataset": {
        "DatasetLoader": "osmosis_ai.rubric.records:RubricRecordLoader",
        "DatasetRecord": "osmosis_ai.rubric.records:RubricRecord",
    },
    "osmosis_ai.rollout.utils": _at(
        "osmosis_ai.rollout.messages",
        "count_messages_by_role get_message_content get_message_role is_assistant_message is_tool_message "
        "is_user_message normalize_stop parse_tool_calls",
    ),
    "osmosis_ai.rollout.core": {**_LOOP_BASE, **_ROLLOUT_ERRORS, **_SCHEMAS},
    "osmosis_ai.rollout.core.base": _LOOP_BASE,
    "osmosis_ai.rollout.core.exceptions": _ROLLOUT_ERRORS,
    "osmosis_ai.rollout.core.llm_client": _LOOP,
    "osmosis_ai.rollout.core.schemas": {
        **_SCHEMAS,
        **_at(
            "osmosis_ai.rollout.schemas",
            "OpenAIFunctionCallSchema OpenAIFunctionParsedSchema OpenAIFunctionToolCall ToolResponse",
        ),
    },
    "osmosis_ai.rollout.config": _SETTINGS,
    "osmosis_ai.rollout.config.settings": _SETTINGS,
    "osmosis_ai.rollout.eval": {},
    "osmosis_ai.rollout.eval.common": {
        **_at(_ERRORS, "DatasetParseError DatasetValidationError ProviderError ToolValidationError"),
        "DatasetReader": "osmosis_ai.datasets",
        "ExternalLLMClient": "osmosis_ai.eval.llm_client",
        **_at("osmosis_ai.rollout.requests", "REQUIRED_COLUMNS dataset_row_to_request"),
        **_at("osmosis_ai.eval.report", "format_duration format_tokens"),
        "validate_tools": "osmosis_ai.rollout.tools",
    },
    "osmosis_ai.rollout.eval.evaluation": {
        "EvalFnError": _ERRORS,
        "EvalFnWrapper": "osmosis_ai.eval.functions:EvalFunction",
        "EvalRunner": "osmosis_ai.eval.runner:AgentExecutor",
        "load_eval_fns": "osmosis_ai.eval.functions:load_eval_functions",
    },
    "osmosis_ai.rollout.eval.test_mode": {
        "InteractiveRunner": "osmosis_ai.eval.interactive:InteractiveSession",
        "LocalTestRunner": "osmosis_ai.eval.runner:AgentExecutor",
    },
    "osmosis_ai.rollout.mcp.agent_loop": _at("osmosis_ai.rollout.mcp.agent", "MCPAgentLoop"),
    "osmosis_ai.rollout.server.api_key": _at("osmosis_ai.rollout.serve", "generate_api_key"),
    "osmosis_ai.rollout.server.serve": _at(
        "osmosis_ai.rollout.serve",
        "DEFAULT_HOST DEFAULT_PORT ServeError serve_agent_loop validate_and_report",
    ),
    # 0.3.x
    "osmosis_ai.cli.errors": _at(_ERRORS, "CLIError"),
    "osmosis_ai.cli.test_interactive": _at("osmosis_ai.eval.interactive", "InteractiveSession"),
    "osmosis_ai.eval.rubric": {**_RUBRIC_03, "evaluate_rubric": "osmosis_ai.rubric.evaluate"},
    "osmosis_ai.eval.rubric.types": _RUBRIC_03,
    "osmosis_ai.rollout.agent_workflow": _at("osmosis_ai.rollout.workflow", "AgentWorkflow"),
    "osmosis_ai.rollout.grader": _at("osmosis_ai.rollout.workflow", "Grader"),
    "osmosis_ai.rollout.types": {**_WORKFLOW_CONFIG, **_WORKFLOW_OUTPUT, **_PROTOCOL, **_SAMPLE},
    "osmosis_ai.rollout.types.config": _WORKFLOW_CONFIG,
    "osmosis_ai.rollout.types.output": _WORKFLOW_OUTPUT,
    "osmosis_ai.rollout.types.protocol": _PROTOCOL,
    "osmosis_ai.rollout.types.sample": _SAMPLE,
}

# The established paths that were packages (``import a.b.c`` of a submodule needs its parent's __path__).
PACKAGES = frozenset(
    [
        "osmosis_ai.cli_services",
        "osmosis_ai.eval.rubric",
        "osmosis_ai.rollout.config",
        "osmosis_ai.rollout.core",
        "osmosis_ai.rollout.eval",
        "osmosis_ai.rollout.eval.common",
        "osmosis_ai.rollout.eval.evaluation",
        "osmosis_ai.rollout.eval.test_mode",
        "osmosis_ai.rollout.types",
    ]
)

# Established paths this package does not provide, with what to use instead (raised as ModuleNotFoundError).
NOT_PROVIDED: dict[str, str] = {
    "osmosis_ai.rollout.backend.harbor": (
        "osmosis_ai.rollout.backend.harbor (HarborBackend, TaskMode) is not part of this osmosis-ai: it runs "
        "agents in registry containers. Use osmosis_ai.rollout.LocalBackend, `osmosis eval run --backend ray`, "
        "or your own ExecutionBackend behind create_rollout_server."
    ),
}
