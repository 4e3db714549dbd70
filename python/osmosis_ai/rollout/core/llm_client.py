"""Compatibility path ``osmosis_ai.rollout.core.llm_client`` (0.2.x): re-exports only."""

from osmosis_ai.rollout.agent_loop import CompletionsResult, LLMClientProtocol

__all__ = ["CompletionsResult", "LLMClientProtocol"]
