"""``ExecutionBackend``: what runs rollouts for the rollout server and for ``osmosis eval run``.

Only :meth:`ExecutionBackend.execute` is abstract, as in the established 0.3 package: a custom backend
that implements just ``execute()`` can be instantiated and served. The other hooks have defaults, and the
server accepts them written either way: ``rollout_status`` / ``cancel_rollouts`` as plain or ``async``
methods, ``rollout_status`` returning a status name, a status dict or ``None`` (unknown).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from osmosis_ai.rollout.sample import ExecutionRequest, ExecutionResult

__all__ = ["ExecutionBackend", "ResultCallback"]

ResultCallback = Callable[[ExecutionResult], Awaitable[Any] | Any]
"""What a backend calls with a step's result (the server posts it to the controller's callback URL)."""


class ExecutionBackend(ABC):
    """Executes one rollout at a time per call, reporting the workflow step and then the grading step."""

    def health(self) -> dict[str, Any]:
        """``{"status": "ok", ...}``, served at ``GET /health``."""
        return {"status": "ok"}

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
        on_workflow_complete: ResultCallback,
        on_grader_complete: ResultCallback | None = None,
    ) -> None:
        """Runs the workflow (then the grader, when ``on_grader_complete`` is given) for ``request``."""

    def rollout_status(self, rollout_id: str) -> dict[str, Any] | str | None:
        """What this backend knows of a rollout the server has no record of (None: unknown)."""
        return None

    def cancel_rollouts(
        self, ids: Sequence[str] | None = None, prefix: str | None = None, all: bool = False
    ) -> dict[str, str]:
        """Cancels rollouts the server is not running itself; ``{id: disposition}`` (none by default)."""
        return {}
