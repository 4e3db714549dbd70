"""Compatibility path ``osmosis_ai.rollout.core.base`` (0.2.x): re-exports only."""

from osmosis_ai.rollout.agent_loop import (
    CompletionsResult,
    LLMClientProtocol,
    RolloutAgentLoop,
    RolloutContext,
    RolloutResult,
)

__all__ = ["CompletionsResult", "LLMClientProtocol", "RolloutAgentLoop", "RolloutContext", "RolloutResult"]
