"""Compatibility path ``osmosis_ai.eval.rubric`` (0.3.x): re-exports only.

The judge lives in :mod:`osmosis_ai.rubric`; ``evaluate_rubric`` here is the same function, which takes
the 0.3 form (``await evaluate_rubric(solution_str=..., rubric=..., model="openai/gpt-5-mini")``).
"""

from osmosis_ai.errors import MissingAPIKeyError, ModelNotFoundError, ProviderRequestError
from osmosis_ai.rubric.evaluate import RubricResult, evaluate_rubric

__all__ = [
    "MissingAPIKeyError",
    "ModelNotFoundError",
    "ProviderRequestError",
    "RubricResult",
    "evaluate_rubric",
]
