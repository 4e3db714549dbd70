"""Compatibility path ``osmosis_ai.rollout.eval.common`` (0.2.x): re-exports only."""

from osmosis_ai.datasets import DatasetReader
from osmosis_ai.errors import DatasetParseError, DatasetValidationError, ProviderError, ToolValidationError
from osmosis_ai.eval.llm_client import ExternalLLMClient
from osmosis_ai.eval.report import format_duration, format_tokens
from osmosis_ai.rollout.requests import REQUIRED_COLUMNS, dataset_row_to_request
from osmosis_ai.rollout.tools import validate_tools

__all__ = [
    "REQUIRED_COLUMNS",
    "DatasetParseError",
    "DatasetReader",
    "DatasetValidationError",
    "ExternalLLMClient",
    "ProviderError",
    "ToolValidationError",
    "dataset_row_to_request",
    "format_duration",
    "format_tokens",
    "validate_tools",
]
