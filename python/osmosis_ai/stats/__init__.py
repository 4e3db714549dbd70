"""Statistics over eval results: pass@k, pass^k, aggregates and confidence intervals over rows.

A *row* is one prompt; its *attempts* are the runs made for it. ``n`` is a row's number of attempts and
``c`` how many passed (score >= ``pass_threshold``). The numbers are computed by the Rust core
(``rust/src/stats/``), exactly and without building binomial coefficients:

* ``pass@k = 1 - C(n-c, k) / C(n, k)``: the chance that at least one of k attempts drawn without
  replacement passes (the unbiased estimator);
* ``pass^k = C(c, k) / C(n, k)``: the chance that all k of them pass.

Unlike common helpers, ``k > n``, ``c > n`` and negative counts are errors (:class:`StatsError`, a
``ValueError``), never a silent 1.0, and NaN or infinite scores are refused with the row that holds
them unless you ask for them to count as failed attempts.

Results files (the results log, the ``-o`` JSON of ``eval`` and ``eval-rubric``) are summarised by
:func:`summarize_results` / :func:`summarize_results_by_model` and loaded for analysis by
:func:`load_results`. An eval function that raised is never a score: it is counted as an error and left
out of that function's statistics. What every surface shows about a results file (runs by outcome, rows
by category, honest intervals, warnings) is the one result model: :func:`osmosis_ai.results.read_results`.
"""

from __future__ import annotations

from osmosis_ai._stats_types import Comparison, Interval, ManyEstimate, Summary
from osmosis_ai.stats._aggregator import (
    DEFAULT_KS,
    Aggregator,
    FailedPolicy,
    NonFinitePolicy,
    quantiles,
    score_median,
    score_moments,
    score_statistics,
    summarize,
)
from osmosis_ai.stats._agreement import Agreement, SignChanges, advantage_sign_changes, agreement
from osmosis_ai.stats._estimators import pass_at_k, pass_at_k_many, pass_hat_k, pass_hat_k_many
from osmosis_ai.stats._frame import LoadedResults, load_results
from osmosis_ai.stats._intervals import IntervalMethod, compare, confidence_interval
from osmosis_ai.stats._paired import mcnemar_exact
from osmosis_ai.stats._results import (
    RESULTS_LOG_FORMATS,
    ModelResults,
    ResultsSummary,
    log_declared_runs,
    log_index_base,
    rebase_indices,
    summarize_results,
    summarize_results_by_model,
)

__all__ = [
    "DEFAULT_KS",
    "RESULTS_LOG_FORMATS",
    "Aggregator",
    "Agreement",
    "Comparison",
    "FailedPolicy",
    "Interval",
    "IntervalMethod",
    "LoadedResults",
    "ManyEstimate",
    "ModelResults",
    "NonFinitePolicy",
    "ResultsSummary",
    "SignChanges",
    "Summary",
    "advantage_sign_changes",
    "agreement",
    "compare",
    "confidence_interval",
    "load_results",
    "log_declared_runs",
    "log_index_base",
    "mcnemar_exact",
    "pass_at_k",
    "pass_at_k_many",
    "pass_hat_k",
    "pass_hat_k_many",
    "quantiles",
    "rebase_indices",
    "score_median",
    "score_moments",
    "score_statistics",
    "summarize",
    "summarize_results",
    "summarize_results_by_model",
]

# The examples live in the submodules; listing them here lets `doctest.testmod(osmosis_ai.stats)` run
# them with this package's names in scope.
__test__ = {
    name: obj
    for name in __all__
    if isinstance(obj := globals()[name], type) or (callable(obj) and hasattr(obj, "__code__"))
}
