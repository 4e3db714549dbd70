"""The result model's words, each with one meaning (the Rust core's lists: never spelled twice)."""

from __future__ import annotations

from enum import Enum

from osmosis_ai import _core

__all__ = ["COMPARISON_SCHEMA", "RESULT_SCHEMA", "RowOutcome", "RunOutcome"]

#: ``(schema name, version)`` of :meth:`ResultSummary.to_dict`.
RESULT_SCHEMA: tuple[str, int] = tuple(_core.RESULT_SCHEMA)  # type: ignore[assignment]
#: ``(schema name, version)`` of :meth:`ResultComparison.to_dict`.
COMPARISON_SCHEMA: tuple[str, int] = tuple(_core.COMPARISON_SCHEMA)  # type: ignore[assignment]

_RUN = dict(_core.RUN_OUTCOMES)
_ROW = dict(_core.ROW_OUTCOMES)


class RunOutcome(str, Enum):
    """What one run was for one score name. The value is the JSON key; :attr:`label` the printed word.

    * ``ERRORED``: no score because the run itself errored (agent, provider, timeout) or the scorer raised;
    * ``UNSCORED``: the run finished without a score (``None``, a judge that gave none);
    * ``PASSED``: scored at or above the pass threshold;
    * ``NOT_PASSED``: scored below it ("did not pass").

    Example:
        >>> RunOutcome.NOT_PASSED.label
        'did not pass'
    """

    ERRORED = "errored"
    UNSCORED = "unscored"
    PASSED = "passed"
    NOT_PASSED = "not_passed"

    @property
    def label(self) -> str:
        """The word every surface prints."""
        return _RUN[self.value]


class RowOutcome(str, Enum):
    """What one row was for one score name; a row is in exactly one, tested in this order.

    * ``INCOMPLETE``: fewer runs recorded than the declared n;
    * ``ERRORED``: at least one of its runs errored;
    * ``PASSED_EVERY_ATTEMPT``, ``PASSED_SOME``, ``PASSED_NONE``: by how many of its runs passed.

    Example:
        >>> [o.label for o in RowOutcome][:3]
        ['incomplete', 'errored', 'passed every attempt']
    """

    INCOMPLETE = "incomplete"
    ERRORED = "errored"
    PASSED_EVERY_ATTEMPT = "passed_every_attempt"
    PASSED_SOME = "passed_some"
    PASSED_NONE = "passed_none"

    @property
    def label(self) -> str:
        """The words every surface prints."""
        return _ROW[self.value]


# The Rust lists and these enums must name the same outcomes, in the same order.
assert [o.value for o in RunOutcome] == list(_RUN), "RunOutcome is out of step with the core"
assert [o.value for o in RowOutcome] == list(_ROW), "RowOutcome is out of step with the core"
