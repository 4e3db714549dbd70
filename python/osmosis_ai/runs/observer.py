"""What a run tells its caller while it runs: steps, notices, warnings, progress, the one question it asks.

Library code returns data and never prints. A run module reports its steps to a :class:`RunObserver`;
the default one keeps quiet and answers yes, so a library user gets the result object and nothing on
the terminal. The CLI passes an observer that prints (``Loading dataset: ...``), draws the progress
display and asks the cost question.
"""

from __future__ import annotations

from typing import Any, Protocol

from osmosis_ai.runs.work import RunOutcome

__all__ = ["ProgressHook", "RunObserver", "quiet_observer"]


class ProgressHook(Protocol):
    """Called with each finished item's record (``RunEngine(on_record=...)``), closed after the run."""

    def __call__(self, record: dict[str, Any], outcome: RunOutcome) -> None: ...

    def close(self) -> None: ...


class _NoProgress:
    def __call__(self, record: dict[str, Any], outcome: RunOutcome) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to close."""


class RunObserver:
    """Receives what a run reports; every method does nothing by default (subclass what you need).

    Example:
        >>> class Steps(RunObserver):
        ...     def message(self, text: str) -> None:
        ...         seen.append(text)
        >>> seen = []
        >>> Steps().message("Loading dataset: data.jsonl"); seen
        ['Loading dataset: data.jsonl']
    """

    def message(self, text: str) -> None:
        """A step of the run for a person to read (``Loading agent: ...``); may be left unshown."""

    def milestone(self, text: str) -> None:
        """A point the run reached (``12 of 40 work items pending``); a verbose front end may show the
        run's log lines instead (see :meth:`log_line`)."""

    def notice(self, text: str) -> None:
        """Something the user should see even when they asked for quiet (a results log was repaired)."""

    def warning(self, code: str, text: str) -> None:
        """A problem that does not stop the run; ``code`` is a stable name (``SECRETS``, ``WORKTREE``)."""

    def log_line(self, text: str) -> None:
        """One line the run wrote to its own text log (``eval run``'s ``logs.txt``)."""

    def confirm(self, question: str) -> bool:
        """Asked once before a run spends money; False cancels it. The default answer is yes."""
        return True

    def progress(self, total: int, *, title: str | None = None) -> ProgressHook:
        """The hook that sees every finished item of a session of ``total`` items; ``title`` is a line a
        live display may show above itself (``running up to 8 work items in flight``)."""
        return _NoProgress()


def quiet_observer(observer: RunObserver | None) -> RunObserver:
    """``observer``, or a :class:`RunObserver` that shows nothing."""
    return observer if observer is not None else RunObserver()
