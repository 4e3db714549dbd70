"""``ExecutionBackend``: what runs rollouts for the rollout server and for ``osmosis eval run``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any

from osmosis_ai.rollout.sample import ExecutionRequest, ExecutionResult

__all__ = ["ExecutionBackend"]


class ExecutionBackend(ABC):
    """Executes one rollout at a time per call, reporting the workflow step and then the grading step."""

    @abstractmethod
    def health(self) -> dict[str, Any]:
        """``{"status": "ok", "concurrency": {...}}`` (served at ``GET /health``)."""

    def has_capacity(self) -> bool:
        """False makes the server answer 429 (Retry-After) instead of accepting a rollout."""
        return True

    @property
    def max_concurrent(self) -> int | None:
        """Rollouts run at once (None: no limit); callers size their own concurrency to it."""
        return None

    @abstractmethod
    async def execute(
        self,
        request: ExecutionRequest,
        on_workflow_complete: Callable[[ExecutionResult], Awaitable[Any] | Any],
        on_grader_complete: Callable[[ExecutionResult], Awaitable[Any] | Any] | None = None,
    ) -> None:
        """Runs the workflow (then the grader, when ``on_grader_complete`` is given) for ``request``."""

    async def rollout_status(self, rollout_id: str) -> str:
        """The status of a rollout this backend knows (``unknown`` when it keeps no record)."""
        return "unknown"

    async def cancel_rollouts(self, ids: list[str]) -> dict[str, str]:
        """Cancels rollouts; the base backend tracks none, so each is ``not_found``."""
        return dict.fromkeys(ids, "not_found")
