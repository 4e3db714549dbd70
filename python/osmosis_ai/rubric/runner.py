"""``eval-rubric`` sessions: what each run sends to the judge (or to an ``@osmosis_rubric`` function).

Builds the per-record judge arguments from a config entry and a record (record values win), the
``extra_info`` enrichment for custom rubric functions, and the per-record calls the run engine makes.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from osmosis_ai.errors import MissingAPIKeyError
from osmosis_ai.rubric.config import RubricEntry
from osmosis_ai.rubric.engine import preview_text
from osmosis_ai.rubric.judge import DEFAULT_API_KEY_ENV, judge_call
from osmosis_ai.rubric.judge_request import JudgeTemplate
from osmosis_ai.rubric.records import RecordSource, RubricRecord
from osmosis_ai.runs.user_code import call_sync
from osmosis_ai.runs.work import WorkItem

__all__ = ["RecordJudge", "enrich_extra_info", "judge_arguments", "judge_model_info", "prompt_metadata"]

Evaluator = Callable[[], Awaitable[Any]]


def prompt_metadata(record: RubricRecord) -> dict[str, Any] | None:
    """``extra_info.metadata`` plus the record's ``metadata`` as ``dataset_metadata``; ``None`` if neither."""
    base = record.extra_info.get("metadata")
    metadata: dict[str, Any] = {}
    if isinstance(base, dict):
        metadata = copy.deepcopy(base)
    elif base is not None:
        try:
            metadata = dict(base)
        except (TypeError, ValueError):
            metadata = {"value": base}
    if record.metadata is not None:
        metadata.setdefault("dataset_metadata", copy.deepcopy(record.metadata))
    return metadata or None


def judge_model_info(entry: RubricEntry, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The judge's ``model_info`` of every record of ``entry``: the entry's, the overrides set, and the
    entry's system prompt before the model's (a copy: nothing of the entry is shared)."""
    model_info = copy.deepcopy(entry.model_info)
    model_info.update({k: v for k, v in (overrides or {}).items() if v is not None})
    prompts = [
        p.strip() for p in (entry.system_prompt, model_info.get("system_prompt")) if isinstance(p, str)
    ]
    prompts = [p for p in prompts if p]
    if prompts:
        model_info["system_prompt"] = "\n\n".join(prompts)
    return model_info


def judge_arguments(
    entry: RubricEntry,
    record: RubricRecord,
    overrides: dict[str, Any] | None = None,
    *,
    model_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Keyword arguments of ``evaluate_rubric`` for one record (record values win over the entry);
    ``model_info``: :func:`judge_model_info`'s, when the caller made it once for many records."""
    if model_info is None:
        model_info = judge_model_info(entry, overrides)
    ground_truth, original_input, score_min, score_max = _record_values(entry, record)
    return {
        "rubric": entry.rubric,
        "solution_str": record.solution_str,
        "model_info": model_info,
        "ground_truth": ground_truth,
        "original_input": original_input,
        "metadata": prompt_metadata(record),
        "score_min": score_min,
        "score_max": score_max,
    }


def _record_values(entry: RubricEntry, record: RubricRecord) -> tuple[Any, Any, Any, Any]:
    """``(ground_truth, original_input, score_min, score_max)`` of a record's judge call: the record's
    values, else the entry's."""
    return (
        record.ground_truth if record.ground_truth is not None else entry.ground_truth,
        record.original_input if record.original_input is not None else entry.original_input,
        record.score_min if record.score_min is not None else entry.score_min,
        record.score_max if record.score_max is not None else entry.score_max,
    )


def enrich_extra_info(entry: RubricEntry, record: RubricRecord, arguments: dict[str, Any]) -> dict[str, Any]:
    """The ``extra_info`` an ``@osmosis_rubric`` function receives: the record's, plus the judge settings."""
    extra = copy.deepcopy(record.extra_info)
    if record.metadata is not None:
        extra.setdefault("dataset_metadata", copy.deepcopy(record.metadata))
    model_info = copy.deepcopy(arguments["model_info"])
    provider = str(model_info.get("provider", "")).strip().lower()
    extra["provider"] = provider
    extra["model"] = model_info.get("model")
    if isinstance(model_info.get("api_key"), str) and model_info["api_key"].strip():
        extra["api_key"] = model_info["api_key"]
        extra.pop("api_key_env", None)
    else:
        extra["api_key_env"] = model_info.get("api_key_env") or DEFAULT_API_KEY_ENV.get(provider)
        extra.pop("api_key", None)
        model_info.setdefault("api_key_env", extra["api_key_env"])
    extra["rubric"] = entry.rubric
    for key in ("score_min", "score_max"):
        if arguments[key] is not None:
            extra[key] = float(arguments[key])
        else:
            extra.pop(key, None)
    extra["system_prompt"] = entry.system_prompt
    extra["original_input"] = arguments["original_input"]
    extra["model_info"] = model_info
    if arguments["metadata"] is not None:
        extra["metadata"] = arguments["metadata"]
    else:
        extra.pop("metadata", None)
    return extra


def _takes_judge_arguments(func: Callable[..., Any]) -> bool:
    """Called like ``evaluate_rubric`` (the established evaluator's rule: a ``rubric`` or ``model_info``
    parameter, or ``**kwargs``), unless it declares ``extra_info``: then it is an ``@osmosis_rubric``
    function such as ``f(solution_str, ground_truth, extra_info, **kwargs)``, whose ``**kwargs`` only
    tolerates more, and it gets the rubric function's three values."""
    params = inspect.signature(func).parameters
    if "rubric" in params or "model_info" in params:
        return True
    return "extra_info" not in params and any(p.kind is p.VAR_KEYWORD for p in params.values())


def _function_evaluator(
    func: Callable[..., Any], entry: RubricEntry, record: RubricRecord, arguments: dict[str, Any]
) -> Callable[[], Any]:
    if _takes_judge_arguments(func):
        call: Callable[[], Any] = lambda: func(**arguments, return_details=True)  # noqa: E731
    else:
        params = inspect.signature(func).parameters
        values = {
            "solution_str": record.solution_str,
            "ground_truth": arguments["ground_truth"],
            "extra_info": enrich_extra_info(entry, record, arguments),
        }
        chosen = {k: v for k, v in values.items() if k in params}
        call = lambda: func(**chosen)  # noqa: E731
    if inspect.iscoroutinefunction(func):
        return call
    # Blocking user code runs in a daemon thread so other runs keep going, and one that never returns
    # cannot keep the process alive after its run is given up.
    return lambda: call_sync(call)


def _evaluator(
    entry: RubricEntry,
    record: RubricRecord,
    overrides: dict[str, Any] | None,
    function: Callable[..., Any] | None,
    template: JudgeTemplate,
) -> Evaluator:
    if function is not None:  # user code gets its own model_info: it may change it
        return _function_evaluator(function, entry, record, judge_arguments(entry, record, overrides))
    # judge_arguments' values without its dict (the template has the model_info): one call per record.
    ground_truth, original_input, score_min, score_max = _record_values(entry, record)
    try:
        request = template.prepare(
            entry.rubric, record.solution_str, ground_truth=ground_truth, original_input=original_input,
            metadata=prompt_metadata(record), score_min=score_min, score_max=score_max,
        )  # fmt: skip
    except (TypeError, ValueError, MissingAPIKeyError) as exc:

        async def fail(problem: Exception = exc) -> Any:
            raise problem

        return fail
    return lambda: judge_call(request)


def _row_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    return row if isinstance(row, dict) else dict(row)


class RecordJudge:
    """Per work item (one run of one record): the call that judges it, and its solution preview.

    The record is built again from the item's row (rows stream through the session; none is held), and
    its judge call when its first run starts: the last ones are kept for the record's other runs, which
    start next to it. A record whose request cannot be prepared (a missing key, a bad option) gets a call
    that raises, so each of its runs is recorded as an error with the reason.
    """

    def __init__(
        self,
        entry: RubricEntry,
        source: RecordSource,
        overrides: dict[str, Any] | None = None,
        function: Callable[..., Any] | None = None,
    ) -> None:
        self._entry, self._source, self._overrides, self._function = entry, source, overrides, function
        self._record: tuple[int, RubricRecord] | None = None
        self._last: tuple[int, Evaluator] | None = None
        # The same for every record: the judge's settings are made once, each call builds its messages.
        self._template = JudgeTemplate(judge_model_info(entry, overrides), {})

    def rows(self) -> Iterator[dict[str, Any]]:
        """The rows of the session's records, each checked again (the file may have changed since the
        source's scan: a bad row then stops the session with its file, line and field). The record of
        the row handed out is kept: the engine starts its first run before it takes the next row."""
        for index, record in enumerate(self._source):
            self._record = (index, record)
            yield record.data

    def record(self, item: WorkItem) -> RubricRecord:
        """The record of ``item`` (its position from 0 is the log's ``row_index``)."""
        if self._record is None or self._record[0] != item.row_index:
            self._record = (item.row_index, self._source.record(item.row_index, _row_dict(item.row)))
        return self._record[1]

    def evaluator(self, item: WorkItem) -> Evaluator:
        """The call that judges ``item``'s record once."""
        if self._last is None or self._last[0] != item.row_index:
            record = self.record(item)
            evaluator = _evaluator(self._entry, record, self._overrides, self._function, self._template)
            self._last = (item.row_index, evaluator)
        return self._last[1]

    def preview(self, item: WorkItem) -> str:
        """The whitespace-collapsed start of the judged text, shown in the results."""
        return preview_text(self.record(item).solution_str)
