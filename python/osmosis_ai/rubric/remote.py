"""What a remote worker needs to rebuild an ``eval-rubric`` session's executor: picklable data only.

Each work item carries its record's row; the spec carries where the records come from (not the records),
so each worker builds a record's judge request from its row when its run starts, imports an
``@osmosis_rubric`` function (a module travels as a module, a ``file.py`` with its folder, as eval
functions do: :mod:`osmosis_ai.eval.remote`), and opens its own transport pool.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from osmosis_ai.rubric.config import RubricEntry
from osmosis_ai.rubric.records import RecordSource

__all__ = ["JudgeExecutorSpec"]


@dataclass(frozen=True)
class JudgeExecutorSpec:
    """How to build a :class:`~osmosis_ai.rubric.engine.JudgeExecutor` anywhere.

    Args:
        rubric_id: The score's name.
        entry: The rubric config entry.
        source: Where the session's records come from (rebuilt from each work item's row).
        overrides: Judge option overrides (``base_url``, ``timeout``, ...).
        function: An ``@osmosis_rubric`` function as ``module:attr`` or ``path/to/file.py:attr``, or None
            for the config's judge.
        concurrency: Connections of each worker's transport pool.
        root: The driver's working directory, which a relative file is read from.

    Example:
        >>> JudgeExecutorSpec("r", entry, source, function="rubrics:polite").modules()  # doctest: +SKIP
        ['rubrics']
    """

    rubric_id: str
    entry: RubricEntry
    source: RecordSource
    overrides: dict[str, Any] | None = None
    function: str | None = None
    concurrency: int = 8
    root: str = field(default_factory=os.getcwd)
    # As the local rubric engine: judge calls and @osmosis_rubric functions share the engine loop.
    isolate: ClassVar[bool] = False

    def modules(self) -> list[str]:
        """The function's module, when it is named by module."""
        from osmosis_ai.eval.remote import eval_fn_modules

        return eval_fn_modules([self.function] if self.function else [])

    def paths(self) -> list[str]:
        """The folder of a function named by file (``path/to/file.py:fn``; its siblings import)."""
        from osmosis_ai.eval.remote import eval_fn_paths

        return eval_fn_paths([self.function] if self.function else [], self.root)

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Any]:
        """Builds the evaluators and the executor inside one transport pool."""
        from osmosis_ai.eval.remote import worker_target
        from osmosis_ai.importer import import_object
        from osmosis_ai.llm.pool import TransportPool
        from osmosis_ai.rubric.engine import JudgeExecutor
        from osmosis_ai.rubric.runner import RecordJudge

        function = None
        if self.function:
            target = worker_target(self.function, self.root)
            function = import_object(target, what="--function", example="rubrics:score_politeness")
        calls = RecordJudge(self.entry, self.source, self.overrides, function)
        async with TransportPool(max_connections=self.concurrency):
            yield JudgeExecutor(self.rubric_id, calls)
