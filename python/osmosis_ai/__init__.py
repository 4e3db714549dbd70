"""osmosis-ai: rewards, rubric judges, agent evals and pass@k for LLM post-training.

Importing the package is cheap: heavy dependencies load only inside the features that need them.
"""

from osmosis_ai._version import __version__
from osmosis_ai.errors import (
    MissingAPIKeyError,
    ModelNotFoundError,
    OsmosisError,
    OsmosisRolloutError,
    OsmosisServerError,
    OsmosisTimeoutError,
    OsmosisTransportError,
    OsmosisValidationError,
    ProviderRequestError,
    SignatureError,
)
from osmosis_ai.rewards import osmosis_reward, osmosis_rubric

__all__ = [
    "CompletionsResult",
    "InitResponse",
    "MissingAPIKeyError",
    "ModelNotFoundError",
    "OpenAIFunctionToolSchema",
    "OsmosisError",
    "OsmosisLLMClient",
    "OsmosisRolloutError",
    "OsmosisServerError",
    "OsmosisTimeoutError",
    "OsmosisTransportError",
    "OsmosisValidationError",
    "ProviderRequestError",
    "RolloutAgentLoop",
    "RolloutContext",
    "RolloutMetrics",
    "RolloutRequest",
    "RolloutResponse",
    "RolloutResult",
    "SignatureError",
    "__version__",
    "create_app",
    "get_agent_loop",
    "list_agent_loops",
    "osmosis_reward",
    "osmosis_rubric",
    "register_agent_loop",
]

# Rollout names load pydantic (and, for the client and server, httpx / FastAPI): import them on first use.
_ROLLOUT_NAMES = frozenset(
    {
        "CompletionsResult",
        "InitResponse",
        "OpenAIFunctionToolSchema",
        "OsmosisLLMClient",
        "RolloutAgentLoop",
        "RolloutContext",
        "RolloutMetrics",
        "RolloutRequest",
        "RolloutResponse",
        "RolloutResult",
        "create_app",
        "get_agent_loop",
        "list_agent_loops",
        "register_agent_loop",
    }
)


def __getattr__(name: str) -> object:
    if name in _ROLLOUT_NAMES:
        import osmosis_ai.rollout

        return getattr(osmosis_ai.rollout, name)
    raise AttributeError(f"module 'osmosis_ai' has no attribute '{name}'")
