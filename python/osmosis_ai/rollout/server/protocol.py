"""The 0.3 rollout HTTP protocol's bodies: what the controller sends and what the callbacks carry.

The request models validate what arrives; the callback and response models (``RolloutCompleteRequest``,
``GraderCompleteRequest``, ...) describe, with the established 0.3 names and fields, the bodies the server
sends, so a controller written in Python can parse them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from osmosis_ai.rollout.sample import (
    GraderStatus,
    RolloutErrorCategory,
    RolloutSample,
    RolloutStatus,
    check_rollout_id,
    check_time_budget,
)

__all__ = [
    "CancelRequest",
    "CancelRolloutsRequest",
    "CancelRolloutsResponse",
    "GraderCompleteRequest",
    "GraderInitRequest",
    "GraderInitResponse",
    "RolloutCompleteRequest",
    "RolloutInitRequest",
    "RolloutInitResponse",
    "RolloutStatusResponse",
]


class RolloutInitRequest(BaseModel):
    """``POST /rollout``: one rollout to run, where its model calls go, where its results are posted."""

    model_config = ConfigDict(extra="ignore")

    initial_messages: list[dict[str, Any]]
    label: str | None = None
    metadata: dict[str, Any] | None = None
    rollout_id: str | None = None
    chat_completions_url: str
    controller_api_key: str | None = None
    llm_api_key: str | None = None
    completion_callback_url: str
    grader_callback_url: str | None = None
    agent_timeout_sec: float | None = None
    grader_timeout_sec: float | None = None
    extra_fields: dict[str, Any] | None = None

    @field_validator("rollout_id")
    @classmethod
    def _segment(cls, value: str | None) -> str | None:
        return None if value is None else check_rollout_id(value)

    @field_validator("llm_api_key")
    @classmethod
    def _not_empty(cls, value: str | None) -> str | None:
        if value == "":
            raise ValueError("llm_api_key must not be empty (omit it to use controller_api_key)")
        return value

    @field_validator("agent_timeout_sec", "grader_timeout_sec")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        return check_time_budget(value)


class CancelRequest(BaseModel):
    """``POST /rollout/cancel``: exactly one of ``ids``, ``prefix`` or ``all``."""

    model_config = ConfigDict(extra="forbid")

    ids: list[str] | None = None
    prefix: str | None = None
    all: bool = False

    @model_validator(mode="after")
    def _one_selector(self) -> CancelRequest:
        chosen = sum([self.ids is not None, self.prefix is not None, self.all])
        if chosen != 1:
            raise ValueError("give exactly one of ids, prefix or all=true")
        return self


CancelRolloutsRequest = CancelRequest  # the established 0.3 name


class RolloutInitResponse(BaseModel):
    """The (empty) body of ``POST /rollout``'s 202 answer."""


class CancelRolloutsResponse(BaseModel):
    """``POST /rollout/cancel``'s answer: ``cancelled_queued``, ``cancelled_running`` or ``not_found`` per id."""

    dispositions: dict[str, str]


class RolloutStatusResponse(BaseModel):
    """``GET /rollout/{id}/status``: where a rollout is (``unknown`` for ids the server never saw)."""

    rollout_id: str
    status: RolloutStatus
    reward: float | None = None
    err_message: str | None = None


class RolloutCompleteRequest(BaseModel):
    """The completion callback's body: the workflow step's outcome (the URL names the rollout too)."""

    status: RolloutStatus
    rollout_id: str | None = None
    extra_fields: dict[str, Any] | None = None
    err_message: str | None = None
    err_category: RolloutErrorCategory | None = None


class GraderInitRequest(BaseModel):
    """What a controller sends a remote grader: the one sample to grade and where to report."""

    sample: RolloutSample
    rollout_id: str | None = None
    completion_callback_url: str
    extra_fields: dict[str, Any] | None = None
    controller_api_key: str | None = None


class GraderInitResponse(BaseModel):
    """The (empty) answer of a remote grader to :class:`GraderInitRequest`."""


class GraderCompleteRequest(BaseModel):
    """The grader callback's body: the graded sample (its ``reward`` set on success), or none on failure."""

    status: GraderStatus
    rollout_id: str | None = None
    sample: RolloutSample | None = None
    err_message: str | None = None
    err_category: RolloutErrorCategory | None = None
