"""LLM-as-judge: ``evaluate_rubric``, the judge prompt, YAML rubric configs and the eval-rubric engine.

Importing this package does not import LiteLLM; the first judge call does.
"""

from osmosis_ai.rubric.evaluate import (
    ModelInfo,
    RewardRubricRunResult,
    RubricResult,
    aevaluate_rubric,
    evaluate_rubric,
)
from osmosis_ai.rubric.judge import DEFAULT_API_KEY_ENV, JudgeUnscoredError, ensure_api_key_available

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "JudgeUnscoredError",
    "ModelInfo",
    "RewardRubricRunResult",
    "RubricResult",
    "aevaluate_rubric",
    "ensure_api_key_available",
    "evaluate_rubric",
]
