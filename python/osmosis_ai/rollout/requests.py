"""Building the :class:`RolloutRequest` an agent sees: from a dataset row, or a placeholder for checks."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import orjson

from osmosis_ai.rollout.schemas import MAX_ROLLOUT_ID_LENGTH, RolloutRequest, get_max_metadata_size_bytes

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
    metadata: dict[str, Any] = {}
    shadowed: dict[str, Any] = {}
    str_keys = True
    for name, value in row.items():
        if name in REQUIRED_COLUMNS:
            continue
        str_keys = str_keys and type(name) is str
        if name in sdk or name == SHADOWED_COLUMNS_KEY:
            shadowed[name] = value
        else:
            metadata[name] = value
    metadata.update(sdk)
    str_keys = str_keys and all(type(key) is str for key in sdk)
    if shadowed:
        logger.warning(
            "row %d: dataset column(s) %s collide with SDK metadata keys; kept under metadata[%r]",
            row_index,
            ", ".join(sorted(shadowed)),
            SHADOWED_COLUMNS_KEY,
        )
        metadata[SHADOWED_COLUMNS_KEY] = shadowed
    messages = [
        {"role": "system", "content": row["system_prompt"]},
        {"role": "user", "content": row["user_prompt"]},
    ]
    params = dict(completion_params or {})
    if str_keys and _vouched(rollout_id, max_turns, params, metadata):
        return _unvalidated(rollout_id, messages, params, max_turns, metadata)
    return RolloutRequest(
        rollout_id=rollout_id,
        server_url=LOCAL_SERVER_URL,
        messages=messages,
        max_turns=max_turns,
        completion_params=params,
        metadata=metadata,
    )


# What a request built here has set: the fields given to the constructor.
_GIVEN = frozenset(("rollout_id", "server_url", "messages", "max_turns", "completion_params", "metadata"))
_new = object.__new__
_set = object.__setattr__


def _vouched(rollout_id: Any, max_turns: Any, params: dict[Any, Any], metadata: dict[Any, Any]) -> bool:
    """Whether a request of these values (the messages and server URL are made here and always pass)
    passes :class:`RolloutRequest`'s checks: a rollout id of text within its length, an ``int``
    ``max_turns``, string keys, and metadata within its size as JSON. Every check is the model's own
    rule, made without pydantic's copy of every value."""
    if type(rollout_id) is not str or not rollout_id.strip() or len(rollout_id) > MAX_ROLLOUT_ID_LENGTH:
        return False
    if type(max_turns) is not int or not all(type(key) is str for key in params):
        return False
    try:
        size = len(orjson.dumps(metadata, option=orjson.OPT_NON_STR_KEYS))
    except (TypeError, ValueError):
        return False
    return size <= get_max_metadata_size_bytes()


def _unvalidated(
    rollout_id: str,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    max_turns: int,
    metadata: dict[str, Any],
) -> RolloutRequest:
    """The :class:`RolloutRequest` validation would make of values :func:`_vouched` passed: they are fresh
    objects made for this request, so pydantic's copies would change nothing. Laid out as
    ``model_construct`` lays an instance out, without its loop over every field (which costs more than
    validating)."""
    request = _new(RolloutRequest)
    # In the model's field order, as validation lays them out.
    values = {
        "rollout_id": rollout_id,
        "server_url": LOCAL_SERVER_URL,
        "messages": messages,
        "completion_params": params,
        "tool_server_url": None,
        "max_turns": max_turns,
        "max_tokens_total": 8192,
        "metadata": metadata,
        "api_key": None,
        "idempotency_key": None,
    }
    _set(request, "__dict__", values)
    _set(request, "__pydantic_fields_set__", set(_GIVEN))
    _set(request, "__pydantic_extra__", None)
    _set(request, "__pydantic_private__", None)
    return request


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
