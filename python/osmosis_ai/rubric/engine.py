"""The eval-rubric engine: records and runs judged concurrently, results kept as they complete.

Workers pull ``(record, run)`` jobs from an iterator, so memory is bounded by the work in flight. Each
finished run is appended to a JSONL log and flushed before the next is counted, and the in-memory
:class:`EngineState` always holds every completed run: an interrupted or crashed session loses nothing.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import inspect
import json
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TextIO

from osmosis_ai.llm.client import Usage
from osmosis_ai.rubric.judge import JudgeOutcome

__all__ = [
    "EngineState",
    "Job",
    "JudgeHealth",
    "RunResult",
    "calculate_statistics",
    "preview_text",
    "run_jobs",
]

PREVIEW_LIMIT = 140
SYSTEMIC_KINDS = frozenset({"auth", "not_found"})


def preview_text(text: str) -> str:
    """Whitespace-collapsed text, cut to 140 characters with ``...``."""
    collapsed = " ".join(text.split())
    return collapsed if len(collapsed) <= PREVIEW_LIMIT else collapsed[: PREVIEW_LIMIT - 3].rstrip() + "..."


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat()


@dataclass
class RunResult:
    """One judged run. ``status`` is ``success``, ``unscored`` (no usable reply) or ``error``."""

    run_index: int
    status: str
    started_at: str
    completed_at: str
    duration_seconds: float
    score: float | None = None
    explanation: str | None = None
    preview: str | None = None
    error: str | None = None
    raw: Any = None
    raw_score: float | None = None
    clamped: bool = False
    unscored_reason: str | None = None
    error_kind: str | None = None
    attempts: int = 0
    retries: int = 0
    parse_failures: int = 0
    usage: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        # Shallow on purpose: dataclasses.asdict deep-copies `raw`, which is most of a run's CPU here.
        return {name: getattr(self, name) for name in _RUN_FIELDS}


_RUN_FIELDS = tuple(f.name for f in fields(RunResult))


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

    def add(self, result: RunResult) -> None:
        self.runs += 1
        self.successes += result.status == "success"
        self.unscored += result.status == "unscored"
        self.errors += result.status == "error"
        self.clamps += bool(result.clamped)
        self.parse_failures += result.parse_failures
        self.retries += result.retries
        self.attempts += result.attempts
        self.usage.merge(Usage(**result.usage) if result.usage else Usage())

    def as_json(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k != "usage"}
        return {**data, **self.usage.as_dict()}

    def line(self) -> str:
        return (
            f"Judge health: {self.parse_failures} parse failure(s), {self.clamps} clamped, {self.retries} "
            f"retried, {self.unscored} unscored, {self.errors} error(s); tokens {self.usage.prompt_tokens} "
            f"prompt + {self.usage.completion_tokens} completion"
        )


def calculate_statistics(scores: list[float], total_runs: int, unscored: int = 0) -> dict[str, Any]:
    """Population statistics of the successful scores, plus run counters (unscored runs are not zeros).

    The numbers come from the Rust statistics core (:func:`osmosis_ai.stats.score_statistics`), the
    same aggregator as eval's summaries.
    """
    from osmosis_ai.stats import score_statistics

    base = {"average": 0.0, "variance": 0.0, "stdev": 0.0, "min": 0.0, "max": 0.0}
    if scores:
        s = score_statistics(scores)
        base = {"average": s.mean, "variance": s.variance, "stdev": s.std, "min": s.min, "max": s.max}
    return {
        **base,
        "total_runs": total_runs,
        "success_count": len(scores),
        "failure_count": total_runs - len(scores),
        "unscored_count": unscored,
    }


Evaluator = Callable[[], Awaitable[Any]]


@dataclass
class Job:
    """One run of one record: ``evaluate`` returns a :class:`JudgeOutcome`, a float or a result dict."""

    record_index: int
    run_index: int
    evaluate: Evaluator
    solution_preview: str


@dataclass
class EngineState:
    """Everything completed so far; safe to report from at any moment."""

    total: int
    results: dict[int, dict[int, RunResult]] = field(default_factory=dict)
    health: JudgeHealth = field(default_factory=JudgeHealth)
    interrupted: bool = False
    session_error: str | None = None

    @property
    def stopping(self) -> bool:
        return self.interrupted or self.session_error is not None

    def record(self, record_index: int, result: RunResult) -> None:
        self.results.setdefault(record_index, {})[result.run_index] = result
        self.health.add(result)


def _from_outcome(result: RunResult, outcome: JudgeOutcome) -> None:
    stats = outcome.stats
    result.attempts, result.retries, result.parse_failures = (
        stats.attempts,
        stats.retries,
        stats.parse_failures,
    )
    result.usage = stats.usage.as_dict()
    result.raw = outcome.raw
    if outcome.reply is not None:
        result.status = "success"
        result.score, result.raw_score = outcome.reply.score, outcome.reply.raw_score
        result.clamped, result.explanation = outcome.reply.clamped, outcome.reply.explanation
    else:
        result.status = "unscored" if outcome.status == "unscored" else "error"
        result.unscored_reason = outcome.reason if outcome.status == "unscored" else None
        result.error_kind = outcome.reason if outcome.status == "error" else None
        result.error = str(outcome.error)


def _from_value(result: RunResult, value: Any) -> None:
    # A custom evaluation function: a number, or a dict shaped like evaluate_rubric's details.
    if isinstance(value, dict):
        score = value.get("score")
        result.explanation = str(value["explanation"]).strip() or None if value.get("explanation") else None
        result.raw = value.get("raw", value)
        result.raw_score = value.get("raw_score", score)
        result.clamped = bool(value.get("clamped", False))
    else:
        score, result.raw, result.raw_score = value, value, value
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        result.status, result.error = "error", f"The evaluation returned no numeric score (got {score!r})"
        return
    result.status, result.score = "success", float(score)


async def _run_one(job: Job) -> RunResult:
    started, clock = _now(), time.perf_counter()
    result = RunResult(job.run_index, "error", started, started, 0.0, preview=job.solution_preview)
    try:
        value = job.evaluate()
        value = await value if inspect.isawaitable(value) else value
        if isinstance(value, JudgeOutcome):
            _from_outcome(result, value)
        else:
            _from_value(result, value)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # one bad run must not end the session; it is reported with its type
        result.status = "error"
        result.error = f"{type(exc).__name__}: {exc}"
    result.completed_at = _now()
    result.duration_seconds = time.perf_counter() - clock
    return result


class Progress:
    """One progress line on stderr, shown only on a terminal and for more than one run."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = total
        self.enabled = total > 1 and self.stream.isatty()
        self._last = 0.0

    def update(self, state: EngineState, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        h = state.health
        width = 24
        filled = int(width * h.runs / max(self.total, 1))
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(
            f"\r[{bar}] {h.runs}/{self.total} ok={h.successes} unscored={h.unscored} err={h.errors} "
            f"retries={h.retries}"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()


async def run_jobs(
    jobs: Iterable[Job],
    state: EngineState,
    *,
    concurrency: int,
    log_path: Path | None = None,
    progress: Progress | None = None,
) -> EngineState:
    """Runs jobs with at most ``concurrency`` in flight, recording each result as it completes."""
    iterator = iter(jobs)
    log = log_path.open("a", encoding="utf-8") if log_path else None

    async def worker() -> None:
        for job in iterator:
            if state.stopping:
                return
            result = await _run_one(job)
            state.record(job.record_index, result)
            if result.error_kind in SYSTEMIC_KINDS and state.session_error is None:
                # Every further call would fail the same way (bad key, unknown model): stop spending calls.
                state.session_error = f"systemic provider failure, remaining runs skipped: {result.error}"
            if log is not None:
                log.write(
                    json.dumps({"record_index": job.record_index, **result.as_json()}, default=str) + "\n"
                )
                log.flush()
            if progress is not None:
                progress.update(state)

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    finally:
        if log is not None:
            log.close()
        if progress is not None:
            progress.close()
    return state
