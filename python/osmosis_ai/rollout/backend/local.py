"""``LocalBackend``: runs an ``AgentWorkflow`` and then a ``Grader`` in this process, one call per rollout.

One execution has two steps, each reported through a callback: the workflow (its own time budget, minus
the time the rollout waited for a slot) and the grading (an independent budget). Every way a user's code
can go wrong (a wrong return type, an exception, a hang, a grader that never sets a reward or sets a NaN)
becomes a FAILURE with a category from :func:`~osmosis_ai.rollout.sample.classify_exception`; it is never
turned into a score.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from osmosis_ai._deadline import within
from osmosis_ai.rollout.backend.base import ExecutionBackend
from osmosis_ai.rollout.context import (
    AgentWorkflowContext,
    GraderContext,
    RolloutContext,
    get_rollout_context,
)
from osmosis_ai.rollout.sample import (
    ExecutionRequest,
    ExecutionResult,
    RolloutErrorCategory,
    RolloutSample,
    RolloutStatus,
    classify_exception,
    plain_copy,
    sample_from_output,
    success_result,
)
from osmosis_ai.rollout.workflow import AgentWorkflowOutput

__all__ = ["DEFAULT_MAX_CONCURRENT", "LocalBackend"]

DEFAULT_MAX_CONCURRENT = 4
ARTIFACT_ROOT_ENV = "_OSMOSIS_ROLLOUT_ARTIFACT_ROOT"

Callback = Callable[[ExecutionResult], Awaitable[Any] | Any]


def default_artifact_root() -> Path:
    """``$_OSMOSIS_ROLLOUT_ARTIFACT_ROOT``, else ``~/.osmosis``: where rollouts keep their artifacts and the
    rollout server archives finished ones (read when called)."""
    env = os.environ.get(ARTIFACT_ROOT_ENV, "").strip()
    return Path(env) if env else Path.home() / ".osmosis"


class _Unset:
    """Marks an argument not given (``None`` is a meaningful value: no limit)."""


_UNSET = _Unset()


def _resolve(value: Any, what: str) -> Any:
    if isinstance(value, str):
        from osmosis_ai.importer import import_object

        return import_object(value, what=what, example="my_rollout.main:MyWorkflow")
    return value


def _call(callback: Callback | None, result: ExecutionResult) -> Awaitable[Any] | None:
    """Calls ``callback`` (if any) with ``result``: what to await when it is a coroutine function, else None
    (no coroutine of our own per callback: two run per rollout)."""
    if callback is not None:
        outcome = callback(result)
        if outcome is not None and inspect.isawaitable(outcome):
            return outcome
    return None


class _Limiter:
    """A semaphore that also counts who waits and who runs (for ``health()``)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.queued = 0
        self.running = 0
        self._semaphore = asyncio.Semaphore(limit) if limit else None

    def try_acquire(self) -> bool:
        """Takes a slot without waiting when there is no limit (no coroutine per rollout); else False, and
        :meth:`acquire` it is."""
        if self._semaphore is not None:
            return False
        self.running += 1
        return True

    async def acquire(self) -> None:
        self.queued += 1
        try:
            if self._semaphore is not None:
                await self._semaphore.acquire()
        finally:
            self.queued -= 1
        self.running += 1

    def release(self) -> None:
        self.running -= 1
        if self._semaphore is not None:
            self._semaphore.release()


def _deadline_message(budget: float, queued: float) -> str:
    spent = f" ({queued:.1f}s of it spent queued)" if queued >= 0.05 else ""
    return f"workflow exceeded its {budget:g}s deadline{spent}"


class LocalBackend(ExecutionBackend):
    """Runs the workflow and grader in-process (each may be given as an object or a ``"module:attr"`` string).

    Args:
        workflow: An ``AgentWorkflow`` subclass (instantiated per rollout with a copy of the config) or
            an instance (shared by every rollout).
        workflow_config: The workflow's ``AgentWorkflowConfig``; its ``concurrency.max_concurrent`` limits
            rollouts in flight (None: no limit). Without a config the limit is 4.
        grader: A ``Grader`` subclass or instance, or None (no grading).
        grader_config: The grader's ``GraderConfig``.
        artifact_root: Where per-rollout artifact directories go (default ``$_OSMOSIS_ROLLOUT_ARTIFACT_ROOT``
            or ``~/.osmosis``); ``False`` for none.
        max_concurrent: Overrides the limit the config implies (``None``: no limit); for callers that
            bound concurrency themselves, as ``osmosis eval run`` does.

    Example:
        >>> backend = LocalBackend(workflow="my_rollout.main:MyWorkflow", grader="my_rollout.main:MyGrader")  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        workflow: Any,
        workflow_config: Any = None,
        grader: Any = None,
        grader_config: Any = None,
        artifact_root: str | os.PathLike[str] | bool | None = None,
        max_concurrent: int | _Unset | None = _UNSET,
    ) -> None:
        self.workflow = _resolve(workflow, "workflow")
        self.workflow_config = _resolve(workflow_config, "workflow config")
        self.grader = _resolve(grader, "grader")
        self.grader_config = _resolve(grader_config, "grader config")
        if not isinstance(max_concurrent, _Unset):
            limit = max_concurrent
        elif workflow_config is not None:
            limit = self.workflow_config.concurrency.max_concurrent
        else:
            limit = DEFAULT_MAX_CONCURRENT
        self._limiter = _Limiter(limit)
        if artifact_root is False:
            self.artifact_root: Path | None = None
        elif artifact_root is None or artifact_root is True:
            self.artifact_root = default_artifact_root()
        else:
            self.artifact_root = Path(artifact_root)

    @property
    def max_concurrent(self) -> int | None:
        """Rollouts this backend runs at once (None: no limit)."""
        return self._limiter.limit

    def health(self) -> dict[str, Any]:
        limiter = self._limiter
        return {
            "status": "ok",
            "concurrency": {
                "max_concurrent": limiter.limit,
                "queued": limiter.queued,
                "running": limiter.running,
            },
        }

    def has_capacity(self) -> bool:
        return True  # rollouts beyond the limit wait for a slot (their wait counts against their budget)

    async def execute(
        self,
        request: ExecutionRequest,
        on_workflow_complete: Callback,
        on_grader_complete: Callback | None = None,
    ) -> None:
        queued = 0.0 if self._limiter.try_acquire() else await self._wait_for_slot()
        try:
            artifacts = self._artifacts_dir(request.id)
            result = await self._run_workflow(
                request.id, plain_copy(request.prompt), request.label, request.metadata,
                request.agent_timeout_sec, queued, artifacts,
            )  # fmt: skip
            if (pending := _call(on_workflow_complete, result)) is not None:
                await pending
            if on_grader_complete is None:
                return
            graded = await self._grade(
                request.label, request.metadata, request.grader_timeout_sec, result, artifacts
            )
            if (pending := _call(on_grader_complete, graded)) is not None:
                await pending
        finally:
            self._limiter.release()

    async def run_rollout(
        self,
        request: ExecutionRequest,
        workflow_done: Callable[[ExecutionResult], object] | None = None,
        *,
        prompt_owned: bool = False,
    ) -> tuple[ExecutionResult, ExecutionResult]:
        """:meth:`execute` with both steps, for a caller in this process: the workflow's and the grader's
        results are returned rather than passed to callbacks (the grader's is a bare failure when nothing
        was graded, as ``execute`` reports it).

        Args:
            request: The rollout.
            workflow_done: Called with the workflow's result before grading starts (a plain function).
            prompt_owned: Nothing else holds ``request.prompt`` (it was made for this call), so the
                workflow gets it as it is instead of a copy.
        """
        return await self._run_fields(
            request.id, request.prompt if prompt_owned else plain_copy(request.prompt), request.label,
            request.metadata, request.agent_timeout_sec, request.grader_timeout_sec, workflow_done,
        )  # fmt: skip

    async def _run_fields(
        self,
        rollout_id: str,
        prompt: list[dict[str, Any]],
        label: str | None,
        metadata: dict[str, Any] | None,
        agent_timeout_sec: float | None,
        grader_timeout_sec: float | None,
        workflow_done: Callable[[ExecutionResult], object] | None = None,
    ) -> tuple[ExecutionResult, ExecutionResult]:
        """:meth:`run_rollout` of a request's fields rather than an :class:`ExecutionRequest` (a caller that
        makes one per rollout, ``osmosis eval run``, skips the model). The values must be what validating
        the request keeps; ``prompt`` becomes the workflow's own and ``metadata`` the grader's (the
        workflow gets a copy of it), neither copied.
        """
        queued = 0.0 if self._limiter.try_acquire() else await self._wait_for_slot()
        try:
            artifacts = self._artifacts_dir(rollout_id)
            result = await self._run_workflow(
                rollout_id, prompt, label, metadata, agent_timeout_sec, queued, artifacts
            )
            if workflow_done is not None:
                workflow_done(result)
            return result, await self._grade(label, metadata, grader_timeout_sec, result, artifacts)
        finally:
            self._limiter.release()

    async def _wait_for_slot(self) -> float:
        """Waits for a slot of the limit; returns how long that took (it counts against the workflow)."""
        arrived = time.monotonic()
        await self._limiter.acquire()
        return time.monotonic() - arrived

    def _artifacts_dir(self, rollout_id: str) -> str | None:
        # Not created here, nor made a Path: the contexts do both when the user's code first asks for it.
        return None if self.artifact_root is None else f"{self.artifact_root}/{rollout_id}/artifacts"

    def _workflow_instance(self) -> Any:
        if isinstance(self.workflow, type):
            if self.workflow_config is None:
                return self.workflow()
            return self.workflow(copy.deepcopy(self.workflow_config))
        return self.workflow

    async def _run_workflow(
        self,
        rollout_id: str,
        prompt: list[dict[str, Any]],
        label: str | None,
        metadata: dict[str, Any] | None,
        budget: float | None,
        queued: float,
        artifacts: str | None,
    ) -> ExecutionResult:
        # The workflow runs in this task, so it sees the rollout context (get_rollout_context()): the
        # caller's when it entered one (entered once: re-entering would lose the caller's reset token),
        # else one of this rollout's own. ``prompt`` is the workflow's own already.
        rollout = get_rollout_context()
        if rollout is None:
            with RolloutContext(rollout_id=rollout_id):
                return await self._run_workflow(
                    rollout_id, prompt, label, metadata, budget, queued, artifacts
                )
        remaining = None if budget is None else max(budget - queued, 0.0)
        config = self.workflow_config
        ctx = AgentWorkflowContext(
            prompt=prompt,
            config=None if config is None else copy.deepcopy(config),
            metadata=None if metadata is None else plain_copy(metadata),
            artifacts_dir=artifacts,
        )
        try:
            started = time.monotonic()
            output = await within(self._workflow_instance().run(ctx), remaining)
            if remaining is not None and time.monotonic() - started > remaining:
                # The workflow swallowed the cancellation or blocked the loop past its deadline.
                raise TimeoutError
            sample = _output_sample(output, label)
            if sample is None:  # no messages returned: the registered source's sample, if any
                sample = await _source_sample(label, rollout)
        except (TimeoutError, asyncio.TimeoutError):  # distinct classes before Python 3.11
            message = _deadline_message(budget or 0.0, queued)
            return ExecutionResult(
                status=RolloutStatus.FAILURE, err_message=message, err_category=RolloutErrorCategory.TIMEOUT
            )
        except Exception as exc:  # the user's workflow: any failure is this rollout's, classified
            return _failure(exc, "workflow")
        return success_result(sample)

    async def _grade(
        self,
        label: str | None,
        metadata: dict[str, Any] | None,
        budget: float | None,
        workflow: ExecutionResult,
        artifacts: str | None,
    ) -> ExecutionResult:
        """The grading step after ``workflow``: a bare failure when nothing is graded (the workflow failed, or
        there is no grader or nothing to grade against)."""
        if not (
            self.grader is not None
            and (label is not None or metadata is not None)
            and workflow.status is RolloutStatus.SUCCESS
        ):
            return _bare_failure(workflow)
        sample = workflow.sample
        ctx = GraderContext(label=label, sample=sample, metadata=metadata, artifacts_dir=artifacts)
        grader = self.grader
        if isinstance(grader, type):
            grader = grader(self.grader_config) if self.grader_config is not None else grader()
        if sample is None:
            return ExecutionResult(
                status=RolloutStatus.FAILURE,
                err_message="no sample to grade; the workflow must return messages or register a sample source",
                err_category=RolloutErrorCategory.VALIDATION_ERROR,
            )
        try:
            await within(grader.grade(ctx), None if budget is None else max(budget, 0.0))
            if ctx.sample is None:
                raise ValueError(
                    "no sample to grade; the workflow must return messages or register a sample source"
                )
            if not ctx.sample.remove_sample and ctx.sample.reward is None:
                raise ValueError("sample has no reward after grading; the grader must call ctx.set_reward(x)")
        except (TimeoutError, asyncio.TimeoutError):
            return ExecutionResult(
                status=RolloutStatus.FAILURE,
                sample=ctx.sample,
                err_message=f"grader exceeded its {budget:g}s deadline",
                err_category=RolloutErrorCategory.TIMEOUT,
            )
        except Exception as exc:  # the user's grader
            result = _failure(exc, "grader")
            result.sample = ctx.sample
            return result
        return success_result(ctx.sample)


def _output_sample(output: Any, label: str | None) -> RolloutSample | None:
    """The sample of the messages a workflow returned, or None when it returned none."""
    if isinstance(output, list):
        output = AgentWorkflowOutput(messages=output)
    elif output is not None and not isinstance(output, AgentWorkflowOutput):
        raise TypeError(
            "AgentWorkflow.run must return AgentWorkflowOutput, a message list, or None; "
            f"got {type(output).__name__}"
        )
    if output is not None and output.messages is not None:
        return sample_from_output(output.messages, label, output.metrics)
    return None


async def _source_sample(label: str | None, rollout: RolloutContext) -> RolloutSample | None:
    sample = await rollout.get_sample()
    if sample is not None and sample.label is None:
        sample.label = label
    return sample


def _describe(exc: Exception) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):  # one line per field, not pydantic's multi-line report
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors())
        return f"{exc.title}: {problems}"
    return str(exc)


def _failure(exc: Exception, step: str) -> ExecutionResult:
    return ExecutionResult(
        status=RolloutStatus.FAILURE,
        err_message=f"{step} raised {type(exc).__name__}: {_describe(exc)}",
        err_category=classify_exception(exc),
    )


def _bare_failure(workflow: ExecutionResult) -> ExecutionResult:
    # Nothing was graded: the workflow failed, or there is no grader or nothing to grade against.
    return ExecutionResult(
        status=RolloutStatus.FAILURE, extra_fields={"workflow_status": workflow.status.value}
    )
