"""osmosis-ai: rewards, rubric judges, agent evals and pass@k for LLM post-training.

Importing the package is cheap: heavy dependencies load only inside the features that need them.
"""

from osmosis_ai._version import __version__
from osmosis_ai.errors import (
    MissingAPIKeyError,
    ModelNotFoundError,
    OsmosisError,
    ProviderRequestError,
    SignatureError,
)
from osmosis_ai.rewards import osmosis_reward, osmosis_rubric

__all__ = [
    "MissingAPIKeyError",
    "ModelNotFoundError",
    "OsmosisError",
    "ProviderRequestError",
    "SignatureError",
    "__version__",
    "osmosis_reward",
    "osmosis_rubric",
]

# Judge entry points load on first access so `import osmosis_ai` stays light (issue #5).
_LAZY = {"evaluate_rubric": "osmosis_ai.rubric", "aevaluate_rubric": "osmosis_ai.rubric"}
__all__ += list(_LAZY)


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'osmosis_ai' has no attribute {name!r}")
