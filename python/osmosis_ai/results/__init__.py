"""The one result model: what every surface shows about a results file, computed once in the Rust core.

:func:`read_results` summarises a results file of any kind the package writes (eval / test logs and
their ``-o`` JSON, eval rubric logs and ``-o``, an ``eval run`` directory's ``results.jsonl``, grade and
reward-probe logs) into a typed, versioned :class:`ResultSummary` (schema ``osmosis-result-summary``):
per model and score name the runs by outcome, the rows by category, scored statistics (None when nothing
was scored), pass@k / pass^k at every k up to the declared n with missing runs counted as did not pass
and the observed-only values beside them, intervals, durations, tokens and warnings.
:func:`compare_results` compares two such files (schema ``osmosis-result-comparison``).

The words (one meaning each): a run *errored*, was *unscored*, *passed* or *did not pass*
(:class:`RunOutcome`); a row *passed every attempt*, *some* or *none*, or is *errored* or *incomplete*
(:class:`RowOutcome`).
"""

from __future__ import annotations

from osmosis_ai.results._compare import (
    ComparedSide,
    Difference,
    Flips,
    ResultComparison,
    Verdict,
    compare_results,
)
from osmosis_ai.results._model import (
    Durations,
    Estimate,
    FunctionProbes,
    FunctionResult,
    InvocationResult,
    ModelResult,
    ProbeCount,
    ProbeExample,
    ResultSource,
    ResultSummary,
    ResultWarning,
    RowStatistics,
    RowTally,
    RunTally,
    read_results,
)
from osmosis_ai.results._vocabulary import COMPARISON_SCHEMA, RESULT_SCHEMA, RowOutcome, RunOutcome

__all__ = [
    "COMPARISON_SCHEMA",
    "RESULT_SCHEMA",
    "ComparedSide",
    "Difference",
    "Durations",
    "Estimate",
    "Flips",
    "FunctionProbes",
    "FunctionResult",
    "InvocationResult",
    "ModelResult",
    "ProbeCount",
    "ProbeExample",
    "ResultComparison",
    "ResultSource",
    "ResultSummary",
    "ResultWarning",
    "RowOutcome",
    "RowStatistics",
    "RowTally",
    "RunOutcome",
    "RunTally",
    "Verdict",
    "compare_results",
    "read_results",
]
