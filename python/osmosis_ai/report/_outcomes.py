"""What one run was for one score name, and what one row was: the words a page labels and filters by.

The vocabulary is the result model's (README, "Words the results use"): a run *errored* (the run itself,
or its scorer raised: no score), was *unscored* (finished without a score), *passed* (score >= the
threshold) or *did not pass*; a row is *incomplete* (fewer runs than the declared n), *errored*, or
passed *every attempt*, *some* or *none*, sorted in that order. The page's row filters are these labels;
the counts it prints are the result model's, and a test checks that both agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ROW_OUTCOMES", "RUN_OUTCOMES", "row_outcome", "run_outcome", "score_of"]

RUN_OUTCOMES = {
    "errored": "errored",
    "unscored": "unscored",
    "passed": "passed",
    "not_passed": "did not pass",
}
ROW_OUTCOMES = {
    "incomplete": "incomplete",
    "errored": "errored",
    "passed_every_attempt": "passed every attempt",
    "passed_some": "passed some",
    "passed_none": "passed none",
}
SKIPPED = "skipped"


def _success(record: Mapping[str, Any]) -> bool:
    # The bare layout may leave `success` out: a record without it succeeded.
    return record.get("success", True) is not False


def score_of(record: Mapping[str, Any], name: str) -> float | None:
    """The run's score under ``name`` when it has one (a number; None otherwise)."""
    # Records are parsed JSON: plain dicts (an ABC isinstance check costs a tenth of a report's time).
    scores = record.get("scores")
    value = scores.get(name) if type(scores) is dict else None
    kind = type(value)
    if kind is float:
        return value
    return float(value) if kind is int else None


def run_outcome(record: Mapping[str, Any], name: str, threshold: float) -> str:
    """``"errored"``, ``"unscored"``, ``"passed"``, ``"not_passed"`` or ``"skipped"`` for one score name."""
    status = record.get("status")
    if status == "skipped":
        return SKIPPED
    if not _success(record):
        return "unscored" if status == "unscored" else "errored"
    errors = record.get("eval_errors")
    if type(errors) is dict and name in errors:
        return "errored"
    score = score_of(record, name)
    if score is None or score - score != 0:  # None, NaN or infinite
        return "unscored"
    return "passed" if score >= threshold else "not_passed"


def row_outcome(outcomes: Sequence[str], declared_n: int | None) -> str:
    """The row's label from its runs' outcomes for one score name (see the module docs)."""
    if declared_n and len(outcomes) < declared_n:
        return "incomplete"
    if "errored" in outcomes:
        return "errored"
    attempts = [o for o in outcomes if o != SKIPPED]
    passed = attempts.count("passed")
    if attempts and passed == len(attempts):
        return "passed_every_attempt"
    return "passed_some" if passed else "passed_none"
