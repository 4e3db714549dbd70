"""Compatibility path ``osmosis_ai.eval.rubric.types`` (0.3.x): re-exports only."""

from osmosis_ai.errors import MissingAPIKeyError, ModelNotFoundError, ProviderRequestError
from osmosis_ai.rubric.evaluate import RubricResult

__all__ = ["MissingAPIKeyError", "ModelNotFoundError", "ProviderRequestError", "RubricResult"]
