"""OpenAI grader configs (reinforcement fine-tuning / hosted evals) run locally.

- :mod:`.core`: :func:`load_grader` and :class:`Grader` (every grader type, checked when loaded).
- :mod:`.text`, :mod:`.models`, :mod:`.python_grader`, :mod:`.formula`, :mod:`.template`: the pieces.
- :mod:`.session`: grading a file of samples or a results log on the run engine, and the eval-function
  adapter that lets ``--eval-fn grader.json`` work wherever an eval function does.
"""

from osmosis_ai.graders.core import GRADER_TYPES, Grader, GradeResult, load_grader
from osmosis_ai.graders.models import ModelSettings
from osmosis_ai.graders.session import grade

__all__ = ["GRADER_TYPES", "GradeResult", "Grader", "ModelSettings", "grade", "load_grader"]
