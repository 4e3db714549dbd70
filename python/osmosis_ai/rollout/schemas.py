"""The wire schemas of the remote rollout protocol (pydantic v2).

TrainGate sends a :class:`RolloutRequest` to ``POST /v1/rollout/init`` and receives an :class:`InitResponse`;
the agent then talks to TrainGate's ``/v1/chat/completions`` with :class:`CompletionsRequest` and reports
once with a :class:`RolloutResponse` to ``/v1/rollout/completed``. Field names and defaults are the
established ones, so payloads stay interchangeable with the established package.
"""

from __future__ import annotations

import functools
import json
import os
from enum import Enum
from typing import Any, TypedDict
from urllib.parse import urlsplit

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "DEFAULT_MAX_METADATA_SIZE_BYTES",
    "CompletionUsage",
    "CompletionsChoice",
    "CompletionsRequest",
    "CompletionsResponse",
    "InitResponse",
    "MessageDict",
    "OpenAIFunctionCallSchema",
    "OpenAIFunctionParametersSchema",
    "OpenAIFunctionParsedSchema",
    "OpenAIFunctionPropertySchema",
    "OpenAIFunctionSchema",
    "OpenAIFunctionToolCall",
    "OpenAIFunctionToolSchema",
    "RolloutMetrics",
    "RolloutRequest",
    "RolloutResponse",
    "RolloutStatus",
    "SamplingParamsDict",
    "ToolResponse",
    "get_max_metadata_size_bytes",
    "set_max_metadata_size_bytes",
]

DEFAULT_MAX_METADATA_SIZE_BYTES = 1024 * 1024
METADATA_LIMIT_ENV = "OSMOSIS_ROLLOUT_MAX_METADATA_SIZE_BYTES"
MAX_ROLLOUT_ID_LENGTH = 256

# Set by set_max_metadata_size_bytes; None means "the environment variable, else the default".
_metadata_limit_override: int | None = None
_LIMIT_KEY = os.environ.encodekey(METADATA_LIMIT_ENV)


def get_max_metadata_size_bytes() -> int:
    """Returns the largest accepted ``RolloutRequest.metadata``, in bytes of UTF-8 JSON.

    The value set with :func:`set_max_metadata_size_bytes` wins; otherwise the environment variable
    ``OSMOSIS_ROLLOUT_MAX_METADATA_SIZE_BYTES`` (a positive integer); otherwise 1 MiB.

    Example:
        >>> get_max_metadata_size_bytes() >= 1
        True
    """
    if _metadata_limit_override is not None:
        return _metadata_limit_override
    raw = _limit_variable().strip()
    if not raw:
        return DEFAULT_MAX_METADATA_SIZE_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{METADATA_LIMIT_ENV} must be a positive integer (bytes), got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{METADATA_LIMIT_ENV} must be a positive integer (bytes), got {raw!r}")
    return value


def _limit_variable() -> str:
    """``OSMOSIS_ROLLOUT_MAX_METADATA_SIZE_BYTES`` as the environment holds it now ("" when unset).

    Read for every request with metadata: ``os.environ.get`` of an unset variable raises and catches a
    KeyError inside (about 2 us, a third of the request's validation), so the mapping under ``os.environ``
    (CPython's, updated by every change made through ``os.environ``) is asked directly where there is one.
    """
    data = getattr(os.environ, "_data", None)
    if not isinstance(data, dict):
        return os.environ.get(METADATA_LIMIT_ENV, "")
    raw = data.get(_LIMIT_KEY)
    return "" if raw is None else os.environ.decodevalue(raw)


def set_max_metadata_size_bytes(size_bytes: int) -> None:
    """Sets the largest accepted ``RolloutRequest.metadata`` for this process.

    Args:
        size_bytes: The limit in bytes of UTF-8 JSON; must be a positive integer.

    Raises:
        ValueError: ``size_bytes`` is not a positive integer.

    Example:
        >>> set_max_metadata_size_bytes(2 * 1024 * 1024)
    """
    global _metadata_limit_override
    if isinstance(size_bytes, bool) or not isinstance(size_bytes, int) or size_bytes <= 0:
        raise ValueError(
            f"max metadata size must be positive (an integer number of bytes), got {size_bytes!r}"
        )
    _metadata_limit_override = size_bytes


def _check_rollout_id(value: str) -> str:
    if not value.strip():
        raise ValueError("rollout_id cannot be empty or whitespace only")
    if len(value) > MAX_ROLLOUT_ID_LENGTH:
        raise ValueError(f"rollout_id must be at most {MAX_ROLLOUT_ID_LENGTH} characters, got {len(value)}")
    return value


@functools.lru_cache(maxsize=64)
def _check_http_url(value: str, field: str) -> str:
    # Cached: every request of an eval carries the same server_url, and urlsplit is a real share of a run.
    try:
        parts = urlsplit(value)
    except ValueError as exc:
        raise ValueError(f"{field} is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{field} must be an http:// or https:// URL with a host, got {value!r}")
    return value


class MessageDict(TypedDict, total=False):
    """One chat message in OpenAI format."""

    role: str
    content: Any
    tool_calls: list[dict[str, Any]]
    tool_call_id: str
    name: str


class SamplingParamsDict(TypedDict, total=False):
    """Sampling parameters an agent may forward to ``ctx.chat``."""

    temperature: float
    top_p: float
    max_tokens: int
    stop: str | list[str]
    logprobs: bool


# --- tool definitions -------------------------------------------------------------------------------------


class OpenAIFunctionPropertySchema(BaseModel):
    """One parameter of a tool. JSON-schema keys beyond these (``items``, ``minimum``...) are kept."""

    model_config = ConfigDict(extra="allow")

    type: str | list[str]
    description: str | None = None
    enum: list[Any] | None = None


class OpenAIFunctionParametersSchema(BaseModel):
    """The JSON schema of a tool's arguments (an object)."""

    model_config = ConfigDict(extra="allow")

    type: str = "object"
    properties: dict[str, OpenAIFunctionPropertySchema] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)


class OpenAIFunctionSchema(BaseModel):
    """A function a model may call."""

    name: str
    description: str
    parameters: OpenAIFunctionParametersSchema = Field(default_factory=OpenAIFunctionParametersSchema)
    strict: bool = False


class OpenAIFunctionToolSchema(BaseModel):
    """A tool in OpenAI format; serialise with ``model_dump(exclude_none=True)`` for LLM APIs.

    Example:
        >>> OpenAIFunctionToolSchema(type="function", function={"name": "add", "description": "Adds."})
        ... # doctest: +ELLIPSIS
        OpenAIFunctionToolSchema(...)
    """

    type: str = "function"
    function: OpenAIFunctionSchema


class OpenAIFunctionParsedSchema(BaseModel):
    """A tool call as the model wrote it: arguments still a JSON string."""

    name: str
    arguments: str


class OpenAIFunctionCallSchema(BaseModel):
    """A tool call with decoded arguments."""

    name: str
    arguments: dict[str, Any]

    @classmethod
    def from_openai_function_parsed_schema(
        cls, parsed: OpenAIFunctionParsedSchema
    ) -> tuple[OpenAIFunctionCallSchema, bool]:
        """Decodes a parsed call's arguments.

        Args:
            parsed: The call with its arguments as a JSON string.

        Returns:
            The decoded call and whether decoding failed (bad JSON or not an object; arguments are then
            ``{}``).
        """
        try:
            arguments = json.loads(parsed.arguments)
        except (json.JSONDecodeError, TypeError):
            return cls(name=parsed.name, arguments={}), True
        if not isinstance(arguments, dict):
            return cls(name=parsed.name, arguments={}), True
        return cls(name=parsed.name, arguments=arguments), False


class OpenAIFunctionToolCall(BaseModel):
    """A tool call with its id."""

    id: str
    type: str = "function"
    function: OpenAIFunctionCallSchema


class ToolResponse(BaseModel):
    """What a tool returned: text, and optionally images or videos."""

    text: str | None = None
    image: list[Any] | None = None
    video: list[Any] | None = None

    def is_empty(self) -> bool:
        """True when the response carries neither text nor media."""
        return not self.text and not self.image and not self.video

    def is_text_only(self) -> bool:
        """True when the response carries text and no media."""
        return bool(self.text) and not self.image and not self.video


# --- rollout protocol -------------------------------------------------------------------------------------


class RolloutMetrics(BaseModel):
    """Timing and token counts of one rollout."""

    total_latency_ms: float = 0.0
    llm_latency_ms: float = 0.0
    tool_latency_ms: float = 0.0
    num_llm_calls: int = 0
    num_tool_calls: int = 0
    prompt_tokens: int = 0
    response_tokens: int = 0
    max_context_tokens: int = 0


class RolloutRequest(BaseModel):
    """What TrainGate sends to ``POST /v1/rollout/init``.

    Example:
        >>> RolloutRequest(rollout_id="r1", server_url="http://127.0.0.1:8080",
        ...                messages=[{"role": "user", "content": "hi"}], completion_params={}).max_turns
        10
    """

    rollout_id: str = Field(max_length=MAX_ROLLOUT_ID_LENGTH)
    server_url: str
    messages: list[dict[str, Any]]
    completion_params: dict[str, Any]
    tool_server_url: str | None = None
    max_turns: int = 10
    max_tokens_total: int = 8192
    metadata: dict[str, Any] = Field(default_factory=dict)
    api_key: str | None = Field(default=None, repr=False)
    idempotency_key: str | None = None

    @field_validator("rollout_id")
    @classmethod
    def _rollout_id(cls, value: str) -> str:
        return _check_rollout_id(value)

    @field_validator("server_url")
    @classmethod
    def _server_url(cls, value: str) -> str:
        return _check_http_url(value, "server_url")

    @field_validator("metadata")
    @classmethod
    def _metadata_size(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            # orjson writes the same compact UTF-8 JSON as json.dumps(ensure_ascii=False) at a fraction of the CPU.
            encoded = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata must be JSON-serialisable: {exc}") from None
        limit = get_max_metadata_size_bytes()
        if len(encoded) > limit:
            raise ValueError(
                f"metadata size exceeds maximum of {limit} bytes: {len(encoded)} bytes as JSON "
                f"(raise it with set_max_metadata_size_bytes or {METADATA_LIMIT_ENV})"
            )
        return value


class InitResponse(BaseModel):
    """The 202 answer to ``/v1/rollout/init``: the tools the agent offers for this rollout."""

    rollout_id: str
    tools: list[OpenAIFunctionToolSchema | dict[str, Any]] = Field(default_factory=list)


class RolloutStatus(str, Enum):
    """How a rollout ended."""

    COMPLETED = "COMPLETED"
    ERROR = "ERROR"


class RolloutResponse(BaseModel):
    """The one callback to TrainGate's ``/v1/rollout/completed``."""

    rollout_id: str
    status: RolloutStatus
    final_messages: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str | None = None
    error_message: str | None = None
    reward: float | None = None
    metrics: RolloutMetrics | None = None
    extra_fields: dict[str, Any] = Field(default_factory=dict)


class CompletionsRequest(BaseModel):
    """The body the agent's LLM client posts to TrainGate's ``/v1/chat/completions``."""

    model: str = "default"
    messages: list[dict[str, Any]]
    rollout_id: str = Field(max_length=MAX_ROLLOUT_ID_LENGTH)
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 512
    stop: list[str] | None = None
    logprobs: bool = True

    @field_validator("rollout_id")
    @classmethod
    def _rollout_id(cls, value: str) -> str:
        return _check_rollout_id(value)


class CompletionUsage(BaseModel):
    """Token counts of one completion."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class CompletionsChoice(BaseModel):
    """One choice of a completion."""

    index: int = 0
    message: dict[str, Any]
    finish_reason: str | None = "stop"


class CompletionsResponse(BaseModel):
    """TrainGate's answer to ``/v1/chat/completions`` (OpenAI shape plus token ids and logprobs)."""

    id: str
    object: str = "chat.completion"
    created: int
    model: str = "default"
    choices: list[CompletionsChoice]
    usage: CompletionUsage | None = None
    token_ids: list[Any] = Field(default_factory=list)
    logprobs: list[Any] = Field(default_factory=list)
    prompt_token_ids: list[Any] | None = None
