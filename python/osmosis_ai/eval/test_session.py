"""``test`` as a library call: an agent loop once per dataset row against a model, without scoring.

:func:`run_test` takes a frozen :class:`TestOptions` and returns a :class:`TestResult`: every row's record
in row order and the established ``{"summary", "results"}`` document (also written to ``output``). Nothing
is resumed, so the records stay in memory (a test is a handful of rows). :func:`open_test_inputs` loads
the agent, the rows and the transport for a caller that steps through rows itself (the CLI's
``--interactive`` console).

Example:
    >>> from osmosis_ai.eval.test_session import TestOptions, run_test
    >>> result = run_test(TestOptions(dataset="data.jsonl", module="agent:loop", model="m",
    ...                               base_url="http://127.0.0.1:8000/v1"))  # doctest: +SKIP
    >>> result.document["summary"]["passed"]  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_ai.errors import RunError
from osmosis_ai.eval.options import TestOptions
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop
from osmosis_ai.runs.observer import RunObserver, quiet_observer
from osmosis_ai.runs.work import RunOutcome

if TYPE_CHECKING:
    from osmosis_ai.llm.transport import Transport

__all__ = ["TestInputs", "TestOptions", "TestResult", "arun_test", "open_test_inputs", "run_test"]

Rows = list[tuple[int, dict[str, Any]]]


@dataclass
class TestResult:
    """What a test session did.

    Attributes:
        options: The options it ran with.
        outcome: Rows run and failed; interrupted or stopped early, and why.
        records: Every row's record, in row order.
        document: The established ``{"summary", "results"}`` document (today's summary of the records),
            led by ``interrupted: true`` when a signal stopped the session.
        duration_ms: Wall time of the rows.
        output: The results JSON written (``options.output``), or None.
    """

    __test__ = False  # not a pytest test class, whatever its name

    options: TestOptions
    outcome: RunOutcome
    records: list[dict[str, Any]] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)
    duration_ms: float = 0.0
    output: Path | None = None

    @property
    def passed(self) -> int:
        """Rows whose agent run succeeded."""
        return sum(1 for r in self.records if r["success"])

    @property
    def failed(self) -> int:
        """Rows whose agent run failed."""
        return len(self.records) - self.passed


@dataclass
class TestInputs:
    """The loaded agent, the selected rows and the model's transport of a test session."""

    __test__ = False

    agent: RolloutAgentLoop
    rows: Rows
    transport: Transport


def _load_rows(options: TestOptions, observer: RunObserver) -> Rows:
    from osmosis_ai.datasets import read_dataset

    observer.message(f"Loading dataset: {options.dataset}")
    rows = [
        (options.offset + i, row)
        for i, row in enumerate(
            read_dataset(str(options.dataset), limit=options.limit, offset=options.offset)
        )
    ]
    if not rows:
        raise RunError("No rows to test")
    observer.message(f"  Total rows: {len(rows)}")
    return rows


@contextlib.asynccontextmanager
async def open_test_inputs(
    options: TestOptions, observer: RunObserver | None = None
) -> AsyncIterator[TestInputs]:
    """Loads the agent and the rows, then opens the model's transport (closed on exit).

    Local inputs come first: a typo in the agent or the dataset is reported before the key lookup.
    """
    from osmosis_ai.eval.agent import load_agent, open_transports, resolve_model_endpoint

    observer = quiet_observer(observer)
    observer.message(f"Loading agent: {options.module or options.mcp_dir}")
    agent = load_agent(options.module, options.mcp_dir, tool_timeout=options.tool_timeout, observer=observer)
    observer.message(f"  Agent name: {agent.name}")
    rows = _load_rows(options, observer)
    endpoint = resolve_model_endpoint(options.model, options.base_url, options.api_key)
    async with open_transports({"": endpoint}, max_connections=4) as transports:
        yield TestInputs(agent, rows, transports[""])


def run_test(options: TestOptions, observer: RunObserver | None = None) -> TestResult:
    """Runs the agent once per selected row; ``observer.progress`` sees each row's record as it finishes.

    Raises:
        RunError: No rows selected, or the model's key is missing.
    """
    return asyncio.run(arun_test(options, observer))


async def arun_test(options: TestOptions, observer: RunObserver | None = None) -> TestResult:
    """:func:`run_test` on the running event loop."""
    observer = quiet_observer(observer)
    async with open_test_inputs(options, observer) as inputs:
        return await _batch(options, observer, inputs)


async def _batch(options: TestOptions, observer: RunObserver, inputs: TestInputs) -> TestResult:
    from osmosis_ai.eval.agent import build_agent_executor
    from osmosis_ai.runs.engine import RunEngine
    from osmosis_ai.runs.work import MemorySink, work_items

    sink = MemorySink()
    executor = build_agent_executor(
        inputs.agent,
        [],
        {"": inputs.transport},
        max_turns=options.max_turns,
        completion_params=options.completion_params(),
        mode="test",
    )
    progress = observer.progress(len(inputs.rows))
    engine = RunEngine(executor, sink, item_timeout=options.run_timeout, on_record=progress, isolate=True)
    observer.message(f"\nRunning {len(inputs.rows)} row(s)...")
    started = time.monotonic()
    try:
        outcome = await engine.run(work_items(inputs.rows, 1, ("",), sink.done, engine.outcome))
    finally:
        progress.close()
    result = TestResult(options, outcome, sorted(sink.records, key=lambda r: r["row_index"]))
    result.duration_ms = (time.monotonic() - started) * 1000.0
    result.document = results_document(result.records, result.duration_ms, outcome)
    if outcome.interrupted:  # the rows that finished, marked as such
        result.document = {"interrupted": True, **result.document}
    if options.output is not None:
        from osmosis_ai._files import write_json_atomic

        result.output = Path(options.output)
        write_json_atomic(result.output, result.document)
    return result


def results_document(
    records: list[dict[str, Any]], duration_ms: float, outcome: RunOutcome
) -> dict[str, Any]:
    """The established ``{"summary", "results"}`` document (``-o`` and the ``--json`` envelope's data)."""
    summary: dict[str, Any] = {
        "total": len(records),
        "passed": sum(1 for r in records if r["success"]),
        "failed": sum(1 for r in records if not r["success"]),
        "total_duration_ms": duration_ms,
        "total_tokens": sum(r["tokens"] for r in records),
    }
    if outcome.stopped_early:
        summary["stopped_early"] = True
        summary["stop_reason"] = outcome.stop_reason
    results = [
        {
            "row_index": r["row_index"],
            "success": r["success"],
            "error": r.get("error"),
            "duration_ms": r["duration_ms"],
            "token_usage": {
                "prompt_tokens": r["prompt_tokens"],
                "completion_tokens": r["completion_tokens"],
                "total_tokens": r["tokens"],
                "num_llm_calls": r["num_llm_calls"],
            },
            "reward": r.get("reward"),
            "finish_reason": r.get("finish_reason"),
            **({"tool_calls": r["tool_calls"]} if r.get("tool_calls") else {}),
        }
        for r in records
    ]
    return {"summary": summary, "results": results}
