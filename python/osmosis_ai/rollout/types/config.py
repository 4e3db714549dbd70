"""Import path ``osmosis_ai.rollout.types.config`` (0.3): re-exports only."""

from osmosis_ai.rollout.workflow import AgentWorkflowConfig, BaseConfig, ConcurrencyConfig, GraderConfig

__all__ = ["AgentWorkflowConfig", "BaseConfig", "ConcurrencyConfig", "GraderConfig"]
