"""The results document of both rubric commands, streamed: ``eval-rubric -o`` in 0.2's layout and ``eval
rubric -o`` in 0.3's, built from one payload so their numbers are the same.

The payload is the document's summary (the keys before ``records`` and after it) and its records, which are
never all held: each record is read again from the dataset next to its latest runs from the results log
(both in record order), laid out, written and dropped. The keys after ``records`` (judge health, completed
runs, the judge checks) are counted on the way, by :class:`DocumentTally`.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from osmosis_ai.rubric.engine import RUN_FIELDS, JudgeHealth, calculate_statistics, established_statistics
from osmosis_ai.rubric.records import RecordSource, RubricRecord

if TYPE_CHECKING:
    from osmosis_ai._files import LaidOutList

__all__ = [
    "DocumentTally",
    "RecordName",
    "UnrenderedRecords",
    "core_records_0_3",
    "layout_0_3",
    "layout_0_3_parts",
    "overall_statistics",
    "payload_head",
    "record_0_3",
    "record_row",
    "record_runs",
    "write_document",
]


class RecordName(NamedTuple):
    """What names a chat record: all that 0.3's layout and the judge checks read of it (no ``data``)."""

    label: str
    record_id: str
    data: None = None


def record_runs(
    source: RecordSource,
    log_path: Path | None,
    number: int,
    *,
    project: bool = True,
    names_only: bool = False,
) -> Iterator[tuple[int, RubricRecord | RecordName, list[dict[str, Any]]]]:
    """``(position from 0, record, its latest runs)`` for every record of ``source``, in order; the runs
    (the established per-run fields, ``run_index`` from 0 as in the log; with ``project=False`` the log's
    records as they are) in run order. ``names_only`` (chat records, for 0.3's layout): each record as
    its :class:`RecordName`, read without building its row."""
    from osmosis_ai.runs.log import iter_latest_runs

    logged = (
        iter(()) if log_path is None or not Path(log_path).is_file() else iter_latest_runs(log_path, number)
    )
    pending = next(logged, None)
    records: Iterator[RubricRecord | RecordName] = (
        (RecordName(label, label) for label in source.chat_labels()) if names_only else iter(source)
    )
    for index, record in enumerate(records):
        runs: list[dict[str, Any]] = []
        while pending is not None and int(pending["row_index"]) <= index:
            if int(pending["row_index"]) == index:
                runs.append({name: pending.get(name) for name in RUN_FIELDS} if project else pending)
            pending = next(logged, None)
        yield index, record, runs


def record_row(
    index: int, record: RubricRecord | RecordName, runs: list[dict[str, Any]], *, for_report: bool = False
) -> dict[str, Any]:
    """One entry of the 0.2 document's ``records`` (records and runs numbered from 1, as established).

    ``for_report``: ``statistics`` only where the console report shows them (more than one run, or a run
    without a score), else None.
    """
    public: list[dict[str, Any]] = []
    scores: list[Any] = []
    unscored = 0
    for run in runs:  # one pass a record (the document's hot loop), no generator
        run = {**run, "run_index": int(run["run_index"]) + 1}
        public.append(run)
        if run["status"] == "success":
            if run["score"] is not None:
                scores.append(run["score"])
        elif run["status"] == "unscored":
            unscored += 1
    shown = not for_report or len(public) > 1 or len(scores) < len(public)
    return {
        "id": record.record_id,
        "record_index": index + 1,
        "conversation_id": record.label,
        "input_record": record.data,
        "statistics": calculate_statistics(scores, len(public), unscored) if shown else None,
        "runs": public,
    }


@dataclass
class DocumentTally:
    """What the document says after its records, counted as they stream past: judge health, the runs
    written, and the judge checks asked for (``noise`` / ``gold``: a calibration tally or None)."""

    health: JudgeHealth = field(default_factory=JudgeHealth)
    completed_runs: int = 0
    noise: Any = None
    gold: Any = None

    def rows(
        self, records: Iterator[tuple[int, RubricRecord | RecordName, list[dict[str, Any]]]]
    ) -> Iterator[dict[str, Any]]:
        """The 0.2 rows of ``records`` (from :func:`record_runs`), each counted as it is handed out."""
        for index, record, runs in records:
            for run in runs:
                self.health.add(run)
            self.completed_runs += len(runs)
            for tally in (self.noise, self.gold):
                if tally is not None:
                    tally.add(record, runs)
            yield record_row(index, record, runs)


class UnrenderedRecords(Exception):
    """The core met a record it cannot lay out as this module would: the document is written the Python
    way. ``shown``: the records whose console report was handed out already."""

    def __init__(self, shown: int) -> None:
        super().__init__(shown)
        self.shown = shown


def core_records_0_3(
    source: RecordSource,
    log_path: Path | None,
    number: int,
    tally: DocumentTally,
    show: Callable[[str], None] | None = None,
) -> LaidOutList | None:
    """0.3's ``records`` of the chat records of ``source`` with their latest runs, laid out by the core
    (``osmosis_ai._core.RubricOutputRecords``) as :func:`write_document` lays out :func:`record_0_3` of
    :meth:`DocumentTally.rows`, with ``show`` given each batch's console report text (as
    :class:`~osmosis_ai.rubric.report.RecordEcho` makes it of the rows); ``tally`` counts the runs once
    all are written. None where the core does not read these inputs (a rubric-id source, a log not
    numbered from 0). Reading the pieces raises :class:`UnrenderedRecords` at a record the core hands
    back (nothing counted)."""
    from osmosis_ai._core import RubricOutputRecords
    from osmosis_ai._files import LaidOutList
    from osmosis_ai.runs.log_read import numbered_from_0

    if source.rubric_id is not None or tally.noise is not None or tally.gold is not None:
        return None
    log = Path(log_path) if log_path is not None and Path(log_path).is_file() else None
    if log is not None and not numbered_from_0(log):
        return None
    core = RubricOutputRecords(str(source.path), None if log is None else str(log), number, show is not None)
    written = 0

    def pieces() -> Iterator[bytes]:
        nonlocal written
        for piece in core:
            if piece is None:
                raise UnrenderedRecords(written)
            text, report, records = piece
            if show is not None:
                show(report)
            written += records
            yield text
        runs, successes, unscored, errors, clamps, parse_failures, retries, attempts, *tokens = core.health()
        health = tally.health
        health.runs += runs
        health.successes += successes
        health.unscored += unscored
        health.errors += errors
        health.clamps += clamps
        health.parse_failures += parse_failures
        health.retries += retries
        health.attempts += attempts
        health.usage.add_counts(*tokens)
        tally.completed_runs += runs

    return LaidOutList(pieces(), lambda: written)


def overall_statistics(log_path: Path | None, rubric_id: str) -> tuple[dict[str, Any], list[Any]]:
    """``overall_statistics`` (the established keys) and the warnings, from the log's result model."""
    from osmosis_ai.results import read_results

    if log_path is None or not Path(log_path).is_file():
        return calculate_statistics([], 0), []
    result = read_results(log_path, failed="exclude")
    model = result.model() if result.models else None
    function = next((f for f in model.functions if f.name == rubric_id), None) if model else None
    if function is None:
        # Nothing scored (a success always has a score): the runs are counted, their statistics null.
        from osmosis_ai.runs.log import iter_latest_runs

        finished = unscored = 0
        for run in iter_latest_runs(Path(log_path)):
            finished += 1
            unscored += run.get("status") == "unscored"
        return calculate_statistics([], finished, unscored), list(result.warnings)
    moments = (function.mean, function.variance, function.std, function.min, function.max)
    overall = established_statistics(moments, function.runs.finished, function.graded, function.runs.unscored)
    return overall, list(result.warnings)


def payload_head(
    *,
    rubric_id: str,
    source_label: str,
    model_info: Mapping[str, Any],
    number: int,
    config_path: Path | None,
    data_path: Path,
    overall: dict[str, Any],
) -> dict[str, Any]:
    """The established keys of the 0.2 payload before ``records``, in their order."""
    return {
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
        "rubric_id": rubric_id,
        "rubric_source": source_label,
        "provider": model_info.get("provider") or "<unknown>",
        "model": model_info.get("model") or "<unspecified>",
        "number": number,
        "config_path": str(config_path) if config_path else None,
        "data_path": str(data_path),
        "overall_statistics": overall,
    }


# Our keys after 0.3's: what a reader needs to know the run was cut short or the judge struggled.
_EXTRA_KEYS = (
    "rubric_id", "output_identifier", "judge_health", "concurrency", "planned_runs", "completed_runs",
    "interrupted", "session_error", "warnings",
)  # fmt: skip


def record_0_3(row: dict[str, Any]) -> dict[str, Any]:
    """One entry of the 0.3 document's ``records``, from the 0.2 row."""
    runs = row["runs"]
    scored = [r for r in runs if r["status"] == "success" and r["score"] is not None]
    return {
        "index": row["record_index"],
        "label": row["conversation_id"],
        "scores": [r["score"] for r in scored],
        "explanations": [r.get("explanation") or "" for r in scored],
        "errors": [
            r.get("error") or r.get("unscored_reason") or r["status"] for r in runs if r not in scored
        ],
        "statistics": row["statistics"],
        # Ours, after 0.3's keys: each run as the 0.2 layout keeps it (report, compare and
        # summarize_results read a rubric document's runs by record_index).
        "record_index": row["record_index"],
        "runs": runs,
    }


def layout_0_3_parts(
    payload: Mapping[str, Any], *, model: str, rubric: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The 0.3 document's keys before ``records`` and after it, from the 0.2 payload's (with or without
    its records): the statistics are the same objects, so both layouts always agree."""
    head = {
        "generated_at": payload["generated_at"],
        "model": model,
        "rubric": rubric,
        "data_path": payload["data_path"],
        "number": payload["number"],
        "overall_statistics": payload["overall_statistics"],
    }
    return head, {key: payload[key] for key in _EXTRA_KEYS if key in payload}


def layout_0_3(payload: Mapping[str, Any], *, model: str, rubric: str) -> dict[str, Any]:
    """The ``eval rubric -o`` document in memory: 0.3's keys in 0.3's order, then ours, from a 0.2 payload.

    0.3's layout is ``{generated_at, model, rubric, data_path, number, overall_statistics, records: [{index,
    label, scores, explanations, errors, statistics}]}``; statistics of a record without a score are null,
    never 0.0.

    Example:
        >>> doc = layout_0_3(payload, model="openai/gpt-4o-mini", rubric="Be kind.")  # doctest: +SKIP
        >>> list(doc)[:3]  # doctest: +SKIP
        ['generated_at', 'model', 'rubric']
    """
    head, tail = layout_0_3_parts(payload, model=model, rubric=rubric)
    return {**head, "records": [record_0_3(row) for row in payload["records"]], **tail}


def write_document(
    path: Path,
    head: dict[str, Any],
    rows: Iterator[dict[str, Any]] | LaidOutList,
    tail: Callable[[], dict[str, Any]],
    *,
    layout_0_3: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Writes the 0.2 payload ``{**head, "records": rows, **tail()}`` to ``path`` by the ``-o`` rule, or its
    0.3 layout with ``layout_0_3=(model, rubric)``, one record at a time: ``tail`` is asked for once the
    records are written. ``rows`` may be the records laid out already (:func:`core_records_0_3`, with
    ``layout_0_3``). Returns the payload without its records.

    Example:
        >>> tally = DocumentTally()  # doctest: +SKIP
        >>> rows = tally.rows(record_runs(source, log_path, number=1))  # doctest: +SKIP
        >>> write_document(out, head, rows, lambda: {"completed_runs": tally.completed_runs})  # doctest: +SKIP
    """
    from osmosis_ai._files import LaidOutList, write_json_streamed

    after: dict[str, Any] = {}

    def finish() -> dict[str, Any]:
        after.update(tail())
        return after

    if layout_0_3 is None:
        write_json_streamed(path, head, "records", rows, finish, ensure_ascii=False)
    else:
        model, rubric = layout_0_3
        first = layout_0_3_parts(head, model=model, rubric=rubric)[0]
        write_json_streamed(
            path, first, "records", rows if isinstance(rows, LaidOutList) else map(record_0_3, rows),
            lambda: layout_0_3_parts({**head, **finish()}, model=model, rubric=rubric)[1], ensure_ascii=False,
        )  # fmt: skip
    return {**head, **after}
