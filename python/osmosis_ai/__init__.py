"""osmosis-ai: rewards, rubric judges, agent evals and pass@k for LLM post-training.

Importing the package is cheap: the public names below are loaded on first use (PEP 562), so
`osmosis --help` and `import osmosis_ai` do not pay for modules they do not touch. ``from osmosis_ai
import *`` works on the base install: ``report`` and ``compare`` (the ``report`` extra) are left out of
``__all__``; ``osmosis_ai.report(...)`` without the extra says what to install.
"""

from __future__ import annotations

import os as _os

# The Rust core allocates through mimalloc, which by default commits its arenas eagerly on a system that
# overcommits: the first pass over a 10k-line results log then left 8 MiB more resident (15 MiB at 100k
# lines), and the core's first allocations 4 MiB. Committed on demand instead. Read once, when the core
# loads; a value the user set is kept.
_os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")

from osmosis_ai._compat import install as _install_established_paths
from osmosis_ai._lazy import load_attribute
from osmosis_ai.errors import (
    MissingAPIKeyError,
    ModelNotFoundError,
    OsmosisError,
    OsmosisRolloutError,
    OsmosisServerError,
    OsmosisTimeoutError,
    OsmosisTransportError,
    OsmosisValidationError,
    ProviderRequestError,
    SignatureError,
)

_install_established_paths()  # osmosis_ai.utils, osmosis_ai.rollout.core, ...: see osmosis_ai._compat

# `typing` costs more to import than the rest of this module: the usual guard, without the import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from osmosis_ai.report import compare as compare
    from osmosis_ai.report import report as report
    from osmosis_ai.results import ResultComparison, ResultSummary, compare_results, read_results
    from osmosis_ai.rewards import osmosis_reward, osmosis_rubric
    from osmosis_ai.stats import load_results, summarize_results

# public name -> module that defines it
_LAZY: dict[str, str] = {
    # The version is compiled into the Rust core; loading the core only to print it would cost every import.
    "__version__": "osmosis_ai._version",
    "osmosis_reward": "osmosis_ai.rewards",
    "osmosis_rubric": "osmosis_ai.rewards",
    # The judge loads LiteLLM on first use.
    "evaluate_rubric": "osmosis_ai.rubric",
    "aevaluate_rubric": "osmosis_ai.rubric",
    "RubricResult": "osmosis_ai.rubric",
    # Statistics over results files (the Rust core); load_results imports polars when called.
    "summarize_results": "osmosis_ai.stats",
    "load_results": "osmosis_ai.stats",
    # The one result model of a results file, and the comparison of two (the Rust core).
    **dict.fromkeys(
        ["ResultComparison", "ResultSummary", "compare_results", "read_results"], "osmosis_ai.results"
    ),
    # Result pages: vl-convert loads when one is made.
    "report": "osmosis_ai.report",
    "compare": "osmosis_ai.report",
    # The rollout names load pydantic (and, for the client and server, httpx / FastAPI).
    **dict.fromkeys(
        [
            "CompletionsResult",
            "InitResponse",
            "OpenAIFunctionToolSchema",
            "OsmosisLLMClient",
            "RolloutAgentLoop",
            "RolloutContext",
            "RolloutMetrics",
            "RolloutRequest",
            "RolloutResponse",
            "RolloutResult",
            "create_app",
            "get_agent_loop",
            "list_agent_loops",
            "register_agent_loop",
        ],
        "osmosis_ai.rollout",
    ),
}

__all__ = [
    "CompletionsResult",
    "InitResponse",
    "MissingAPIKeyError",
    "ModelNotFoundError",
    "OpenAIFunctionToolSchema",
    "OsmosisError",
    "OsmosisLLMClient",
    "OsmosisRolloutError",
    "OsmosisServerError",
    "OsmosisTimeoutError",
    "OsmosisTransportError",
    "OsmosisValidationError",
    "ProviderRequestError",
    "ResultComparison",
    "ResultSummary",
    "RolloutAgentLoop",
    "RolloutContext",
    "RolloutMetrics",
    "RolloutRequest",
    "RolloutResponse",
    "RolloutResult",
    "RubricResult",
    "SignatureError",
    "__version__",
    "aevaluate_rubric",
    "compare_results",
    "create_app",
    "evaluate_rubric",
    "get_agent_loop",
    "list_agent_loops",
    "load_results",
    "osmosis_reward",
    "osmosis_rubric",
    "read_results",
    "register_agent_loop",
    "summarize_results",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _LAZY, name, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
