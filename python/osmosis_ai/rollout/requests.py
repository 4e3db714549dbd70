"""Building the :class:`RolloutRequest` an agent sees: from a dataset row, or a placeholder for checks."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from osmosis_ai.rollout.schemas import RolloutRequest

__all__ = [
    "LOCAL_SERVER_URL",
    "REQUIRED_COLUMNS",
    "SHADOWED_COLUMNS_KEY",
    "dataset_row_to_request",
    "placeholder_request",
]

logger = logging.getLogger(__name__)

LOCAL_SERVER_URL = "http://local-rollout.local"
REQUIRED_COLUMNS = ("ground_truth", "user_prompt", "system_prompt")
# Dataset columns whose names the SDK's own metadata keys take are kept here instead of being lost.
SHADOWED_COLUMNS_KEY = "shadowed_columns"
_ONLY_REQUIRED = frozenset(REQUIRED_COLUMNS)


def dataset_row_to_request(
    row: Mapping[str, Any],
    row_index: int,
    *,
    rollout_id: str,
    max_turns: int = 10,
    completion_params: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> RolloutRequest:
    """Builds the request for one run of one dataset row.

    Metadata holds every non-required column, then ``ground_truth``, ``row_index`` and ``overrides``
    (such as ``{"execution_mode": "eval", "run_index": 0}``). The SDK's keys always win, and a column
    they displace is kept under ``metadata["shadowed_columns"]`` (with a warning) rather than lost.
    ``max_tokens_total`` keeps the protocol default (8192), as on a served rollout.

    Args:
        row: A validated row with ``ground_truth``, ``user_prompt`` and ``system_prompt``.
        row_index: The row's absolute index in the dataset.
        rollout_id: The id of this run, e.g. ``eval-3-run-0``.
        max_turns: Advisory turn limit for the agent.
        completion_params: Sampling parameters the agent may forward to ``ctx.chat``.
        overrides: Further SDK metadata keys.

    Example:
        >>> row = {"ground_truth": "4", "user_prompt": "2+2?", "system_prompt": "Be brief.", "topic": "math"}
        >>> dataset_row_to_request(row, 0, rollout_id="eval-0-run-0").metadata["topic"]
        'math'
    """
    sdk = {"ground_truth": row["ground_truth"], "row_index": row_index, **(overrides or {})}
    shadowed: dict[str, Any] = {}
    metadata: dict[str, Any]
    if row.keys() == _ONLY_REQUIRED:
        metadata = sdk  # the required columns alone (one comparison, not a walk of the row): the SDK's keys
    else:
        metadata = {}
        for name, value in row.items():
            if name in REQUIRED_COLUMNS:
                continue
            if name in sdk or name == SHADOWED_COLUMNS_KEY:
                shadowed[name] = value
            else:
                metadata[name] = value
        metadata.update(sdk)
    if shadowed:
        logger.warning(
            "row %d: dataset column(s) %s collide with SDK metadata keys; kept under metadata[%r]",
            row_index,
            ", ".join(sorted(shadowed)),
            SHADOWED_COLUMNS_KEY,
        )
        metadata[SHADOWED_COLUMNS_KEY] = shadowed
    # The model's own validation of one dict: RolloutRequest(**fields) adds a frame and a kwargs dict.
    fields = {
        "rollout_id": rollout_id,
        "server_url": LOCAL_SERVER_URL,
        "messages": [
            {"role": "system", "content": row["system_prompt"]},
            {"role": "user", "content": row["user_prompt"]},
        ],
        "max_turns": max_turns,
        "completion_params": dict(completion_params or {}),
        "metadata": metadata,
    }
    return RolloutRequest.__pydantic_validator__.validate_python(fields)  # type: ignore[no-any-return]


def placeholder_request() -> RolloutRequest:
    """A minimal request for asking an agent its tools outside a rollout (``validate``, default tools).

    Its metadata carries ``_validation: True`` so an agent can tell it from a real request.

    Example:
        >>> placeholder_request().messages
        [{'role': 'user', 'content': 'Hello'}]
    """
    return RolloutRequest(
        rollout_id="validation-test-rollout",
        server_url="http://localhost:8080",
        messages=[{"role": "user", "content": "Hello"}],
        completion_params={"temperature": 1.0, "max_tokens": 512},
        metadata={"_validation": True},
    )
