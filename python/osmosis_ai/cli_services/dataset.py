"""Compatibility path ``osmosis_ai.cli_services.dataset`` (0.2.x): re-exports only.

``DatasetLoader`` is :class:`osmosis_ai.datasets.DatasetReader` and ``DatasetRecord`` is
:class:`osmosis_ai.rubric.records.RubricRecord`.
"""

from osmosis_ai.datasets import DatasetReader as DatasetLoader
from osmosis_ai.rubric.records import RubricRecord as DatasetRecord

__all__ = ["DatasetLoader", "DatasetRecord"]
