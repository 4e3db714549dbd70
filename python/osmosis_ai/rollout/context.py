"""The 0.3 contexts: what a workflow and a grader see, and the ambient per-rollout context.

``RolloutContext`` (a context manager over a ContextVar) carries the chat-completions URL and key the
workflow's model calls use, and the one :class:`SampleSource` a framework integration registers. This is
the 0.3 class; ``osmosis_ai.rollout.RolloutContext`` stays the 0.2 agent-loop context users import.
"""

from __future__ import annotations

import contextvars
import os
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.rollout.sample import RolloutSample, checked_reward

__all__ = [
    "AgentWorkflowContext",
    "GraderContext",
    "RolloutContext",
    "SampleSource",
    "get_rollout_context",
]

_CURRENT: contextvars.ContextVar[RolloutContext | None] = contextvars.ContextVar(
    "osmosis_rollout_context", default=None
)


class SampleSource(ABC):
    """Something that can hand over the rollout's sample once the workflow finished (an agent's memory)."""

    @abstractmethod
    async def get_sample(self) -> RolloutSample:
        """The sample this rollout produced."""


@dataclass
class RolloutContext:
    """The ambient context of one rollout; ``with RolloutContext(...):`` makes it current.

    Empty fields are filled from ``OSMOSIS_CHAT_COMPLETIONS_URL``, ``OSMOSIS_API_KEY`` and
    ``OSMOSIS_ROLLOUT_ID`` (how container runners pass them).

    Example:
        >>> with RolloutContext(chat_completions_url="http://127.0.0.1:1/v1", rollout_id="r1") as ctx:
        ...     get_rollout_context() is ctx
        True
    """

    chat_completions_url: str | None = None
    api_key: str | None = None
    rollout_id: str | None = None
    sample_source: SampleSource | None = None
    # Set by a local run (``osmosis eval run``): answers chat_completions() in this process, no HTTP hop.
    in_process: Callable[[str, Mapping[str, Any]], Awaitable[dict[str, Any]]] | None = field(
        default=None, repr=False
    )
    _token: contextvars.Token[RolloutContext | None] | None = field(default=None, repr=False, init=False)

    def __post_init__(self) -> None:
        self.chat_completions_url = self.chat_completions_url or os.environ.get(
            "OSMOSIS_CHAT_COMPLETIONS_URL"
        )
        self.api_key = self.api_key or os.environ.get("OSMOSIS_API_KEY")
        self.rollout_id = self.rollout_id or os.environ.get("OSMOSIS_ROLLOUT_ID")

    def set_sample_source(self, source: SampleSource) -> None:
        """Registers where the sample comes from; a rollout has one sample, so a second call is an error."""
        if self.sample_source is not None:
            raise ValueError(
                "a sample source is already registered for this rollout (one sample per rollout)"
            )
        self.sample_source = source

    async def get_sample(self) -> RolloutSample | None:
        """The registered source's sample, or None when nothing registered one."""
        return None if self.sample_source is None else await self.sample_source.get_sample()

    async def chat_completions(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """One chat completion for this rollout: ``body`` is an OpenAI chat-completions request.

        Returns the ``chat.completion`` reply (``choices``, ``usage``); ``stream`` is ignored (the whole
        reply comes back at once). In ``osmosis eval run`` the call goes to the run's LLM layer in this
        process, skipping the HTTP hop to the bridge (same retries, token count and error types); anywhere
        else it is POSTed to ``chat_completions_url + "/chat/completions"`` with ``api_key``.

        Raises:
            osmosis_ai.llm.retry.ProviderCallError: The call failed for good (after the retry policy).

        Example:
            >>> reply = await get_rollout_context().chat_completions(  # doctest: +SKIP
            ...     {"model": "default", "messages": ctx.prompt}
            ... )
            >>> message = reply["choices"][0]["message"]  # doctest: +SKIP
        """
        if self.in_process is not None:
            return await self.in_process(self.rollout_id or "", body)
        if not self.chat_completions_url:
            raise RuntimeError("this rollout has no chat-completions URL (OSMOSIS_CHAT_COMPLETIONS_URL)")
        from osmosis_ai.llm.bridge import reply_body, split_request
        from osmosis_ai.llm.providers import Endpoint
        from osmosis_ai.llm.transport import make_transport

        model = str(body.get("model") or "default")
        endpoint = Endpoint(model, "openai", model, self.chat_completions_url, self.api_key)
        transport = make_transport(endpoint, max_connections=1)  # a base URL: the direct transport
        try:
            return reply_body(await transport.complete(*split_request(body)))
        finally:
            await transport.aclose()

    def __enter__(self) -> RolloutContext:
        self._token = _CURRENT.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None


def get_rollout_context() -> RolloutContext | None:
    """The rollout context of the running rollout, or None outside one."""
    return _CURRENT.get()


class _Artifacts:
    """``artifacts_dir``, created on first use: most rollouts write no artifact, and a directory per rollout
    made up front was the largest CPU cost per item of a local run."""

    # A string until first asked for: a Path per context was a measurable share of an item's CPU too.
    _artifacts: Path | str | None

    @property
    def artifacts_dir(self) -> Path | None:
        """This rollout's artifact directory (created when first asked for), or None when there is none."""
        path = self._artifacts
        if path is None:
            return None
        if isinstance(path, str):
            self._artifacts = path = Path(path)
        if not path.is_dir():
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError:
                self._artifacts = None  # artifacts are optional; an unwritable root must not fail the rollout
        return None if self._artifacts is None else path


class AgentWorkflowContext(_Artifacts):
    """What ``AgentWorkflow.run`` gets: the initial messages, its config copy, the row's metadata.

    Example:
        >>> AgentWorkflowContext(prompt=[{"role": "user", "content": "hi"}]).metadata is None
        True
    """

    def __init__(
        self,
        prompt: list[dict[str, Any]],
        config: Any = None,
        metadata: dict[str, Any] | None = None,
        artifacts_dir: Path | str | None = None,
    ) -> None:
        self.prompt = prompt
        self.config = config
        self.metadata = metadata
        self._artifacts = artifacts_dir


class GraderContext(_Artifacts):
    """What ``Grader.grade`` gets: the label (ground truth), the sample, the row's metadata.

    Example:
        >>> ctx = GraderContext(label="4", sample=RolloutSample(messages=[]))
        >>> ctx.set_reward(1)
        >>> ctx.sample.reward
        1.0
    """

    def __init__(
        self,
        label: str | None = None,
        sample: RolloutSample | None = None,
        project_path: str | None = None,
        metadata: dict[str, Any] | None = None,
        artifacts_dir: Path | str | None = None,
    ) -> None:
        self.label = label
        self.sample = sample
        self.project_path = project_path
        self.metadata = metadata
        self._artifacts = artifacts_dir

    def set_reward(self, reward: float) -> None:
        """Attaches the reward to the sample; it must be a finite number (else a ValueError)."""
        sample = self.sample
        if sample is None:
            raise ValueError("there is no sample to reward (the workflow produced none)")
        if type(sample) is RolloutSample:
            # What assigning validates, without pydantic's assignment machinery (once per rollout).
            try:
                checked = checked_reward(reward)
            except ValueError as exc:
                raise ValueError(f"set_reward: {exc}") from None
            sample.__dict__["reward"] = checked
            sample.__pydantic_fields_set__.add("reward")
            return
        from pydantic import ValidationError

        try:
            sample.reward = reward  # validated on assignment: NaN, inf, bool or text raise
        except ValidationError as exc:
            # Still a ValueError (a validation_error failure), with the one line that says what was wrong.
            raise ValueError(f"set_reward: {exc.errors()[0]['msg'].removeprefix('Value error, ')}") from None
