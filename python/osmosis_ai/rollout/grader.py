"""Import path ``osmosis_ai.rollout.grader`` (0.3, used by ``rollout init`` scaffolds): re-exports only."""

from osmosis_ai.rollout.workflow import Grader

__all__ = ["Grader"]
