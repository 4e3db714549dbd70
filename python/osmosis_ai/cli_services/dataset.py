"""Compatibility path ``osmosis_ai.cli_services.dataset`` (0.2.x): re-exports only.

``DatasetLoader`` is :class:`osmosis_ai.rubric.records.RubricRecordLoader` and ``DatasetRecord`` is
:class:`osmosis_ai.rubric.records.RubricRecord`.
"""

from osmosis_ai.rubric.records import RubricRecord as DatasetRecord
from osmosis_ai.rubric.records import RubricRecordLoader as DatasetLoader

__all__ = ["DatasetLoader", "DatasetRecord"]
