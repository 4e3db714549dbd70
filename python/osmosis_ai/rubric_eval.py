"""Compatibility module: the established import path of the judge (``osmosis_ai.rubric_eval``).

New code can import from :mod:`osmosis_ai` or :mod:`osmosis_ai.rubric`; both paths give the same objects.
"""

from osmosis_ai.errors import MissingAPIKeyError, ModelNotFoundError, ProviderRequestError
from osmosis_ai.rubric.evaluate import ModelInfo, RewardRubricRunResult, aevaluate_rubric, evaluate_rubric
from osmosis_ai.rubric.judge import (
    DEFAULT_API_KEY_ENV,
    JudgeUnscoredError,
    ensure_api_key_available,
)
from osmosis_ai.rubric.judge_request import (
    DEFAULT_TIMEOUT as DEFAULT_REQUEST_TIMEOUT_SECONDS,
)

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_REQUEST_TIMEOUT_SECONDS",
    "JudgeUnscoredError",
    "MissingAPIKeyError",
    "ModelInfo",
    "ModelNotFoundError",
    "ProviderRequestError",
    "RewardRubricRunResult",
    "aevaluate_rubric",
    "ensure_api_key_available",
    "evaluate_rubric",
]
