"""Import path ``osmosis_ai.rollout.types.output`` (0.3): re-exports only."""

from osmosis_ai.rollout.workflow import AgentWorkflowOutput, Messages

__all__ = ["AgentWorkflowOutput", "Messages"]
