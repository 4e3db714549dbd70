"""Compatibility path ``osmosis_ai.rollout.mcp.agent_loop`` (0.2.x): re-exports only."""

from osmosis_ai.rollout.mcp.agent import MCPAgentLoop

__all__ = ["MCPAgentLoop"]
