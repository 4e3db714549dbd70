"""The agent contract: what a user's agent loop subclasses, receives and returns.

The same contract runs in local eval (an LLM client over LiteLLM) and behind ``osmosis serve`` (an LLM
client that talks to TrainGate); the agent cannot tell them apart.
"""

from __future__ import annotations

import abc
import json
import logging
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from osmosis_ai._fresh import FRESH as _FRESH
from osmosis_ai.redact import redact
from osmosis_ai.rollout.schemas import OpenAIFunctionToolSchema, RolloutMetrics, RolloutRequest

__all__ = [
    "CompletionsResult",
    "LLMClientProtocol",
    "RolloutAgentLoop",
    "RolloutContext",
    "RolloutResult",
    "checked_result",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompletionsResult:
    """One LLM reply as the agent sees it.

    Attributes:
        message: The assistant message (OpenAI format).
        token_ids: Token ids of the reply, when the server sent them.
        logprobs: Log-probabilities of the reply, when the server sent them.
        usage: Token counts (``prompt_tokens``, ``completion_tokens``, ``total_tokens``).
        finish_reason: Why the model stopped (``"stop"``, ``"tool_calls"``, ``"length"``...).
    """

    message: dict[str, Any]
    token_ids: list[Any] = field(default_factory=list)
    logprobs: list[Any] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    finish_reason: str = "stop"

    def __init__(
        self,
        message: dict[str, Any],
        token_ids: list[Any] = _FRESH,
        logprobs: list[Any] = _FRESH,
        usage: dict[str, Any] = _FRESH,
        finish_reason: str = "stop",
    ) -> None:
        # The fields set in the instance's __dict__ directly, as Reply's: the generated __init__ of a frozen
        # dataclass calls object.__setattr__ per field, a microsecond of every model reply. (Still frozen.)
        fields = self.__dict__
        fields["message"] = message
        fields["token_ids"] = [] if token_ids is _FRESH else token_ids
        fields["logprobs"] = [] if logprobs is _FRESH else logprobs
        fields["usage"] = {} if usage is _FRESH else usage
        fields["finish_reason"] = finish_reason

    @property
    def has_tool_calls(self) -> bool:
        """True when the reply asks for at least one tool call."""
        return bool(self.message.get("tool_calls"))

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The reply's tool calls (``[]`` when there are none, also for an explicit ``null``)."""
        return self.message.get("tool_calls") or []

    @property
    def content(self) -> Any:
        """The reply's content (``None`` for a pure tool-call reply)."""
        return self.message.get("content")


@runtime_checkable
class LLMClientProtocol(Protocol):
    """What :class:`RolloutContext` needs from an LLM client."""

    async def chat_completions(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompletionsResult:
        """Sends the full message history and returns the reply."""
        ...

    def get_metrics(self) -> RolloutMetrics:
        """Returns the client's LLM latency, call and token counters."""
        ...


@dataclass
class RolloutResult:
    """What an agent loop's ``run`` returns.

    Attributes:
        status: ``"COMPLETED"`` or ``"ERROR"``.
        final_messages: The whole conversation, including the initial messages.
        finish_reason: Why the agent stopped.
        error_message: What went wrong, for ``"ERROR"``.
        metrics: Timing and token counts.
        reward: An optional reward the agent computed itself.
    """

    status: str
    final_messages: list[dict[str, Any]]
    finish_reason: str
    error_message: str | None = None
    metrics: RolloutMetrics | None = None
    reward: float | None = None


def checked_result(value: Any) -> RolloutResult:
    """What an agent loop's ``run`` returned, if it is a :class:`RolloutResult` (the one rule of the server,
    ``eval``, ``test`` and ``eval run``).

    Raises:
        TypeError: Anything else, named (``... got int``), instead of failing later on a missing attribute.

    Example:
        >>> checked_result(3)
        Traceback (most recent call last):
        TypeError: run() must return a RolloutResult (ctx.complete(...) or ctx.error(...)), got int
    """
    if isinstance(value, RolloutResult):
        return value
    raise TypeError(
        f"run() must return a RolloutResult (ctx.complete(...) or ctx.error(...)), got {type(value).__name__}"
    )


_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]")


@dataclass
class RolloutContext:
    """Everything one rollout's ``run`` gets: the request, its tools and the LLM client.

    Example:
        >>> async def run(self, ctx):  # inside a RolloutAgentLoop
        ...     reply = await ctx.chat(ctx.request.messages, **ctx.request.completion_params)
        ...     return ctx.complete([*ctx.request.messages, reply.message])
    """

    request: RolloutRequest
    tools: list[OpenAIFunctionToolSchema | dict[str, Any]]
    llm: LLMClientProtocol
    _start_time: float = 0.0
    _tool_latency_ms: float = 0.0
    _num_tool_calls: int = 0
    _debug_dir: str | None = None
    tool_call_log: list[dict[str, Any]] = field(default_factory=list)

    async def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompletionsResult:
        """Asks the LLM for the next message; ``kwargs`` are sampling parameters."""
        return await self.llm.chat_completions(messages, **kwargs)

    def complete(
        self,
        final_messages: list[dict[str, Any]],
        finish_reason: str = "stop",
        reward: float | None = None,
    ) -> RolloutResult:
        """Builds a ``COMPLETED`` result with this rollout's metrics."""
        return RolloutResult(
            status="COMPLETED",
            final_messages=final_messages,
            finish_reason=finish_reason,
            metrics=self._metrics(),
            reward=reward,
        )

    def error(self, error_message: str, final_messages: list[dict[str, Any]] | None = None) -> RolloutResult:
        """Builds an ``ERROR`` result (``finish_reason="error"``) with this rollout's metrics."""
        return RolloutResult(
            status="ERROR",
            final_messages=final_messages or [],
            finish_reason="error",
            error_message=error_message,
            metrics=self._metrics(),
        )

    def record_tool_call(
        self,
        latency_ms: float = 0.0,
        *,
        name: str | None = None,
        arguments: Any = None,
        result: Any = None,
        error: str | None = None,
        started: float | None = None,
    ) -> None:
        """Counts one tool call and its latency into the rollout's metrics.

        With ``name``, the call is also appended to ``tool_call_log`` as ``{name, arguments, result,
        error, duration_ms, started_ms}``; local runs copy that list into the results log, and the
        report's run card shows the calls as a timed transcript. ``started`` is the
        :func:`time.monotonic` reading when the call began (default: ``latency_ms`` before now; give it
        for calls run in parallel and recorded after); ``started_ms`` is that moment in ms from the
        rollout's start (None when the context has no start time).

        Example:
            >>> ctx.record_tool_call(12.5, name="add", arguments={"a": 1}, result="3")  # doctest: +SKIP
        """
        self._num_tool_calls += 1
        self._tool_latency_ms += latency_ms
        if name is not None:
            began = time.monotonic() - latency_ms / 1000.0 if started is None else started
            self.tool_call_log.append(
                {
                    "name": name,
                    "arguments": arguments,
                    "result": result,
                    "error": error,
                    "duration_ms": round(latency_ms, 3),
                    "started_ms": round(max(0.0, (began - self._start_time) * 1000.0), 3)
                    if self._start_time > 0
                    else None,
                }
            )

    @property
    def debug_enabled(self) -> bool:
        """True when a debug directory is set (``osmosis serve --log DIR``, eval ``--debug``)."""
        return self._debug_dir is not None

    def log_event(self, event_type: str, **data: Any) -> None:
        """Appends one JSON line to ``<debug dir>/<rollout id>.jsonl``; does nothing without a debug dir.

        Values that are not JSON are written with ``str``. Characters other than letters, digits, ``.``,
        ``_`` and ``-`` in the rollout id are replaced by ``_`` in the file name, so an id cannot point
        outside the directory. Write errors are logged, never raised.
        """
        if self._debug_dir is None:
            return
        record = {"event": event_type, "rollout_id": self.request.rollout_id, **data}
        name = _UNSAFE_FILENAME.sub("_", self.request.rollout_id).lstrip(".") or "rollout"
        try:
            os.makedirs(self._debug_dir, exist_ok=True)
            line = redact(json.dumps(record, default=str, ensure_ascii=False))  # the one gate of every sink
            with open(os.path.join(self._debug_dir, f"{name}.jsonl"), "a", encoding="utf-8") as out:
                out.write(line + "\n")
        except OSError as exc:
            logger.warning("could not write debug event for rollout %s: %s", self.request.rollout_id, exc)

    def _metrics(self) -> RolloutMetrics:
        # The package's own clients hand over their counters as fields, so the rollout's metrics are one
        # model (built and validated once per rollout), not the client's model and then a second one.
        fields = getattr(self.llm, "metric_fields", None)
        llm = fields() if fields is not None else _llm_fields(self.llm.get_metrics())
        total = (time.monotonic() - self._start_time) * 1000.0 if self._start_time > 0 else 0.0
        # Validated: pydantic-core checks these numbers in less time than model_construct's Python loop takes,
        # given one dict (the model's __init__ adds a frame and a kwargs dict: a microsecond a rollout). Every
        # field given (a client's fields may leave max_context_tokens out): all set, as before.
        own = {"total_latency_ms": total, "tool_latency_ms": self._tool_latency_ms}
        if not _CONTEXT_FIELDS.isdisjoint(llm):  # a client's field the context owns: the keywords' own error
            return RolloutMetrics(
                **own, num_tool_calls=self._num_tool_calls, **{"max_context_tokens": 0, **llm}
            )
        fields = {**own, "num_tool_calls": self._num_tool_calls, "max_context_tokens": 0, **llm}
        return RolloutMetrics.__pydantic_validator__.validate_python(fields)  # type: ignore[no-any-return]


# The metrics the context counts itself; a client's metric_fields() never sets them.
_CONTEXT_FIELDS = frozenset({"total_latency_ms", "tool_latency_ms", "num_tool_calls"})


def _llm_fields(metrics: RolloutMetrics) -> dict[str, Any]:
    """The LLM counters of a client's ``get_metrics()``."""
    return {
        "llm_latency_ms": metrics.llm_latency_ms,
        "num_llm_calls": metrics.num_llm_calls,
        "prompt_tokens": metrics.prompt_tokens,
        "response_tokens": metrics.response_tokens,
        "max_context_tokens": metrics.max_context_tokens,
    }


def _abstract_names(cls: type) -> set[str]:
    """The abstract methods of ``cls``, computed the way ``ABCMeta`` will after ``__init_subclass__``."""
    names = {name for name, value in vars(cls).items() if getattr(value, "__isabstractmethod__", False)}
    for base in cls.__bases__:
        for name in getattr(base, "__abstractmethods__", ()):
            if getattr(getattr(cls, name, None), "__isabstractmethod__", False):
                names.add(name)
    return names


class RolloutAgentLoop(abc.ABC):
    """Base class of an agent loop: declare ``name``, implement ``get_tools`` and ``async run``.

    A concrete subclass must define a non-empty ``name`` (inherited names count). Abstract intermediate
    classes — ones that still leave ``get_tools`` or ``run`` unimplemented — need no name.

    Example:
        >>> class Echo(RolloutAgentLoop):
        ...     name = "echo"
        ...     def get_tools(self, request):
        ...         return []
        ...     async def run(self, ctx):
        ...         reply = await ctx.chat(ctx.request.messages)
        ...         return ctx.complete([*ctx.request.messages, reply.message])
    """

    name: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if _abstract_names(cls):
            return
        if not getattr(cls, "name", None):
            raise TypeError(
                f"Agent loop class {cls.__name__} must define a 'name' class attribute "
                '(a non-empty string such as name = "my_agent")'
            )

    @abc.abstractmethod
    def get_tools(self, request: RolloutRequest) -> Sequence[OpenAIFunctionToolSchema | dict[str, Any]]:
        """Returns the tools offered for this rollout (``OpenAIFunctionToolSchema`` objects or dicts)."""

    @abc.abstractmethod
    async def run(self, ctx: RolloutContext) -> RolloutResult:
        """Runs one rollout and returns ``ctx.complete(...)`` or ``ctx.error(...)``."""

    def get_default_tools(self) -> list[OpenAIFunctionToolSchema | dict[str, Any]]:
        """The tools offered when no particular request is in view (listings, ``osmosis validate``).

        Calls :meth:`get_tools` with a placeholder request (metadata ``{"_validation": True}``);
        override it when ``get_tools`` needs fields a real request carries.
        """
        from osmosis_ai.rollout.requests import placeholder_request

        return list(self.get_tools(placeholder_request()))
