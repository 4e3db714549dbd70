"""Grading many samples on the run engine (results log kind ``grade``), and graders as eval functions.

A sample is a record holding the item's fields and the model's output, as ``output_text`` or as
``messages`` ending with the assistant's answer. ``--log RESULTS`` grades the saved runs of one of our
results logs instead: each run's output (``output_text``, ``messages`` or ``final_messages``) against
its dataset row, and the grade record keeps the run's keys (row, run, model), so both logs line up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from osmosis_ai.errors import CLIError, EvalFnError
from osmosis_ai.eval.functions import EvalFunction, final_assistant_text
from osmosis_ai.graders.core import Grader, load_grader
from osmosis_ai.runs.engine import MemorySink, RunControl, RunEngine, RunOutcome, WorkItem, new_item_record

__all__ = ["GradeExecutor", "grade", "grader_eval_function", "log_samples", "output_of", "run_grading"]

Sample = tuple[WorkItem, str | None, Mapping[str, Any]]


def output_of(record: Mapping[str, Any]) -> str | None:
    """The model's output in a sample or run record, or None when it holds none."""
    if isinstance(record.get("output_text"), str):
        return record["output_text"]
    for key in ("messages", "final_messages"):
        if isinstance(record.get(key), list):
            return final_assistant_text(record[key])
    return None


class GradeExecutor:
    """Grades one sample; ``WorkItem.row`` carries ``{"output": text | None, "item": {...}}``."""

    def __init__(self, grader: Grader) -> None:
        self.grader = grader

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        return new_item_record(item)

    async def execute(self, item: WorkItem, record: dict[str, Any], control: RunControl) -> None:
        output = item.row["output"]
        if output is None:
            record["error"] = (
                "the record holds no model output (output_text, or messages ending with an answer)"
            )
            return
        try:
            result = await self.grader.grade(output, item.row["item"])
        except EvalFnError as exc:
            record["eval_errors"] = {self.grader.name: str(exc)}
            record["success"] = True  # the sample exists; its grader failed (an error, never a score)
            return
        record["success"] = True
        record["scores"] = {self.grader.name: result.score}
        record["passed"] = result.passed
        if result.sub_scores:
            record["sub_scores"] = result.sub_scores
        if result.detail:
            record["detail"] = result.detail

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        """Nothing to add."""


def sample_items(samples: Iterable[tuple[int, Mapping[str, Any]]]) -> Iterator[WorkItem]:
    """Work items for sample records (``output_text`` or ``messages``, plus the item's fields)."""
    from osmosis_ai.runs.log import row_key

    for index, record in samples:
        item = {k: v for k, v in record.items() if k != "output_text"}
        yield WorkItem(index, {"output": output_of(record), "item": item}, row_key(record), 0)


def _log_header(path: Path) -> dict[str, Any]:
    import orjson

    with path.open("rb") as handle:
        first = handle.readline()
    try:
        header = orjson.loads(first)
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or "format" not in header:
        raise CLIError(f"{path}:1: not an osmosis results log")
    return header


def log_samples(path: Path) -> Iterator[WorkItem]:
    """Work items for the runs of a results log: each run's output with its dataset row as the item."""
    from osmosis_ai.datasets import read_dataset
    from osmosis_ai.runs.log import iter_runs

    header = _log_header(path)
    dataset = header.get("dataset") or {}
    if not dataset.get("path") or not Path(dataset["path"]).is_file():
        raise CLIError(
            f"{path}: the dataset this log was run on ({dataset.get('path')}) is not readable here"
        )
    # The rows are looked up by index for every run; a log's dataset is read once, not once per run.
    rows = dict(enumerate(read_dataset(dataset["path"], contract="any")))
    for run in iter_runs(path):
        row = rows.get(int(run["row_index"]), {})
        messages = next(
            (run[k] for k in ("messages", "final_messages") if isinstance(run.get(k), list)), None
        )
        payload = {"output": output_of(run), "item": row, "messages": messages}
        yield WorkItem(
            int(run["row_index"]), payload, run["row_key"], int(run["run_index"]), run.get("model_tag") or ""
        )


def run_grading(
    grader: Grader,
    items: Iterable[WorkItem],
    log: Any,
    *,
    concurrency: int = 8,
    on_record: Callable[[dict[str, Any], RunOutcome], None] | None = None,
) -> RunOutcome:
    """Grades every item the log does not hold yet (model graders share one connection pool)."""
    from osmosis_ai.llm.pool import TransportPool

    engine = RunEngine(GradeExecutor(grader), log, concurrency=concurrency, on_record=on_record)

    def todo() -> Iterator[WorkItem]:
        for item in items:
            if (item.row_index, item.key, item.run_index, item.model_tag) in log.done:
                engine.outcome.skipped += 1
            else:
                yield item

    async def main() -> RunOutcome:
        async with TransportPool(max_connections=concurrency):
            return await engine.run(todo())

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        engine.outcome.interrupted = True
        return engine.outcome


def grade(
    grader: Grader | str | Path | Mapping[str, Any],
    samples: Iterable[Mapping[str, Any]],
    *,
    concurrency: int = 8,
) -> list[dict[str, Any]]:
    """Grades samples in memory; one record per sample, in order (``scores``, ``passed``, ``eval_errors``).

    Example:
        >>> grade({"type": "string_check", "input": "{{sample.output_text}}", "reference": "{{item.a}}",
        ...        "operation": "eq"}, [{"a": "x", "output_text": "x"}])[0]["scores"]
        {'string_check': 1.0}
    """
    grader = grader if isinstance(grader, Grader) else load_grader(grader)
    sink = MemorySink()
    run_grading(grader, sample_items(enumerate(samples)), sink, concurrency=concurrency)
    return sorted(sink.records, key=lambda r: r["row_index"])


def grader_eval_function(path: str, *, settings: Any = None) -> EvalFunction:
    """An :class:`EvalFunction` (full mode) that grades the final answer with the grader config at ``path``.

    The dataset row is the grader's ``item``; ``--eval-fn grader.json`` works wherever an eval function does.
    """
    grader = load_grader(path, settings=settings)

    async def grade_conversation(
        messages: Sequence[Mapping[str, Any]],
        ground_truth: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> float:
        return (await grader.grade(final_assistant_text(messages), dict(metadata or {}))).score

    return EvalFunction(name=path, func=grade_conversation, mode="full")
