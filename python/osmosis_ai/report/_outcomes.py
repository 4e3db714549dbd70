"""What one run was for one score name, and what one row was: the labels a page filters rows by.

The words are the result model's (:class:`osmosis_ai.results.RunOutcome`, :class:`RowOutcome`, from
the Rust core's lists). The model counts runs and rows; a page also needs each row's own label to
filter by, which this module gives by the model's rules (a run *errored*, was *unscored*, *passed* or
*did not pass*; a row is *incomplete*, *errored*, or passed *every attempt*, *some* or *none*, tested in
that order). A test checks that the rows of every label add up to the model's counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_ai.results import RowOutcome, RunOutcome

__all__ = ["SKIPPED", "page_words", "row_outcome", "run_outcome", "score_of"]

SKIPPED = "skipped"


def page_words() -> dict[str, list[list[str]]]:
    """``{"run": [[value, words], ...], "row": [...]}``: the words the page prints, in the model's order."""
    return {
        "run": [[o.value, o.label] for o in RunOutcome] + [[SKIPPED, SKIPPED]],
        "row": [[o.value, o.label] for o in RowOutcome],
    }


def _success(record: Mapping[str, Any]) -> bool:
    # The bare layout may leave `success` out: a record without it succeeded.
    return record.get("success", True) is not False


def score_of(record: Mapping[str, Any], name: str) -> float | None:
    """The run's score under ``name`` when it has one (a number; None otherwise)."""
    # Records are parsed JSON: plain dicts (an ABC isinstance check costs a tenth of a report's time).
    scores = record.get("scores")
    value = scores.get(name) if type(scores) is dict else None
    if type(value) is float:
        return value
    return float(value) if type(value) is int else None


def run_outcome(record: Mapping[str, Any], name: str, threshold: float) -> str:
    """``"errored"``, ``"unscored"``, ``"passed"``, ``"not_passed"`` or ``"skipped"`` for one score name."""
    status = record.get("status")
    if status == "skipped":
        return SKIPPED
    if not _success(record):
        return RunOutcome.UNSCORED.value if status == "unscored" else RunOutcome.ERRORED.value
    errors = record.get("eval_errors")
    if type(errors) is dict and name in errors:
        return RunOutcome.ERRORED.value
    score = score_of(record, name)
    if score is None or score - score != 0:  # None, NaN or infinite
        return RunOutcome.UNSCORED.value
    return RunOutcome.PASSED.value if score >= threshold else RunOutcome.NOT_PASSED.value


def row_outcome(outcomes: Sequence[str], declared_n: int | None) -> str:
    """The row's label from its runs' outcomes for one score name (see the module docs)."""
    if declared_n and len(outcomes) < declared_n:
        return RowOutcome.INCOMPLETE.value
    if RunOutcome.ERRORED.value in outcomes:
        return RowOutcome.ERRORED.value
    attempts = [o for o in outcomes if o != SKIPPED]
    passed = attempts.count(RunOutcome.PASSED.value)
    if attempts and passed == len(attempts):
        return RowOutcome.PASSED_EVERY_ATTEMPT.value
    return RowOutcome.PASSED_SOME.value if passed else RowOutcome.PASSED_NONE.value
