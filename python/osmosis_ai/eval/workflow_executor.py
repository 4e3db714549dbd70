"""The work of one ``osmosis eval run`` item on the run engine, for either rollout style.

:class:`WorkflowExecutor` runs a 0.3 ``AgentWorkflow`` + ``Grader`` through an execution backend in this
process, inside a rollout context whose chat-completions URL is the run's :class:`~osmosis_ai.llm.bridge.
LLMBridge`. :class:`LoopExecutor` runs a 0.2 ``RolloutAgentLoop`` scored by an ``--eval-fn`` (the eval
command's executor, with the eval-run fields added). Both write the same record: ``status``
(``success|failed|skipped``), ``reward`` (only what a grader set), ``error_type`` (the failure's category),
``rollout_id``, ``source_row_index``, ``tokens``. A failure is never a score.
"""

from __future__ import annotations

import itertools
import os
import secrets
from typing import Any

from osmosis_ai.eval.run_rows import item_prompt
from osmosis_ai.eval.runner import AgentExecutor
from osmosis_ai.llm.bridge import LLMBridge
from osmosis_ai.rollout.backend.base import ExecutionBackend
from osmosis_ai.rollout.backend.local import LocalBackend
from osmosis_ai.rollout.context import RolloutContext
from osmosis_ai.rollout.sample import ExecutionResult, RolloutStatus, execution_request, plain_request
from osmosis_ai.runs.work import RunControl, WorkItem, new_item_record

__all__ = ["LoopExecutor", "WorkflowExecutor", "base_record", "new_rollout_id"]


# Rollout ids: 32 lowercase hex as upstream's uuid4().hex, unique without a getrandom call per item (a
# random half per process, a counter for the other).
_ID_PREFIX = secrets.token_hex(8)
_ID_COUNTER = itertools.count()


def _reseed() -> None:
    global _ID_PREFIX
    _ID_PREFIX = secrets.token_hex(8)


if hasattr(os, "register_at_fork"):  # POSIX; a forked child must not repeat its parent's ids
    os.register_at_fork(after_in_child=_reseed)


def new_rollout_id() -> str:
    """A fresh rollout id: 32 lowercase hex characters, unique across processes and runs."""
    return f"{_ID_PREFIX}{next(_ID_COUNTER) & 0xFFFFFFFFFFFFFFFF:016x}"


def base_record(item: WorkItem) -> dict[str, Any]:
    """The fields every eval-run record starts with (a crash or timeout of the item leaves it failed)."""
    record = new_item_record(item)  # a new dict: filled in place rather than copied
    record["source_row_index"] = item.row.get("source_row_index")
    record["rollout_id"] = new_rollout_id()
    record["status"] = "failed"
    return record


def _category(result: ExecutionResult | None) -> str | None:
    return result.err_category.value if result is not None and result.err_category is not None else None


def classify(
    record: dict[str, Any], workflow: ExecutionResult | None, grader: ExecutionResult | None
) -> None:
    """Fills ``status``, ``reward``, ``error_type`` and ``error`` from the two step results."""
    if grader is None:
        record["error_type"] = "missing_grader_callback"
        record["error"] = "the backend reported no grading result"
        return
    sample = grader.sample
    if grader.status is not RolloutStatus.SUCCESS:
        if workflow is not None and workflow.status is not RolloutStatus.SUCCESS:
            # The grader never ran: say why the workflow failed rather than a bare "grader failed".
            record["error_type"] = _category(workflow) or "workflow_failed"
            record["error"] = workflow.err_message or "the workflow failed"
        else:
            record["error_type"] = _category(grader) or "grader_failed"
            record["error"] = (
                grader.err_message or "grading failed (no grader, or no label or metadata to grade)"
            )
        return
    if sample is not None and sample.remove_sample:
        record["status"] = "skipped"
        return
    reward = sample.reward if sample is not None else None
    # Set one by one in update()'s order (the log line's member order), without its keyword dict.
    record["status"] = "success"
    record["success"] = True
    record["reward"] = reward
    record["scores"] = {"reward": reward}


class WorkflowExecutor:
    """Runs one item through ``backend`` (workflow, then grader) with the bridge as its model endpoint.

    Args:
        backend: The execution backend (a :class:`~osmosis_ai.rollout.LocalBackend` for ``eval run``).
        bridge: The started LLM bridge the workflow's model calls go to.
        agent_timeout: The workflow's budget in seconds (None: unbounded).
        grader_timeout: The grader's budget in seconds (None: unbounded).
    """

    def __init__(
        self,
        backend: ExecutionBackend,
        bridge: LLMBridge,
        *,
        agent_timeout: float | None = None,
        grader_timeout: float | None = None,
    ) -> None:
        self.backend = backend
        self.bridge = bridge
        self.agent_timeout = agent_timeout
        self.grader_timeout = grader_timeout
        # A LocalBackend whose execute() is LocalBackend's runs its steps through run_rollout (same steps);
        # one that overrides execute() is called through it. Only when run_rollout is LocalBackend's too may
        # an item skip the request model and go to the steps on its fields (an override sees every item).
        local = backend if isinstance(backend, LocalBackend) else None
        self._local = local if local is not None and type(local).execute is LocalBackend.execute else None
        self._fields_path = (
            self._local is not None and type(self._local).run_rollout is LocalBackend.run_rollout
        )

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        return base_record(item)

    async def execute(self, item: WorkItem, record: dict[str, Any], control: RunControl) -> None:
        rollout_id = record["rollout_id"]
        row = item.row
        prompt = item_prompt(row)  # made for this item: the workflow's own, not checked and copied again
        label, metadata = row.get("ground_truth"), row.get("metadata")
        agent_timeout, grader_timeout = self.agent_timeout, self.grader_timeout
        local = self._local
        request = None
        if not self._fields_path or not plain_request(
            rollout_id, prompt, label, metadata, agent_timeout, grader_timeout, True
        ):
            request = execution_request(
                rollout_id, prompt, label, metadata, agent_timeout, grader_timeout, fresh_prompt=True
            )  # validated: what it keeps (or raises) is the item's
            label, metadata = request.label, request.metadata
        elif metadata is not None:
            metadata = metadata.copy()  # as the request's validation copies it (the grader's own)
        bridge = self.bridge
        context = RolloutContext(
            chat_completions_url=bridge.url_for(rollout_id),
            api_key=bridge.token,
            rollout_id=rollout_id,
            in_process=bridge.chat_in_process,
        )

        def workflow_done(result: ExecutionResult) -> None:
            # The workflow's model calls, for its trajectory's steps; a grader's judge calls come later.
            if calls := bridge.take_calls(rollout_id):
                record["llm_calls"] = calls

        workflow: ExecutionResult | None
        grader: ExecutionResult | None
        with context:
            if request is None:  # a LocalBackend's steps on the request's fields (no model, no callbacks)
                assert local is not None
                workflow, grader = await local._run_fields(
                    rollout_id, prompt, label, metadata, agent_timeout, grader_timeout, workflow_done
                )
            elif local is not None:
                workflow, grader = await local.run_rollout(request, workflow_done, prompt_owned=True)
            else:
                steps: dict[str, ExecutionResult] = {}

                def workflow_step(result: ExecutionResult) -> None:
                    steps["workflow"] = result
                    workflow_done(result)

                await self.backend.execute(request, workflow_step, lambda r: steps.__setitem__("grader", r))
                workflow, grader = steps.get("workflow"), steps.get("grader")
        classify(record, workflow, grader)
        step = grader or workflow
        sample = step.sample if step is not None else None
        if sample is not None:
            # The log holds the conversation: trajectories/ is projected from it (run_files).
            record["messages"] = sample.trajectory_messages or sample.messages
            if sample.trajectory_messages is None:  # the workflow turned its trajectory off, as 0.3 allows
                record["trajectory"] = False
            record["label"] = sample.label if sample.label is not None else label
            if metadata is not None:
                record["request_metadata"] = metadata
            if sample.metrics:  # what the workflow reported (AgentWorkflowOutput.metrics), for the trajectory
                record["metrics"] = sample.json_safe_copy().metrics
        if bridge.systemic_error is not None:
            control.stop_early(bridge.systemic_error)

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        record["tokens"] = self.bridge.take_tokens(record["rollout_id"])
        if record.get("error") and not record.get("error_type"):
            # The engine's own timeout or an error of this executor, not of the user's code.
            record["error_type"] = "timeout" if "timed out" in record["error"] else "agent_error"


class LoopExecutor(AgentExecutor):
    """A 0.2 ``RolloutAgentLoop`` scored by one eval function: its score is the item's reward."""

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        record = super().new_record(item)
        return {**base_record(item), **record}

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        super().finish(item, record)
        _classify_loop(record)


def _classify_loop(record: dict[str, Any]) -> None:
    scores = record.get("scores") or {}
    if record.get("success") and scores:
        record["status"] = "success"
        record["reward"] = next(iter(scores.values()))
        return
    record["success"] = False
    record["status"] = "failed"
    record.pop("reward", None)  # an agent's own reward on a failed run is not a grade
    if record.get("eval_errors"):
        record["error_type"] = "grader_failed"
        record["error"] = "; ".join(f"{k}: {v}" for k, v in record["eval_errors"].items())
    else:
        error = record.get("error") or "the agent loop failed"
        record["error_type"] = "timeout" if "timed out" in error else "agent_error"
        record["error"] = error
