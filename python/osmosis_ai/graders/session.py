"""Grading many samples on the run engine (results log kind ``grade``), and graders as eval functions.

A sample is a record holding the item's fields and the model's output, as ``output_text`` or as
``messages`` ending with the assistant's answer. ``GradeRunOptions.source_log`` grades the saved runs of one of
our results logs instead: each run's output (``output_text``, ``messages`` or ``final_messages``) against
its dataset row, and the grade record keeps the run's keys (row, run, model), so both logs line up.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_ai.errors import EvalFnError, RunError
from osmosis_ai.eval.functions import EvalFunction, final_assistant_text
from osmosis_ai.graders.core import Grader, load_grader
from osmosis_ai.graders.models import DEFAULT_EMBEDDING_MODEL
from osmosis_ai.runs.engine import RunEngine
from osmosis_ai.runs.observer import RunObserver, quiet_observer
from osmosis_ai.runs.work import MemorySink, RunControl, RunOutcome, WorkItem, new_item_record

if TYPE_CHECKING:
    from osmosis_ai.runs.log import ResultsLog

PathLike = str | os.PathLike[str]

__all__ = [
    "GradeExecutor",
    "GradeRunOptions",
    "GradeRunResult",
    "grade",
    "grade_summary",
    "grader_eval_function",
    "log_samples",
    "output_of",
    "run_grade",
    "run_grading",
]

Sample = tuple[WorkItem, str | None, Mapping[str, Any]]


def output_of(record: Mapping[str, Any]) -> str | None:
    """The model's output in a sample or run record, or None when it holds none."""
    if isinstance(text := record.get("output_text"), str):
        return text
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


def _log_dataset(header: Mapping[str, Any], path: Path) -> Path:
    """The dataset file the results log at ``path`` (with this header) was run on.

    Raises:
        RunError: The log names no dataset, or it is not readable here.
    """
    from osmosis_ai.runs.log import recorded_dataset

    dataset = recorded_dataset(header, path)
    if dataset is None or not dataset.is_file():
        raise RunError(f"{path}: the dataset this log was run on ({dataset}) is not readable here")
    return dataset


def _run_samples(dataset: Path, runs: Iterable[Mapping[str, Any]]) -> Iterator[WorkItem]:
    """Work items for saved runs: each run's output with its row of ``dataset`` as the item."""
    from osmosis_ai.datasets import read_dataset

    # The rows are looked up by index for every run; a log's dataset is read once, not once per run.
    rows = dict(enumerate(read_dataset(dataset, contract="any")))
    for run in runs:
        row = rows.get(int(run["row_index"]), {})
        messages = next(
            (run[k] for k in ("messages", "final_messages") if isinstance(run.get(k), list)), None
        )
        # A run that errored has no output to grade, whatever it holds: the eval counted it as errored.
        output = output_of(run) if run.get("success") is not False else None
        payload = {"output": output, "item": row, "messages": messages}
        yield WorkItem(
            int(run["row_index"]), payload, run["row_key"], int(run["run_index"]), run.get("model_tag") or ""
        )


def log_samples(path: Path) -> Iterator[WorkItem]:
    """Work items for the runs of a results log: each run's output with its dataset row as the item (the
    log is read in one pass)."""
    from osmosis_ai.runs.log import open_runs

    header, runs = open_runs(path)
    return _run_samples(_log_dataset(header, path), runs)


def run_grading(
    grader: Grader,
    items: Iterable[WorkItem],
    log: ResultsLog | MemorySink,
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
    except KeyboardInterrupt as exc:
        engine.outcome.interrupted_by(exc)
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


@dataclass(frozen=True, kw_only=True)
class GradeRunOptions:
    """A grading session (``osmosis grade``): a grader config over samples, or over a results log's runs.

    Attributes:
        grader_path: The OpenAI grader config (JSON).
        data_path: Samples: the item's fields plus ``output_text`` (or ``messages`` ending with the answer).
        source_log: A results log whose saved runs are graded instead of ``data_path`` (exactly one).
        base_url: OpenAI-compatible endpoint of model graders and embeddings.
        embedding_model: The embedding model of ``text_similarity`` ``cosine``.
        time_limit: Seconds a python grader may run per sample.
        concurrency: Samples graded at once.
        log_path: The results log to create (default: a new file under ``$OSMOSIS_LOG_DIR``).
        resume_path: A results log to continue instead.
    """

    grader_path: PathLike
    data_path: PathLike | None = None
    source_log: PathLike | None = None
    base_url: str | None = None
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    time_limit: float = 30.0
    concurrency: int = 8
    log_path: PathLike | None = None
    resume_path: PathLike | None = None

    def __post_init__(self) -> None:
        from osmosis_ai.runs.session_log import check_log_choice

        check_log_choice(self.log_path, self.resume_path)
        if (self.data_path is None) == (self.source_log is None):
            raise RunError(
                "Give exactly one of {data_path} (samples) or {source_log} (a results log's runs).",
                fields=("data_path", "source_log"),
            )


@dataclass
class GradeRunResult:
    """What a grading session did.

    Attributes:
        options: The options it ran with.
        grader: The loaded grader (``name``, ``config``).
        outcome: Samples graded, taken from a resumed log; interrupted or not.
        log_path: The results log (one record per graded sample).
        summary: Today's summary of the log (:func:`grade_summary`); when interrupted, of what finished.
    """

    options: GradeRunOptions
    grader: Grader
    outcome: RunOutcome
    log_path: Path
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def problems(self) -> int:
        """Samples that could not be graded: grader errors and records without output."""
        return int(self.summary.get("errors", 0)) + int(self.summary.get("without_output", 0))


def grade_summary(log_path: Path, name: str) -> dict[str, Any]:
    """The grader's numbers in a grade log, from its result model (:func:`osmosis_ai.results.read_results`):
    count, mean/std/min/max (null when nothing was graded), passes, errors (three examples), records
    without output, and the model's warnings."""
    from osmosis_ai.results import read_results
    from osmosis_ai.runs.log import iter_runs

    examples: list[str] = []
    for record in iter_runs(log_path):
        if record.get("eval_errors") and len(examples) < 3:
            examples.append(f"row {record['row_index']}: {record['eval_errors'].get(name)}")
    # The file's own rule for errored runs (a run without output is 0.0 in the mean, as in the eval that
    # wrote the source log): the numbers `osmosis report` shows for this log.
    result = read_results(log_path)
    function = next((f for f in result.model().functions if f.name == name), None) if result.models else None
    runs = function.runs if function is not None else None
    # Passing is the grader's own pass_threshold (the model reads it from the log's header); a grader
    # without one decides no pass: null, never 0.
    grader = (result.config or {}).get("grader") or {}
    decides = isinstance(grader.get("pass_threshold"), (int, float))
    return {
        "grader": name,
        "graded": function.graded if function is not None else 0,
        "mean": function.mean if function is not None else None,
        "std": function.std if function is not None else None,
        "min": function.min if function is not None else None,
        "max": function.max if function is not None else None,
        "passed": function.passed if function is not None and decides else None,
        "errors": runs.errored_function if runs is not None else 0,
        "error_examples": examples,
        "without_output": runs.errored_run if runs is not None else 0,
        "log": str(log_path),
        "warnings": [{"code": w.code, "message": w.message} for w in result.warnings],
    }


def run_grade(options: GradeRunOptions, observer: RunObserver | None = None) -> GradeRunResult:
    """Grades every sample (or saved run) the log does not hold yet; returns the session and its summary.

    Example:
        >>> result = run_grade(GradeRunOptions(grader_path="grader.json", data_path="samples.jsonl"))  # doctest: +SKIP
        >>> result.summary["mean"]  # doctest: +SKIP
    """
    from osmosis_ai.datasets import read_dataset
    from osmosis_ai.graders.models import ModelSettings
    from osmosis_ai.runs.log import open_runs
    from osmosis_ai.runs.session_log import open_session_log
    from osmosis_ai.stats import log_declared_runs

    observer = quiet_observer(observer)
    settings = ModelSettings(base_url=options.base_url, embedding_model=options.embedding_model)
    grader = load_grader(Path(options.grader_path), settings=settings, time_limit=options.time_limit)
    source = Path(options.data_path or options.source_log or "")
    config: dict[str, Any] = {
        "grader": grader.config,
        "source": "log" if options.source_log else "samples",
        "embedding_model": options.embedding_model,
    }
    if options.source_log is not None:
        # The graded log is of the source log's rows and runs: its dataset, its n (rows x n runs), all
        # from the source's header; its runs follow in the same pass.
        header, runs = open_runs(source)
        dataset = _log_dataset(header, source)
        config["source_log"] = str(source)
        config["n_runs"] = log_declared_runs(header)
        items: Iterable[WorkItem] = _run_samples(dataset, runs)
    else:
        dataset = source
        items = sample_items(enumerate(read_dataset(source, contract="any")))
    log = open_session_log("grade", config, dataset, options.log_path, options.resume_path, observer)
    try:
        outcome = run_grading(grader, items, log, concurrency=options.concurrency)
    finally:
        log.close()
    # Interrupted or not, the log holds what finished: the summary covers it (`--json` prints it either way).
    return GradeRunResult(options, grader, outcome, log.path, grade_summary(log.path, grader.name))
