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
