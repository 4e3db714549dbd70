"""What a remote worker needs to rebuild an ``eval-rubric`` session's executor: picklable data only.

The records travel once per worker with the spec; each worker prepares its judge requests, imports an
``@osmosis_rubric`` function by its ``module:attr`` path, and opens its own transport pool.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, ClassVar

from osmosis_ai.rubric.config import RubricEntry
from osmosis_ai.rubric.records import RubricRecord

__all__ = ["JudgeExecutorSpec"]


@dataclass(frozen=True)
class JudgeExecutorSpec:
    """How to build a :class:`~osmosis_ai.rubric.engine.JudgeExecutor` anywhere.

    Args:
        rubric_id: The score's name.
        entry: The rubric config entry.
        records: Every record of the session (indexed from 1 like the work items).
        overrides: Judge option overrides (``base_url``, ``timeout``, ...).
        function: An ``@osmosis_rubric`` function as ``module:attr``, or None for the config's judge.
        concurrency: Connections of each worker's transport pool.

    Example:
        >>> JudgeExecutorSpec("r", entry, records, function="rubrics:polite").modules()  # doctest: +SKIP
        ['rubrics']
    """

    rubric_id: str
    entry: RubricEntry
    records: list[RubricRecord]
    overrides: dict[str, Any] | None = None
    function: str | None = None
    concurrency: int = 8
    # As the local rubric engine: judge calls and @osmosis_rubric functions share the engine loop.
    isolate: ClassVar[bool] = False

    def modules(self) -> list[str]:
        """The user's module the function comes from, if any."""
        return [self.function.rpartition(":")[0]] if self.function else []

    def paths(self) -> list[str]:
        """Nothing is read by path."""
        return []

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Any]:
        """Builds the evaluators and the executor inside one transport pool."""
        from osmosis_ai.importer import import_object
        from osmosis_ai.llm.pool import TransportPool
        from osmosis_ai.rubric.engine import JudgeExecutor
        from osmosis_ai.rubric.runner import build_evaluators

        function = None
        if self.function:
            function = import_object(self.function, what="--function", example="rubrics:score_politeness")
        evaluators, previews = build_evaluators(
            self.entry, self.records, overrides=self.overrides, function=function
        )
        async with TransportPool(max_connections=self.concurrency):
            yield JudgeExecutor(self.rubric_id, evaluators, previews)
