"""The work of one eval / test item on the run engine: run the agent loop on a row, then score it.

A run that fails (the agent raises or returns an error, a provider error) is recorded with its error and
the session goes on; a *systemic* provider error (bad key, unknown model, nothing listening) stops it early
with the reason, since every further call would fail the same way. An eval function that fails is recorded
under ``eval_errors`` for that run: it is an error, never a score.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from typing import Any

from osmosis_ai.errors import EvalFnError, SystemicProviderError, ToolValidationError
from osmosis_ai.eval.functions import EvalFunction
from osmosis_ai.eval.llm_client import ExternalLLMClient
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop, RolloutContext, checked_result
from osmosis_ai.rollout.requests import dataset_row_to_request
from osmosis_ai.rollout.tools import validate_tools
from osmosis_ai.runs.work import RunControl, WorkItem, new_item_record

__all__ = ["AgentExecutor"]

ClientFactory = Callable[[str], ExternalLLMClient]


class AgentExecutor:
    """Runs ``agent`` on one item with a fresh LLM client, then applies the eval functions.

    Args:
        agent: The user's agent loop.
        eval_fns: Loaded eval functions, applied in order to every successful run.
        clients: ``model_tag -> a fresh ExternalLLMClient`` (one per run, so metrics never mix).
        max_turns: Advisory turn limit put into each request.
        completion_params: Sampling parameters put into each request.
        mode: ``eval`` or ``test`` (rollout ids and request flags differ).
    """

    def __init__(
        self,
        agent: RolloutAgentLoop,
        eval_fns: list[EvalFunction],
        clients: ClientFactory,
        *,
        max_turns: int = 10,
        completion_params: Mapping[str, Any] | None = None,
        mode: str = "eval",
    ) -> None:
        self.agent = agent
        self.eval_fns = eval_fns
        self.clients = clients
        self.max_turns = max_turns
        self.completion_params = dict(completion_params or {})
        self.mode = mode
        self._live: dict[int, ExternalLLMClient] = {}
        # A copy of the last tool list that passed validate_tools: an equal list needs no second look.
        self._valid_tools: Any = None

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        self._live[id(item)] = self.clients(item.model_tag)
        return new_item_record(item)

    async def execute(self, item: WorkItem, record: dict[str, Any], control: RunControl) -> None:
        try:
            await self._attempt(item, self._live[id(item)], record)
        except SystemicProviderError as exc:
            record["error"] = f"Provider error: {exc}"
            control.stop_early(str(exc))
        except ToolValidationError as exc:
            record["error"] = f"Tool validation error: {exc}"

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        if not record.get("tool_calls"):
            record.pop("tool_calls", None)  # only agents that record their calls in detail add the list
        calls, prompt, completion = self._live.pop(id(item)).counts
        record["tokens"] = prompt + completion
        record["num_llm_calls"] = calls
        record["prompt_tokens"] = prompt
        record["completion_tokens"] = completion

    def _validate(self, tools: Any) -> None:
        # Agents mostly return the same definitions every time; comparing costs far less than checking.
        # (Only the check is skipped: the definitions sent are the agent's own each time, since an equal
        # list may still differ in what it sends, 1 == 1.0 == True.)
        if type(tools) is list and tools == self._valid_tools:
            return
        validate_tools(tools)
        try:
            self._valid_tools = copy.deepcopy(tools)
        except Exception:  # a definition that cannot be copied is checked every time
            self._valid_tools = None

    async def _attempt(self, item: WorkItem, client: ExternalLLMClient, record: dict[str, Any]) -> None:
        if self.mode == "test":
            rollout_id, overrides = f"test-{item.row_index}", {"execution_mode": "test", "test_mode": True}
        else:
            suffix = f"-{item.model_tag}" if item.model_tag else ""
            rollout_id = f"eval-{item.row_index}-run-{item.run_index}{suffix}"
            overrides = {"execution_mode": "eval", "run_index": item.run_index}
        request = dataset_row_to_request(
            item.row,
            item.row_index,
            rollout_id=rollout_id,
            max_turns=self.max_turns,
            completion_params=self.completion_params,
            overrides=overrides,
        )
        tools = self.agent.get_tools(request) or []
        self._validate(tools)
        client.set_tools(tools)
        # Positional (request, tools, llm, _start_time): by keyword, the dataclass's __init__ matched names.
        ctx = RolloutContext(request, list(tools), client, time.monotonic())
        # The same list object: calls recorded before a timeout or a crash still reach the record.
        record["tool_calls"] = ctx.tool_call_log
        result = checked_result(await self.agent.run(ctx))
        record["finish_reason"] = result.finish_reason
        record["reward"] = result.reward
        if result.status != "COMPLETED":
            # The established harness dropped the agent's own message here; we keep it.
            record["error"] = result.error_message or f"Agent returned status {result.status}"
            return
        record["success"] = True
        # The conversation is kept so the run can be re-scored later (`reward diff`, `grade --from-log`).
        record["final_messages"] = list(result.final_messages)
        errors: dict[str, str] = {}
        for fn in self.eval_fns:
            try:
                record["scores"][fn.name] = await fn.score(result.final_messages, item.row)
            except EvalFnError as exc:
                errors[fn.name] = str(exc)
        if errors:
            record["eval_errors"] = errors
