"""The 0.3 rollout HTTP protocol's bodies: what the controller sends and what the callbacks carry."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from osmosis_ai.rollout.sample import check_rollout_id, check_time_budget

__all__ = ["CancelRequest", "RolloutInitRequest"]


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
