"""The trajectory document (ATIF style) of one finished rollout: the rollout server archives it as
``<artifact root>/<rollout id>/trajectory.json`` (:func:`save_trajectory`, the established 0.3 call) and
``osmosis eval run`` lays it out under ``trajectories/``. One builder, so both are read the same way.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osmosis_ai.rollout.sample import ExecutionResult

__all__ = ["default_artifact_root", "save_trajectory", "trajectory_document"]

logger = logging.getLogger("osmosis_ai.rollout.trajectory")


def trajectory_document(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The trajectory file of one record, or None when it has no conversation.

    It names its rollout three ways readers look for it (``session_id``, ``trajectory_id``,
    ``extra.osmosis.rollout_id``) and carries the request's extra fields (an eval-run record's
    ``row_index`` and ``run_index`` unless it has ``request_extra_fields``), the label, the sample's
    ``metrics`` (what the workflow reported), the outcome and the token count.

    Example:
        >>> trajectory_document({"rollout_id": "r1", "row_index": 0, "run_index": 1,
        ...                      "messages": [{"role": "user", "content": "hi"}]})["trajectory_id"]
        'r1/0'
    """
    messages = record.get("messages") or record.get("final_messages")
    if not messages:
        return None
    rollout_id = record["rollout_id"]
    extra_fields = record.get("request_extra_fields")
    if extra_fields is None:
        extra_fields = {"row_index": record["row_index"], "run_index": record["run_index"]}
    return {
        "session_id": rollout_id,
        "trajectory_id": f"{rollout_id}/0",
        "messages": list(messages),
        "extra": {
            "osmosis": {
                "rollout_id": rollout_id,
                "request_extra_fields": extra_fields,
                "label": record.get("label"),
                "metrics": record.get("metrics") or {},
                "status": record.get("status"),
                "reward": record.get("reward"),
                "error_type": record.get("error_type"),
            }
        },
        "final_metrics": {"total_tokens": record.get("tokens") or 0},
    }


def default_artifact_root() -> Path:
    """``$OSMOSIS_ROLLOUT_ARTIFACT_ROOT``, else ``~/.osmosis``: where finished rollouts are archived."""
    from osmosis_ai.rollout.backend.local import ARTIFACT_ROOT_ENV

    env = os.environ.get(ARTIFACT_ROOT_ENV, "").strip()
    return Path(env) if env else Path.home() / ".osmosis"


def _write_archive(folder: Path, rollout_id: str, result: ExecutionResult, label: Any, extra: Any) -> None:
    from osmosis_ai._files import write_json_atomic
    from osmosis_ai.rollout.sample import RolloutStatus

    sample = result.sample
    if sample is not None and sample.trajectory_messages is not None:
        ok = result.status is RolloutStatus.SUCCESS
        safe = sample.json_safe_copy().model_dump(mode="json")
        document = trajectory_document({
            "rollout_id": rollout_id,
            "request_extra_fields": extra if extra is not None else {},
            "label": label,
            "metrics": safe["metrics"],
            "messages": safe["trajectory_messages"],
            "status": "success" if ok else "failure",
            "reward": sample.reward if ok and not sample.remove_sample else None,
            "error_type": result.err_category.value if result.err_category is not None else None,
        })  # fmt: skip
        if document is not None:
            write_json_atomic(folder / "trajectory.json", document, ensure_ascii=False)
    if result.extra_fields:
        write_json_atomic(folder / "diagnostics.json", result.extra_fields, ensure_ascii=False)


async def save_trajectory(
    *,
    rollout_id: str,
    result: ExecutionResult,
    request_label: str | None = None,
    request_extra_fields: Mapping[str, Any] | None = None,
    artifact_root: Path | None = None,
) -> None:
    """Archives a finished rollout under ``<artifact_root>/<rollout_id>/``; best effort, never raises.

    Writes ``trajectory.json`` (unless the sample keeps no ``trajectory_messages``) and, when the backend
    reported diagnostics (``result.extra_fields``), ``diagnostics.json``.

    Args:
        rollout_id: The rollout (one path segment).
        result: The latest result the backend reported (the grader's, when there was one).
        request_label: The request's label, kept in the document.
        request_extra_fields: The request's ``extra_fields``, kept in the document.
        artifact_root: Where to archive (default :func:`default_artifact_root`).

    Example:
        >>> await save_trajectory(rollout_id="r1", result=result, artifact_root=Path("runs"))  # doctest: +SKIP
    """
    root = artifact_root if artifact_root is not None else default_artifact_root()
    try:
        await asyncio.to_thread(
            _write_archive, root / rollout_id, rollout_id, result, request_label, request_extra_fields
        )
    except Exception as exc:  # best effort: the controller already has the result
        logger.warning("could not archive rollout %s: %s", rollout_id, exc)
