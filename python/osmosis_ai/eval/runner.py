"""Runs an agent loop over dataset rows x attempts with bounded concurrency, logging every finished run.

Rows stream in; a bounded queue feeds ``batch_size`` workers, so memory follows the work in flight, not the
dataset. Each finished run is appended to the results log before the next is taken. A run that fails (the
agent raises or returns an error, a timeout, a provider error) is recorded with its error and the eval goes
on; a *systemic* provider error (bad key, unknown model, nothing listening) stops the eval early with the
reason, since every further call would fail the same way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.errors import EvalFnError, SystemicProviderError, ToolValidationError
from osmosis_ai.eval.functions import EvalFunction
from osmosis_ai.eval.results_log import ResultsLog, RunKey, row_key
from osmosis_ai.llm.chat import ExternalLLMClient
from osmosis_ai.rollout.core import RolloutAgentLoop, RolloutContext
from osmosis_ai.rollout.requests import dataset_row_to_request
from osmosis_ai.rollout.tools import validate_tools

__all__ = ["EvalRunner", "MemorySink", "RunOutcome", "WorkItem"]


@dataclass(frozen=True)
class WorkItem:
    """One attempt at one row, for one model (``model_tag`` is ``""`` unless a baseline is compared)."""

    row_index: int
    row: Mapping[str, Any]
    key: str
    run_index: int
    model_tag: str = ""


class MemorySink:
    """Keeps run records in memory, for `osmosis test` (which has nothing to resume)."""

    def __init__(self) -> None:
        self.done: dict[RunKey, Any] = {}
        self.records: list[dict[str, Any]] = []

    def append(self, record: dict[str, Any]) -> None:
        self.records.append(record)


@dataclass
class RunOutcome:
    """What a whole eval did in this session."""

    executed: int = 0
    skipped: int = 0
    failed: int = 0
    eval_errors: int = 0
    stopped_early: bool = False
    stop_reason: str | None = None
    interrupted: bool = False
    duration_ms: float = 0.0
    tokens: int = 0
    # eval function -> [sum of scores, count], for the running mean the progress line shows.
    score_sums: dict[str, list[float]] = field(default_factory=dict)

    def running_mean(self) -> float | None:
        """Mean score of the first eval function over the runs scored so far, or None."""
        first = next(iter(self.score_sums.values()), None)
        return first[0] / first[1] if first and first[1] else None


ClientFactory = Callable[[str], ExternalLLMClient]
ProgressCallback = Callable[[dict[str, Any], RunOutcome], None]


class EvalRunner:
    """Drives ``agent`` over rows; see the module docstring.

    Args:
        agent: The user's agent loop.
        eval_fns: Loaded eval functions, applied in order to every successful run.
        clients: ``model_tag -> a fresh ExternalLLMClient`` (one per run, so metrics never mix).
        log: The open results log; runs it already holds are skipped.
        n_runs: Attempts per row.
        model_tags: ``[""]``, or ``["primary", "baseline"]`` to compare two models.
        max_turns: Advisory turn limit put into each request.
        completion_params: Sampling parameters put into each request.
        batch_size: Runs in flight at once.
        run_timeout: Seconds one run (agent + eval functions) may take; None for no limit.
        on_run: Called after each run is logged (progress display).
    """

    def __init__(
        self,
        agent: RolloutAgentLoop,
        eval_fns: list[EvalFunction],
        clients: ClientFactory,
        log: ResultsLog | MemorySink,
        *,
        n_runs: int = 1,
        model_tags: tuple[str, ...] = ("",),
        max_turns: int = 10,
        completion_params: Mapping[str, Any] | None = None,
        batch_size: int = 1,
        run_timeout: float | None = None,
        on_run: ProgressCallback | None = None,
        mode: str = "eval",
    ) -> None:
        self.agent = agent
        self.eval_fns = eval_fns
        self.clients = clients
        self.log = log
        self.n_runs = n_runs
        self.model_tags = model_tags
        self.max_turns = max_turns
        self.completion_params = dict(completion_params or {})
        self.batch_size = batch_size
        self.run_timeout = run_timeout
        self.on_run = on_run
        self.mode = mode
        self.outcome = RunOutcome()
        self._stop = asyncio.Event()

    def _work(self, rows: Iterable[tuple[int, Mapping[str, Any]]]) -> Iterable[WorkItem]:
        done: Mapping[RunKey, Any] = self.log.done
        for row_index, row in rows:
            key = row_key(row)
            for run_index in range(self.n_runs):
                for tag in self.model_tags:
                    if (key, run_index, tag) in done:
                        self.outcome.skipped += 1
                        continue
                    yield WorkItem(row_index, row, key, run_index, tag)

    async def run(self, rows: Iterable[tuple[int, Mapping[str, Any]]]) -> RunOutcome:
        """Runs every pending (row, attempt); returns when all are logged or the eval stops early."""
        started = time.monotonic()
        queue: asyncio.Queue[WorkItem | None] = asyncio.Queue(maxsize=self.batch_size * 2)
        workers = [asyncio.create_task(self._worker(queue)) for _ in range(self.batch_size)]
        try:
            for item in self._work(rows):
                if self._stop.is_set():
                    break
                await queue.put(item)
            for _ in workers:
                await queue.put(None)
            await asyncio.gather(*workers)
        finally:
            for worker in workers:
                worker.cancel()
            self.outcome.duration_ms = (time.monotonic() - started) * 1000.0
        return self.outcome

    async def _worker(self, queue: asyncio.Queue[WorkItem | None]) -> None:
        while True:
            item = await queue.get()
            if item is None:
                return
            if self._stop.is_set():
                continue  # drain: the producer is stopping
            record = await self._run_one(item)
            self.log.append(record)
            self._account(record)
            if self.on_run is not None:
                self.on_run(record, self.outcome)

    def _account(self, record: dict[str, Any]) -> None:
        outcome = self.outcome
        outcome.executed += 1
        outcome.tokens += record["tokens"]
        if not record["success"]:
            outcome.failed += 1
        if record.get("eval_errors"):
            outcome.eval_errors += 1
        for name, value in record["scores"].items():
            sums = outcome.score_sums.setdefault(name, [0.0, 0])
            sums[0] += value
            sums[1] += 1

    async def _run_one(self, item: WorkItem) -> dict[str, Any]:
        started = time.monotonic()
        client = self.clients(item.model_tag)
        record: dict[str, Any] = {
            "row_key": item.key,
            "row_index": item.row_index,
            "run_index": item.run_index,
            "model_tag": item.model_tag,
            "success": False,
            "scores": {},
            "error": None,
        }
        try:
            if self.run_timeout is None:
                await self._attempt(item, client, record, started)
            else:
                await asyncio.wait_for(self._attempt(item, client, record, started), self.run_timeout)
        except (TimeoutError, asyncio.TimeoutError):  # distinct classes before Python 3.11
            record["success"] = False
            record["error"] = f"Run timed out after {self.run_timeout:g}s"
        except SystemicProviderError as exc:
            record["error"] = f"Provider error: {exc}"
            self._stop_early(str(exc))
        except ToolValidationError as exc:
            record["error"] = f"Tool validation error: {exc}"
        except Exception as exc:
            record["error"] = f"{type(exc).__name__}: {exc}"
        if not record.get("tool_calls"):
            record.pop("tool_calls", None)  # only agents that record their calls in detail add the list
        metrics = client.get_metrics()
        record["duration_ms"] = (time.monotonic() - started) * 1000.0
        record["tokens"] = metrics.prompt_tokens + metrics.response_tokens
        record["num_llm_calls"] = metrics.num_llm_calls
        record["prompt_tokens"] = metrics.prompt_tokens
        record["completion_tokens"] = metrics.response_tokens
        return record

    async def _attempt(
        self, item: WorkItem, client: ExternalLLMClient, record: dict[str, Any], started: float
    ) -> None:
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
        validate_tools(tools)
        client.set_tools(tools)
        ctx = RolloutContext(request=request, tools=list(tools), llm=client, _start_time=started)
        # The same list object: calls recorded before a timeout or a crash still reach the record.
        record["tool_calls"] = ctx.tool_call_log
        result = await self.agent.run(ctx)
        record["finish_reason"] = result.finish_reason
        record["reward"] = result.reward
        if result.status != "COMPLETED":
            # The established harness dropped the agent's own message here; we keep it.
            record["error"] = result.error_message or f"Agent returned status {result.status}"
            return
        record["success"] = True
        errors: dict[str, str] = {}
        for fn in self.eval_fns:
            try:
                record["scores"][fn.name] = await fn.score(result.final_messages, item.row)
            except EvalFnError as exc:
                errors[fn.name] = str(exc)
        if errors:
            record["eval_errors"] = errors

    def _stop_early(self, reason: str) -> None:
        if not self._stop.is_set():
            self.outcome.stopped_early = True
            self.outcome.stop_reason = reason
            self._stop.set()
