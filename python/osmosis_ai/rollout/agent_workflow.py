"""Import path ``osmosis_ai.rollout.agent_workflow`` (0.3, used by ``rollout init`` scaffolds): re-exports only."""

from osmosis_ai.rollout.workflow import AgentWorkflow

__all__ = ["AgentWorkflow"]
