"""Compatibility path ``osmosis_ai.rollout.eval.evaluation`` (0.2.x): re-exports only.

``EvalFnWrapper`` is :class:`osmosis_ai.eval.functions.EvalFunction` and ``load_eval_fns`` is
:func:`osmosis_ai.eval.functions.load_eval_functions` under their established names; ``EvalRunner`` is
:class:`osmosis_ai.eval.runner.AgentExecutor`, the eval work of one item on the run engine.
"""

from osmosis_ai.errors import EvalFnError
from osmosis_ai.eval.functions import EvalFunction as EvalFnWrapper
from osmosis_ai.eval.functions import load_eval_functions as load_eval_fns
from osmosis_ai.eval.runner import AgentExecutor as EvalRunner

__all__ = ["EvalFnError", "EvalFnWrapper", "EvalRunner", "load_eval_fns"]
