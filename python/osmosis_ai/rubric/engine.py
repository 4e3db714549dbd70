"""The work of one eval-rubric item on the run engine: one judged run of one record, as a log record.

Each record (the unit of ``--resume``) carries the engine's keys (``row_key``, ``row_index`` = the
record's position and ``run_index``, both from 0 as in every results log, ``success``, ``scores:
{rubric_id: score}``) and the
established per-run fields of the results document (``status``: ``success``, ``unscored`` or ``error``,
``score``, ``explanation``, ``raw``, ...). An unscored run has no score: it is never counted as 0.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from osmosis_ai import _core
from osmosis_ai.errors import SignatureError
from osmosis_ai.llm.retry import SYSTEMIC_KINDS
from osmosis_ai.llm.usage import Usage
from osmosis_ai.rubric.judge import JudgeOutcome
from osmosis_ai.runs.work import RunControl, WorkItem, new_item_record
from osmosis_ai.scoring import coerce_score
from osmosis_ai.stats import score_moments  # runs.engine imports it already; a record's statistics use it

__all__ = [
    "RUN_FIELDS",
    "JudgeExecutor",
    "JudgeHealth",
    "RecordCalls",
    "calculate_statistics",
    "established_statistics",
    "preview_text",
    "utc_stamp",
]

PREVIEW_LIMIT = 140
# The per-run fields of the established results document, in its order: the core's list, which its own
# writer of the `eval rubric -o` records (_core.RubricOutputRecords) reads too.
RUN_FIELDS: tuple[str, ...] = tuple(_core.RUBRIC_RUN_FIELDS)

Evaluator = Callable[[], Awaitable[Any]]
# A new record's run fields (run_index is the item's, set by new_item_record); made once, copied per record.
_RUN_DEFAULTS: dict[str, Any] = {
    **dict.fromkeys(name for name in RUN_FIELDS if name != "run_index"),
    **{"status": "error", "duration_seconds": 0.0, "clamped": False, "attempts": 0, "retries": 0},
    "parse_failures": 0,
}


# How much of a text preview_text collapses first: enough for the preview unless it is mostly whitespace.
_PREVIEW_WINDOW = PREVIEW_LIMIT + 20


def _collapsed(text: str) -> str:
    """``" ".join(text.split())``. In printable text without a double space (prose) the single spaces are
    the only whitespace (every other whitespace character is not printable): stripping the ends is the
    same, without a list of its words."""
    if text.isprintable() and "  " not in text:
        return text.strip(" ")
    return " ".join(text.split())


def preview_text(text: str) -> str:
    """Whitespace-collapsed text, cut to 140 characters with ``...``."""
    if len(text) > _PREVIEW_WINDOW:
        # Collapsing a head of the text gives a head of the collapsed text (a word cut short is a head of
        # it): once longer than the limit, the preview is the same without collapsing the rest.
        head = _collapsed(text[:_PREVIEW_WINDOW])
        if len(head) > PREVIEW_LIMIT:
            return head[: PREVIEW_LIMIT - 3].rstrip() + "..."
    collapsed = _collapsed(text)
    return collapsed if len(collapsed) <= PREVIEW_LIMIT else collapsed[: PREVIEW_LIMIT - 3].rstrip() + "..."


# The last second stamped and its text (one tuple: a thread reads both of one second): a run's two
# stamps, and the runs around it, share their second.
_SECOND: tuple[int, str] = (-1, "")


def utc_stamp(ns: int | None = None) -> str:
    """``datetime.now(timezone.utc).isoformat()`` (or of ``ns``, nanoseconds since the epoch): the same
    text (microseconds floored, left out when 0) for a third of the cost, the date and time of day made
    once a second."""
    global _SECOND
    seconds, micros = divmod((time.time_ns() if ns is None else ns) // 1000, 1_000_000)
    second = _SECOND
    if second[0] != seconds:
        second = _SECOND = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{second[1]}.{micros:06d}+00:00" if micros else f"{second[1]}+00:00"


@dataclass
class JudgeHealth:
    """How the judge behaved over a session (printed in the summary, written to the results)."""

    runs: int = 0
    successes: int = 0
    unscored: int = 0
    errors: int = 0
    clamps: int = 0
    parse_failures: int = 0
    retries: int = 0
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)

    def add(self, run: Mapping[str, Any]) -> None:
        """Counts one run record."""
        self.runs += 1
        status = run.get("status")
        self.successes += status == "success"
        self.unscored += status == "unscored"
        self.errors += status == "error"
        self.clamps += bool(run.get("clamped"))
        self.parse_failures += int(run.get("parse_failures") or 0)
        self.retries += int(run.get("retries") or 0)
        self.attempts += int(run.get("attempts") or 0)
        usage = run.get("usage")
        if usage:  # a run's Usage.as_dict(), counted without a Usage made of it
            get = usage.get
            self.usage.add_counts(
                get("prompt_tokens", 0), get("completion_tokens", 0), get("total_tokens", 0)
            )

    @classmethod
    def of(cls, runs: Iterable[Mapping[str, Any]]) -> JudgeHealth:
        health = cls()
        for run in runs:
            health.add(run)
        return health

    def as_json(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k != "usage"}
        return {**data, **self.usage.as_dict()}

    def line(self) -> str:
        return (
            f"Judge health: {self.parse_failures} parse failure(s), {self.clamps} clamped, {self.retries} "
            f"retried, {self.unscored} unscored, {self.errors} error(s); tokens {self.usage.prompt_tokens} "
            f"prompt + {self.usage.completion_tokens} completion"
        )


def established_statistics(
    moments: tuple[float | None, ...], total_runs: int, success_count: int, unscored: int
) -> dict[str, Any]:
    """The established statistics keys: ``moments`` is ``(mean, variance, std, min, max)``, then the run
    counters (a run that is not a success is a failure; unscored runs are counted apart, never as zeros)."""
    mean, variance, std, low, high = moments
    return {
        "average": mean,
        "variance": variance,
        "stdev": std,
        "min": low,
        "max": high,
        "total_runs": total_runs,
        "success_count": success_count,
        "failure_count": total_runs - success_count,
        "unscored_count": unscored,
    }


def calculate_statistics(scores: list[float], total_runs: int, unscored: int = 0) -> dict[str, Any]:
    """Population statistics of the successful scores, plus run counters (unscored runs are not zeros).

    The numbers come from the Rust statistics core (:func:`osmosis_ai.stats.score_moments`), the
    same aggregator as eval's summaries. With no score at all the statistics are null: the established 0.0
    read as "everything scored 0".
    """
    return established_statistics(score_moments(scores), total_runs, len(scores), unscored)


def _from_outcome(record: dict[str, Any], outcome: JudgeOutcome) -> None:
    stats = outcome.stats
    record["attempts"], record["retries"] = stats.attempts, stats.retries
    record["parse_failures"] = stats.parse_failures
    record["usage"] = stats.usage.as_dict()
    record["raw"] = outcome.raw
    reply = outcome.reply
    if reply is not None:
        record["status"] = "success"
        record["score"], record["raw_score"] = reply.score, reply.raw_score
        record["clamped"], record["explanation"] = reply.clamped, reply.explanation
    else:
        record["status"] = "unscored" if outcome.status == "unscored" else "error"
        record["unscored_reason"] = outcome.reason if outcome.status == "unscored" else None
        record["error_kind"] = outcome.reason if outcome.status == "error" else None
        record["error"] = str(outcome.error)


def _from_value(record: dict[str, Any], value: Any) -> None:
    # A custom evaluation function: a number, or a dict shaped like evaluate_rubric's details.
    if isinstance(value, dict):
        score = value.get("score")
        record["explanation"] = (
            str(value["explanation"]).strip() or None if value.get("explanation") else None
        )
        record["raw"] = value.get("raw", value)
        record["raw_score"] = value.get("raw_score", score)
        record["clamped"] = bool(value.get("clamped", False))
    else:
        score = record["raw"] = record["raw_score"] = value
    try:
        record["score"] = coerce_score(score, function="evaluation", strict=False)
    except SignatureError as exc:
        record["status"], record["error"] = "error", f"The evaluation returned no usable score: {exc}"
        return
    record["status"] = "success"


class RecordCalls(Protocol):
    """Per work item, the call that judges its record once and the record's solution preview
    (:class:`~osmosis_ai.rubric.runner.RecordJudge`)."""

    def evaluator(self, item: WorkItem) -> Evaluator: ...

    def preview(self, item: WorkItem) -> str: ...


class JudgeExecutor:
    """Judges one (record, run) item: ``calls.evaluator(item)()`` returns a JudgeOutcome, a number or a dict.

    Args:
        rubric_id: The score's name in ``scores``.
        calls: The judge call and the preview of each item's record.
    """

    def __init__(self, rubric_id: str, calls: RecordCalls) -> None:
        self.rubric_id = rubric_id
        self.calls = calls
        self._clock: dict[int, float] = {}

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        started = utc_stamp()
        self._clock[id(item)] = time.perf_counter()
        record = new_item_record(item)
        record.update(_RUN_DEFAULTS)
        record["started_at"] = record["completed_at"] = started
        record["preview"] = self.calls.preview(item)
        record["usage"] = {}
        return record

    async def execute(self, item: WorkItem, record: dict[str, Any], control: RunControl) -> None:
        try:
            value = self.calls.evaluator(item)()
            value = await value if inspect.isawaitable(value) else value
            if isinstance(value, JudgeOutcome):
                _from_outcome(record, value)
            else:
                _from_value(record, value)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one bad run must not end the session; it is reported with its type
            record["status"], record["error"] = "error", f"{type(exc).__name__}: {exc}"
        if record["status"] == "success":
            record["success"] = True
            record["scores"] = {self.rubric_id: record["score"]}
        elif record.get("error_kind") in SYSTEMIC_KINDS:
            # Every further call would fail the same way (bad key, unknown model): stop spending calls.
            control.stop_early(f"systemic provider failure, remaining runs skipped: {record['error']}")

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        if record.get("error") and record["status"] == "success":  # timed out after scoring: not a score
            record["status"], record["success"], record["scores"] = "error", False, {}
        record["completed_at"] = utc_stamp()
        record["duration_seconds"] = time.perf_counter() - self._clock.pop(id(item), time.perf_counter())
