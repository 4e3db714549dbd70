"""The trajectory document (ATIF style) of one finished rollout: the rollout server archives it as
``<artifact root>/<rollout id>/trajectory.json`` and ``osmosis eval run`` lays it out under
``trajectories/``. One builder, so both are read the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["trajectory_document"]


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
