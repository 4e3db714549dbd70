"""The 0.3 rollout data types: the sample a rollout produces, its status, and how failures are classified.

``RolloutStatus`` here is the 0.3 enum (``queued`` ... ``unknown``); ``osmosis_ai.rollout.RolloutStatus``
stays the 0.2 protocol enum that ``RolloutAgentLoop`` users import, so this one is reached as
``osmosis_ai.rollout.sample.RolloutStatus``.
"""

from __future__ import annotations

import asyncio
import copy
import math
import numbers
from collections.abc import Mapping, Sequence
from enum import Enum
from itertools import chain
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from osmosis_ai._core import flat_message_copies

__all__ = [
    "ExecutionRequest",
    "ExecutionResult",
    "GraderStatus",
    "MessageDict",
    "RolloutErrorCategory",
    "RolloutSample",
    "RolloutStatus",
    "check_rollout_id",
    "check_time_budget",
    "checked_reward",
    "classify_exception",
    "execution_request",
    "plain_copy",
    "plain_request",
    "sample_from_output",
    "success_result",
]


MessageDict = dict[str, Any]
"""One OpenAI-style chat message (the 0.3 alias; ``osmosis_ai.rollout.MessageDict`` is the 0.2 TypedDict)."""


class RolloutStatus(str, Enum):
    """Where one rollout is in its life."""

    QUEUED = "queued"
    RUNNING = "running"
    GRADING = "grading"
    SUCCESS = "success"
    FAILURE = "failure"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


class RolloutErrorCategory(str, Enum):
    """Why a rollout failed: what an exception of the workflow or grader maps to."""

    TIMEOUT = "timeout"
    VALIDATION_ERROR = "validation_error"
    HTTP_ERROR = "http_error"
    AGENT_ERROR = "agent_error"


class GraderStatus(str, Enum):
    """The grading step's outcome."""

    PENDING = "pending"
    SUCCESS = "success"
    FAILURE = "failure"


def classify_exception(exc: BaseException) -> RolloutErrorCategory:
    """The category of a failure: timeouts, bad values (ValueError/TypeError/AssertionError), or the agent.

    Example:
        >>> classify_exception(TypeError("x")).value
        'validation_error'
    """
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):  # distinct classes before Python 3.11
        return RolloutErrorCategory.TIMEOUT
    if isinstance(exc, (ValueError, TypeError, AssertionError)):
        return RolloutErrorCategory.VALIDATION_ERROR
    return RolloutErrorCategory.AGENT_ERROR


_UNSET: Any = object()
_Model = TypeVar("_Model", bound=BaseModel)
_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars), several times cheaper than ``copy.deepcopy``.

    Anything else inside is deep-copied the usual way. Unlike ``deepcopy``, an object referenced twice
    becomes two copies (messages and metadata are trees).

    Example:
        >>> original = [{"role": "user", "content": "hi"}]
        >>> plain_copy(original) == original and plain_copy(original)[0] is not original[0]
        True
    """
    kind = type(value)
    if kind is dict:
        # A message is mostly scalars: copy the dict whole, then replace only what is nested (the scan
        # for anything nested is one C loop: a message of scalars takes no Python loop at all).
        copied = value.copy()
        if not _SCALARS.issuperset(map(type, copied.values())):
            for key, item in value.items():
                if type(item) not in _SCALARS:
                    copied[key] = plain_copy(item)
        return copied
    if kind is list:
        return [item if type(item) in _SCALARS else plain_copy(item) for item in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)


class RolloutSample(BaseModel):
    """What one rollout produced: the conversation, the label, and (after grading) the reward.

    ``trajectory_messages`` defaults to a deep copy of ``messages`` when not given; pass ``None``
    explicitly to keep no trajectory. ``reward`` must be a finite number (checked on assignment too).

    Example:
        >>> s = RolloutSample(messages=[{"role": "assistant", "content": "4"}], label="4")
        >>> s.reward = 1.0
        >>> s.trajectory_messages == s.messages
        True
    """

    model_config = ConfigDict(validate_assignment=True, ser_json_inf_nan="null", allow_inf_nan=False)

    messages: Sequence[Mapping[str, Any]] = Field(default_factory=list)
    trajectory_messages: Sequence[Mapping[str, Any]] | None = None
    label: str | None = None
    reward: float | None = None
    remove_sample: bool = False
    metrics: dict[str, Any] = Field(default_factory=dict)
    extra_fields: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _default_trajectory(cls, data: Any) -> Any:
        if isinstance(data, dict) and "trajectory_messages" not in data:
            data = {**data, "trajectory_messages": plain_copy(list(data.get("messages") or []))}
        return data

    @field_validator("reward", mode="before")
    @classmethod
    def _finite_reward(cls, value: Any) -> Any:
        return checked_reward(value)

    def json_safe_copy(self) -> RolloutSample:
        """A copy whose ``metrics`` and ``extra_fields`` hold only JSON-encodable, finite values."""
        return self.model_copy(
            update={"metrics": _json_safe(self.metrics), "extra_fields": _json_safe(self.extra_fields)}
        )


def checked_reward(value: Any) -> float | None:
    """A reward as :class:`RolloutSample` keeps it: None, or a finite number as a float (else a ValueError)."""
    # bool is an int to Python; a reward of True is a bug in the grader, not 1.0.
    if value is None:
        return None
    if type(value) is float and math.isfinite(value):  # the usual reward, without the ABC check below
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"reward must be a finite number, got {type(value).__name__} {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"reward must be a finite number, got {value!r}")
    return float(value)


_STR = frozenset({str})
_DICT = frozenset({dict})


def _str_keyed(value: Any) -> bool:
    return type(value) is dict and _STR.issuperset(map(type, value))


def _str_keyed_dicts(values: list[Any]) -> bool:
    """Whether every item of a list is a dict with text keys (two C loops, none in Python)."""
    return _DICT.issuperset(map(type, values)) and _STR.issuperset(map(type, chain.from_iterable(values)))


# BaseModel's four slots, set through their descriptors: object.__setattr__ looks each name up along the
# class's MRO first (a quarter of the cost of an assembled model).
_new_instance = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _assembled(cls: type[_Model], values: dict[str, Any], given: frozenset[str]) -> _Model:
    """An instance of ``cls`` holding ``values`` (every field, each already what validating it would
    give), with ``given`` as the fields set, as ``model_construct`` leaves it, without its Python loop
    over the fields (the hot path of a local run builds four models per rollout)."""
    instance = _new_instance(cls)
    _set_dict(instance, values)
    _set_fields_set(instance, set(given))
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


_SAMPLE_GIVEN = frozenset({"messages", "trajectory_messages", "label", "metrics"})


def sample_from_output(messages: Any, label: str | None, metrics: Mapping[str, Any]) -> RolloutSample:
    """``RolloutSample(messages=messages, label=label, metrics=metrics)``: the sample of a workflow's output.

    What the output's own validation already made sure of (a list of messages with text keys, metrics
    with text keys) is not checked again: the sample is assembled as validation would leave it (each
    message and the metrics copied, the trajectory a deep copy). Anything else (an output changed after it
    was made) is validated the usual way.

    Example:
        >>> sample = sample_from_output([{"role": "user", "content": "hi"}], "4", {})
        >>> sample == RolloutSample(messages=[{"role": "user", "content": "hi"}], label="4")
        True
    """
    if not (_str_keyed(metrics) and (label is None or type(label) is str)):
        return RolloutSample(messages=messages, label=label, metrics=metrics)
    # Messages of scalars only (most conversations): both copies made in the core, checked there in one pass.
    copies = flat_message_copies(messages)
    if copies is not None:
        messages, trajectory = copies
    elif type(messages) is list and _str_keyed_dicts(messages):
        trajectory = [
            message.copy() if _SCALARS.issuperset(map(type, message.values())) else plain_copy(message)
            for message in messages
        ]  # plain_copy(messages) without a call per message of scalars
        messages = [message.copy() for message in messages]
    else:
        return RolloutSample(messages=messages, label=label, metrics=metrics)
    values = {
        "messages": messages,
        "trajectory_messages": trajectory,
        "label": label,
        "reward": None,
        "remove_sample": False,
        "metrics": dict(metrics),
        "extra_fields": {},
    }
    return _assembled(RolloutSample, values, _SAMPLE_GIVEN)


def _json_safe(values: Mapping[str, Any]) -> dict[str, Any]:
    import orjson

    kept: dict[str, Any] = {}
    for key, value in values.items():
        if hasattr(value, "item") and callable(value.item):  # numpy-like scalars
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            continue
        try:
            orjson.dumps(value)
        except TypeError:
            continue
        kept[key] = value
    return kept


def _one_segment(value: str) -> bool:
    return (
        bool(value)
        and value not in (".", "..")
        and "/" not in value
        and "\\" not in value
        and "\0" not in value
    )


def check_rollout_id(value: str) -> str:
    """A rollout id is one path segment (it names a directory): non-empty, not ``.``/``..``, no separators."""
    if not _one_segment(value):
        raise ValueError(f"rollout id must be a single path segment, got {value!r}")
    return value


def check_time_budget(value: float | None) -> float | None:
    """A workflow or grader budget in seconds: None (no limit) or finite; 0 or less is a spent budget
    (the rollout queued too long upstream), not an error."""
    if value is not None and not math.isfinite(value):
        raise ValueError("timeouts must be finite numbers of seconds")
    return value


class ExecutionRequest(BaseModel):
    """One rollout for a backend to execute (the prompt, the label, and the two time budgets)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    prompt: list[dict[str, Any]]
    label: str | None = None
    metadata: dict[str, Any] | None = None
    agent_timeout_sec: float | None = None
    grader_timeout_sec: float | None = None

    @field_validator("id")
    @classmethod
    def _segment(cls, value: str) -> str:
        return check_rollout_id(value)

    @field_validator("agent_timeout_sec", "grader_timeout_sec")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        return check_time_budget(value)


_REQUEST_GIVEN = frozenset(ExecutionRequest.model_fields)


def _budget(value: Any) -> bool:
    return value is None or (type(value) is float and math.isfinite(value))


def plain_request(
    id: Any,
    prompt: Any,
    label: Any,
    metadata: Any,
    agent_timeout_sec: Any,
    grader_timeout_sec: Any,
    fresh_prompt: bool = False,
) -> bool:
    """Whether validating ``ExecutionRequest(...)`` of these values keeps them as they are (exact types, text
    keys, an id of one path segment, finite budgets), but for the copies it makes of the metadata and of
    each message (none of a ``fresh_prompt``: see :func:`execution_request`)."""
    return (
        type(id) is str
        and _one_segment(id)
        and (fresh_prompt or (type(prompt) is list and _str_keyed_dicts(prompt)))
        and (label is None or type(label) is str)
        and (metadata is None or _str_keyed(metadata))
        and _budget(agent_timeout_sec)
        and _budget(grader_timeout_sec)
    )


def execution_request(
    id: str,
    prompt: list[dict[str, Any]],
    label: str | None = None,
    metadata: dict[str, Any] | None = None,
    agent_timeout_sec: float | None = None,
    grader_timeout_sec: float | None = None,
    *,
    fresh_prompt: bool = False,
) -> ExecutionRequest:
    """``ExecutionRequest(...)`` of these values, checked without pydantic's machinery when they are
    plainly of the fields' types (a run builds one per rollout); validated the usual way otherwise.

    ``fresh_prompt``: ``prompt`` is a list of dicts with text keys made for this request alone (as
    ``eval run`` builds one per item), kept as it is rather than checked and copied.

    Example:
        >>> execution_request("r1", [{"role": "user", "content": "hi"}], "4").label
        '4'
    """
    if not plain_request(id, prompt, label, metadata, agent_timeout_sec, grader_timeout_sec, fresh_prompt):
        return ExecutionRequest(
            id=id, prompt=prompt, label=label, metadata=metadata,
            agent_timeout_sec=agent_timeout_sec, grader_timeout_sec=grader_timeout_sec,
        )  # fmt: skip
    values = {
        "id": id,
        "prompt": prompt if fresh_prompt else [message.copy() for message in prompt],
        "label": label,
        "metadata": None if metadata is None else metadata.copy(),
        "agent_timeout_sec": agent_timeout_sec,
        "grader_timeout_sec": grader_timeout_sec,
    }
    return _assembled(ExecutionRequest, values, _REQUEST_GIVEN)


class ExecutionResult(BaseModel):
    """What a backend reports after the workflow step and after the grading step."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    status: RolloutStatus
    sample: RolloutSample | None = None
    err_message: str | None = None
    err_category: RolloutErrorCategory | None = None
    # Diagnostics for logs and the run directory; never sent over the wire.
    extra_fields: dict[str, Any] = Field(default_factory=dict, exclude=True)


_RESULT_GIVEN = frozenset({"status", "sample"})


def success_result(sample: RolloutSample | None) -> ExecutionResult:
    """``ExecutionResult(status=RolloutStatus.SUCCESS, sample=sample)`` without pydantic's machinery (a
    local rollout reports two per item; a sample, or None, is what validating it would keep).

    Example:
        >>> success_result(None) == ExecutionResult(status=RolloutStatus.SUCCESS, sample=None)
        True
    """
    if sample is not None and not isinstance(sample, RolloutSample):
        return ExecutionResult(status=RolloutStatus.SUCCESS, sample=sample)
    values: dict[str, Any] = {
        "status": RolloutStatus.SUCCESS,
        "sample": sample,
        "err_message": None,
        "err_category": None,
        "extra_fields": {},
    }
    return _assembled(ExecutionResult, values, _RESULT_GIVEN)
