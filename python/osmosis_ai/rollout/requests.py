"""Building the :class:`RolloutRequest` an agent sees: from a dataset row, or a placeholder for checks."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from osmosis_ai.rollout.schemas import RolloutRequest, _check_rollout_id

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
    messages = [
        {"role": "system", "content": row["system_prompt"]},
        {"role": "user", "content": row["user_prompt"]},
    ]
    params = dict(completion_params or {})
    if _valid_as_given(rollout_id, max_turns, params, metadata):
        return _assembled(rollout_id, messages, max_turns, params, metadata)
    return RolloutRequest(
        rollout_id=rollout_id,
        server_url=LOCAL_SERVER_URL,
        messages=messages,
        max_turns=max_turns,
        completion_params=params,
        metadata=metadata,
    )


# The fields dataset_row_to_request gives (the request's fields_set), and every field in the schema's order
# with its default (what a validated request holds for the fields not given).
_GIVEN = ("rollout_id", "server_url", "messages", "max_turns", "completion_params", "metadata")
_DEFAULTS = {
    name: None if name in _GIVEN else field.get_default(call_default_factory=True)
    for name, field in RolloutRequest.model_fields.items()
}
# Assembled only while the schema is what _valid_as_given checks: these validators and no other, no model
# validator, and no field left to a factory (whose object would be shared by every request assembled).
_DECORATORS = RolloutRequest.__pydantic_decorators__
_ASSEMBLABLE = (
    set(_DECORATORS.field_validators) == {"_rollout_id", "_server_url", "_metadata_size"}
    and not _DECORATORS.model_validators
    and not RolloutRequest.model_config
    and all(f.default_factory is None for n, f in RolloutRequest.model_fields.items() if n not in _GIVEN)
)


def _valid_as_given(
    rollout_id: Any, max_turns: Any, params: dict[Any, Any], metadata: dict[Any, Any]
) -> bool:
    """Whether the schema's validation would take these values as they are: exact types (nothing to
    coerce), string keys, and its own rules for the id and the metadata's size passing."""
    if not _ASSEMBLABLE or type(rollout_id) is not str or type(max_turns) is not int:
        return False
    if not all(type(key) is str for key in params) or not all(type(key) is str for key in metadata):
        return False
    try:
        _check_rollout_id(rollout_id)
        RolloutRequest._metadata_size(metadata)
    except ValueError:
        return False
    return True


def _assembled(
    rollout_id: str,
    messages: list[dict[str, Any]],
    max_turns: int,
    params: dict[str, Any],
    metadata: dict[str, Any],
) -> RolloutRequest:
    """The request :class:`RolloutRequest` validation makes of values :func:`_valid_as_given` passed, made
    as ``model_construct`` makes one (its field loop cost as much as validating; validating, 6-7 us a row
    in a run: the objects given are the request's own, new for it, so no copy is needed either)."""
    fields = dict(_DEFAULTS)
    fields.update(
        rollout_id=rollout_id,
        server_url=LOCAL_SERVER_URL,
        messages=messages,
        max_turns=max_turns,
        completion_params=params,
        metadata=metadata,
    )
    request = RolloutRequest.__new__(RolloutRequest)
    object.__setattr__(request, "__dict__", fields)
    object.__setattr__(request, "__pydantic_fields_set__", set(_GIVEN))
    object.__setattr__(request, "__pydantic_extra__", None)
    object.__setattr__(request, "__pydantic_private__", None)
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
