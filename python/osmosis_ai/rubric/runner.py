"""``eval-rubric`` sessions: what each run sends to the judge (or to an ``@osmosis_rubric`` function).

Builds the per-record judge arguments from a config entry and a record (record values win), the
``extra_info`` enrichment for custom rubric functions, and the per-record calls the run engine makes.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

from osmosis_ai.errors import MissingAPIKeyError
from osmosis_ai.rubric.config import RubricEntry
from osmosis_ai.rubric.engine import preview_text
from osmosis_ai.rubric.judge import DEFAULT_API_KEY_ENV, prepare, run_async
from osmosis_ai.rubric.records import RubricRecord
from osmosis_ai.runs.user_code import call_sync

__all__ = ["build_evaluators", "enrich_extra_info", "judge_arguments", "prompt_metadata"]

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


def judge_arguments(
    entry: RubricEntry, record: RubricRecord, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Keyword arguments of ``evaluate_rubric`` for one record (record values win over the entry)."""
    model_info = copy.deepcopy(entry.model_info)
    model_info.update({k: v for k, v in (overrides or {}).items() if v is not None})
    prompts = [
        p.strip() for p in (entry.system_prompt, model_info.get("system_prompt")) if isinstance(p, str)
    ]
    prompts = [p for p in prompts if p]
    if prompts:
        model_info["system_prompt"] = "\n\n".join(prompts)
    return {
        "rubric": entry.rubric,
        "solution_str": record.solution_str,
        "model_info": model_info,
        "ground_truth": record.ground_truth if record.ground_truth is not None else entry.ground_truth,
        "original_input": record.original_input
        if record.original_input is not None
        else entry.original_input,
        "metadata": prompt_metadata(record),
        "score_min": record.score_min if record.score_min is not None else entry.score_min,
        "score_max": record.score_max if record.score_max is not None else entry.score_max,
    }


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
    params = inspect.signature(func).parameters
    return (
        "rubric" in params or "model_info" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    )


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
) -> Evaluator:
    arguments = judge_arguments(entry, record, overrides)
    if function is not None:
        return _function_evaluator(function, entry, record, arguments)
    try:
        request = prepare(**arguments)
    except (TypeError, ValueError, MissingAPIKeyError) as exc:

        async def fail(problem: Exception = exc) -> Any:
            raise problem

        return fail
    return lambda: run_async(request)


class _Evaluators(Mapping[int, Evaluator]):
    """Record position -> the call that judges it, built when its run starts (the last one kept for the
    record's other runs, which start next to it): no prepared request per record is held."""

    def __init__(
        self,
        entry: RubricEntry,
        records: Sequence[RubricRecord],
        overrides: dict[str, Any] | None,
        function: Callable[..., Any] | None,
    ) -> None:
        self._entry, self._records, self._overrides, self._function = entry, records, overrides, function
        self._last: tuple[int, Evaluator] | None = None

    def __getitem__(self, index: int) -> Evaluator:
        if self._last is None or self._last[0] != index:
            record = self._records[index]
            self._last = (index, _evaluator(self._entry, record, self._overrides, self._function))
        return self._last[1]

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self._records)))


class _Previews(Mapping[int, str]):
    """Record position -> its solution preview, made when asked."""

    def __init__(self, records: Sequence[RubricRecord]) -> None:
        self._records = records

    def __getitem__(self, index: int) -> str:
        return preview_text(self._records[index].solution_str)

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self._records)))


def build_evaluators(
    entry: RubricEntry,
    records: Sequence[RubricRecord],
    *,
    overrides: dict[str, Any] | None = None,
    function: Callable[..., Any] | None = None,
) -> tuple[Mapping[int, Evaluator], Mapping[int, str]]:
    """Per record position (from 0, as the log's ``row_index``): the call that judges it once, and its
    solution preview.

    Each judge request is prepared when the record's run starts, and reused across its runs that follow;
    a record whose request cannot be prepared (a missing key, a bad option) gets a call that raises, so
    each of its runs is recorded as an error with the reason.
    """
    return _Evaluators(entry, records, overrides, function), _Previews(records)
