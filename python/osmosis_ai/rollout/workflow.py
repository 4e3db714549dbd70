"""The 0.3 classes a rollout author implements: ``AgentWorkflow`` (produces a sample) and ``Grader`` (rewards it).

A workflow's ``run(ctx)`` returns an :class:`AgentWorkflowOutput`, a bare list of messages, or ``None``
(the sample then comes from the :class:`~osmosis_ai.rollout.context.SampleSource` registered on the
ambient rollout context, as the agent-framework integrations do). A grader's ``grade(ctx)`` attaches the
reward with ``ctx.set_reward(x)``; its return value is ignored.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from osmosis_ai.rollout.context import AgentWorkflowContext, GraderContext

__all__ = [
    "AgentWorkflow",
    "AgentWorkflowConfig",
    "AgentWorkflowOutput",
    "BaseConfig",
    "ConcurrencyConfig",
    "Grader",
    "GraderConfig",
    "Messages",
]

Messages = list[dict[str, Any]]
"""A conversation: OpenAI-style message dicts (what ``AgentWorkflow.run`` may return bare)."""


class ConcurrencyConfig(BaseModel):
    """How many rollouts a backend runs at once (``None``: no limit)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    max_concurrent: int | None = Field(default=None, ge=1)


class BaseConfig(BaseModel):
    """A named, free-form configuration object (extra keys are kept as attributes).

    Example:
        >>> BaseConfig(name="calc", temperature=0.2).temperature
        0.2
    """

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    name: str
    description: str | None = None


class AgentWorkflowConfig(BaseConfig):
    """The configuration a workflow instance gets (a deep copy per rollout)."""

    concurrency: ConcurrencyConfig = Field(default_factory=ConcurrencyConfig)


class GraderConfig(BaseConfig):
    """The configuration a grader instance gets."""

    concurrency: ConcurrencyConfig = Field(default_factory=ConcurrencyConfig)


class AgentWorkflowOutput(BaseModel):
    """What a workflow returns: the conversation (``None``: use the registered sample source) and metrics.

    ``info`` is kept for the caller and never passed to graders.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, revalidate_instances="always")

    messages: Messages | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    info: dict[str, Any] = Field(default_factory=dict)


TConfig = TypeVar("TConfig", bound=AgentWorkflowConfig)


class AgentWorkflow(ABC, Generic[TConfig]):
    """One agent episode per dataset row. Subclass it and implement :meth:`run`.

    Args:
        config: This rollout's copy of the workflow configuration, or None.

    Example:
        >>> class Echo(AgentWorkflow):
        ...     async def run(self, ctx):
        ...         return [*ctx.prompt, {"role": "assistant", "content": "hi"}]
    """

    def __init__(self, config: TConfig | None = None) -> None:
        self.config = config

    @abstractmethod
    async def run(self, ctx: AgentWorkflowContext) -> AgentWorkflowOutput | list[dict[str, Any]] | None:
        """Runs the episode; see the module docstring for what it may return."""


class Grader(ABC):
    """Scores a finished rollout. Subclass it, implement :meth:`grade`, and call ``ctx.set_reward``.

    Example:
        >>> class Exact(Grader):
        ...     async def grade(self, ctx):
        ...         answer = ctx.sample.messages[-1]["content"]
        ...         ctx.set_reward(1.0 if answer.strip() == ctx.label else 0.0)
    """

    def __init__(self, config: GraderConfig | None = None) -> None:
        self.config = config

    @abstractmethod
    async def grade(self, ctx: GraderContext) -> Any:
        """Grades ``ctx.sample`` against ``ctx.label``; the return value is ignored."""
