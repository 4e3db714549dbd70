"""Writing trajectories: the JSON text of every trajectory file (:func:`trajectory_json`) and the rollout
archive, ``<artifact root>/<rollout id>/trajectory.json`` (+ ``diagnostics.json``), that a rollout server
leaves for each finished rollout (:func:`save_trajectory`, the established 0.3 call).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from osmosis_ai.rollout.backend.local import default_artifact_root
from osmosis_ai.rollout.trajectory.build import build_trajectory
from osmosis_ai.rollout.trajectory.report import CallReport, as_call_report

if TYPE_CHECKING:
    from osmosis_ai.rollout.sample import ExecutionResult

__all__ = ["default_artifact_root", "save_trajectory", "trajectory_json"]

logger = logging.getLogger("osmosis_ai.rollout.trajectory")


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` with what orjson cannot write made writable: integers beyond 64 bits and keys that are not
    strings become text, and so does anything nested deeper than any real conversation."""
    if depth > 100:
        return str(value)
    if type(value) is int and not -(2**63) <= value < 2**64:
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in value]
    return value


def trajectory_json(document: Mapping[str, Any]) -> bytes:
    """A document as JSON text (every writer's): NaN and infinity inside free-form values become null, as
    JSON requires, and values JSON has no form for become text."""
    try:
        return orjson.dumps(document, default=str)
    except TypeError:  # an integer beyond 64 bits, a key that is not a string, a cycle
        return orjson.dumps(_plain(document), default=str)


def _sample_document(
    rollout_id: str, result: ExecutionResult, request: Mapping[str, Any], report: CallReport | None
) -> dict[str, Any] | None:
    """The ATIF document of a result's sample, or None when it has none (or turned its trajectory off)."""
    from osmosis_ai.rollout.sample import RolloutStatus

    sample = result.sample
    if sample is None or sample.trajectory_messages is None:
        return None
    safe = sample.json_safe_copy().model_dump(mode="json")
    context = {
        "label": sample.label if sample.label is not None else request.get("label"),
        "reward": sample.reward,  # the sample's own, as graded (the callback nulls it unless kept)
        "sample_metrics": safe["metrics"] or None,
        "sample_extra_fields": safe["extra_fields"] or None,
        "request_metadata": request.get("metadata"),
        "request_extra_fields": request.get("extra_fields"),
        "unmatched_sample_reports": report.unmatched_samples if report else None,
        "status": "success" if result.status is RolloutStatus.SUCCESS else "failure",
        "error_type": result.err_category.value if result.err_category is not None else None,
    }
    return build_trajectory(
        safe["trajectory_messages"],
        rollout_id=rollout_id,
        context=context,
        llm_calls=report.llm_calls if report else (),
        final_metrics=report.final_metrics if report else None,
        model_name=report.model_name if report else None,
    )


def _write_archive(
    folder: Path, document: dict[str, Any] | None, diagnostics: Mapping[str, Any] | None
) -> None:
    from osmosis_ai._files import write_json_atomic

    if document is not None:
        # Through the one writer first: a NaN in the conversation becomes null, as JSON (and ATIF) requires.
        write_json_atomic(
            folder / "trajectory.json", orjson.loads(trajectory_json(document)), ensure_ascii=False
        )
    if diagnostics:
        write_json_atomic(folder / "diagnostics.json", diagnostics, ensure_ascii=False)


async def save_trajectory(
    *,
    rollout_id: str,
    result: ExecutionResult,
    request_label: str | None = None,
    request_metadata: Mapping[str, Any] | None = None,
    request_extra_fields: Mapping[str, Any] | None = None,
    report: CallReport | Mapping[str, Any] | Any | None = None,
    artifact_root: Path | None = None,
    diagnostics: Mapping[str, Any] | None = None,
) -> None:
    """Archives a finished rollout under ``<artifact_root>/<rollout_id>/``; best effort, never raises.

    Writes ``trajectory.json``, the ATIF document of the result's sample (none when there is no sample or
    its ``trajectory_messages`` is None), and ``diagnostics.json`` when there are diagnostics.

    Args:
        rollout_id: The rollout (one path segment).
        result: The latest result the backend reported with a sample (the grader's, when it had one).
        request_label: The request's label (the document's when the sample has none).
        request_metadata: The request's ``metadata``, kept in the document.
        request_extra_fields: The request's ``extra_fields``, kept in the document.
        report: What the controller reported about the rollout's LLM calls: a :class:`CallReport`
            (:func:`report_from_response`), the ``trajectory`` object of a callback's answer, or 0.3's
            ``TrajectoryReport`` (anything with ``model_dump()``).
        artifact_root: Where to archive (default :func:`default_artifact_root`).
        diagnostics: The backend's diagnostics (default ``result.extra_fields``).

    Example:
        >>> await save_trajectory(rollout_id="r1", result=result, artifact_root=Path("runs"))  # doctest: +SKIP
    """
    root = artifact_root if artifact_root is not None else default_artifact_root()
    request = {"label": request_label, "metadata": request_metadata, "extra_fields": request_extra_fields}
    try:
        document = _sample_document(rollout_id, result, request, as_call_report(report))
        payload = diagnostics if diagnostics is not None else result.extra_fields
        if document is not None or payload:
            await asyncio.to_thread(_write_archive, root / rollout_id, document, payload)
    except Exception as exc:  # best effort: the controller already has the result
        logger.warning("could not archive rollout %s: %s", rollout_id, exc)
