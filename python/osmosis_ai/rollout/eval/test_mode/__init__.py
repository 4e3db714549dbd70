"""Compatibility path ``osmosis_ai.rollout.eval.test_mode`` (0.2.x): re-exports only.

Test mode runs on the run engine (:class:`osmosis_ai.eval.runner.AgentExecutor` with ``mode="test"``);
the interactive stepper is the one ``osmosis test -i`` uses.
"""

from osmosis_ai.cli.test_interactive import InteractiveSession as InteractiveRunner
from osmosis_ai.eval.runner import AgentExecutor as LocalTestRunner

__all__ = ["InteractiveRunner", "LocalTestRunner"]
