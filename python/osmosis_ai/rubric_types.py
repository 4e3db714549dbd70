"""Compatibility module: the established home of the judge types and errors."""

from osmosis_ai.errors import MissingAPIKeyError, ModelNotFoundError, ProviderRequestError
from osmosis_ai.rubric.evaluate import ModelInfo, RewardRubricRunResult

__all__ = [
    "MissingAPIKeyError",
    "ModelInfo",
    "ModelNotFoundError",
    "ProviderRequestError",
    "RewardRubricRunResult",
]
