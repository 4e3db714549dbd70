"""Compatibility path ``osmosis_ai.cli_services`` (0.2.x): re-exports only.

``RubricConfig`` is :class:`osmosis_ai.rubric.config.RubricEntry` and ``load_rubric_suite`` is
:func:`osmosis_ai.rubric.config.load_rubric_configs` (a dict of entries by rubric id).
"""

from osmosis_ai.errors import CLIError
from osmosis_ai.rubric.config import RubricEntry as RubricConfig
from osmosis_ai.rubric.config import load_rubric_configs as load_rubric_suite

__all__ = ["CLIError", "RubricConfig", "load_rubric_suite"]
