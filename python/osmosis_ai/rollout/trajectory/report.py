"""The per-call report a controller may put in its answer to a callback (the ``trajectory`` object of the
established protocol): only the controller, whose LLM bridge serves every completion, knows each call's
usage, cost and token ids. The rollout server keeps the latest one and archives it with the trajectory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CallReport", "as_call_report", "read_call_report", "report_from_response"]


@dataclass(frozen=True)
class CallReport:
    """What a controller reported about a rollout's LLM calls in a callback answer (``trajectory``).

    Attributes:
        model_name: The model that served the calls.
        llm_calls: Each call's metrics, in dispatch order (ATIF ``Metrics`` names and ``model_name``).
        final_metrics: Totals the controller computed, if any.
        unmatched_samples: Several sample entries (a rollout has one sample): kept as they came.
    """

    model_name: str | None = None
    llm_calls: tuple[Mapping[str, Any], ...] = ()
    final_metrics: Mapping[str, Any] | None = None
    unmatched_samples: Mapping[str, Any] | None = None


def read_call_report(body: Any) -> CallReport | None:
    """The ``trajectory`` report in a callback answer's JSON body, or None when it has none or it is malformed.

    Its shape (the established one): ``{"model_name", "samples": {<any key>: {"model_name",
    "llm_call_metrics": [...], "final_metrics": {...}}}}``; one sample entry applies whatever its key.

    Example:
        >>> read_call_report({"trajectory": {"samples": {"s": {"llm_call_metrics": [{"prompt_tokens": 5}]}}}})
        CallReport(model_name=None, llm_calls=({'prompt_tokens': 5},), final_metrics=None, unmatched_samples=None)
    """
    report = body.get("trajectory") if isinstance(body, Mapping) else None
    samples = report.get("samples", {}) if isinstance(report, Mapping) else None
    if not isinstance(samples, Mapping) or not isinstance(report, Mapping):
        return None
    model = report.get("model_name")
    model = model if isinstance(model, str) and model else None
    if len(samples) != 1:
        return CallReport(model, unmatched_samples=dict(samples) or None)
    sample = next(iter(samples.values()))
    if not isinstance(sample, Mapping):
        return None
    calls = sample.get("llm_call_metrics")
    final = sample.get("final_metrics")
    own_model = sample.get("model_name")
    return CallReport(
        own_model if isinstance(own_model, str) and own_model else model,
        tuple(c for c in calls if isinstance(c, Mapping)) if isinstance(calls, list) else (),
        final if isinstance(final, Mapping) else None,
    )


def report_from_response(response: Any) -> CallReport | None:
    """The report in a callback's HTTP answer (0.3's name): None when there is no answer, it is not JSON, or it
    carries no well-formed report."""
    try:
        return read_call_report(response.json()) if response is not None else None
    except ValueError:  # not JSON: an answer without a report
        return None


def as_call_report(report: Any) -> CallReport | None:
    """A report as :func:`save_trajectory` takes it: a :class:`CallReport`, the ``trajectory`` object as a
    controller sends it, or 0.3's pydantic ``TrajectoryReport`` (anything with ``model_dump()``).

    Example:
        >>> as_call_report({"model_name": "m", "samples": {}}).model_name
        'm'
    """
    if report is None or isinstance(report, CallReport):
        return report
    if callable(getattr(report, "model_dump", None)):
        report = report.model_dump(mode="json", exclude_none=True)
    return read_call_report({"trajectory": report})
