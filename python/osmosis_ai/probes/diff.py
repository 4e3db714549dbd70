"""``osmosis reward diff OLD NEW --log RESULTS``: what a changed reward would have changed.

Every saved run of a results log (its output, against its dataset row) is re-scored with both versions
on the run engine. The report says which runs flip between pass and fail, how the mean and pass@k move,
and, per group of runs of one row, whether the group-relative advantage signs change: the runs a
GRPO-style update would push the other way. Statistics come from the Rust core (``osmosis_ai.stats``).
Only runs both versions scored are compared (flips, changed scores); groups with a run either version
could not score are left out of the sign comparison and counted. Each version's mean and pass@k follow the
eval summary's rule: a saved run that errored (no output) is 0.0 and did not pass, a run the version
raised on is no attempt of that version.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.errors import EvalFnError
from osmosis_ai.eval.functions import EvalFunction
from osmosis_ai.probes.probe import conversation
from osmosis_ai.runs.engine import RunEngine
from osmosis_ai.runs.work import MemorySink, RunControl, WorkItem, new_item_record

__all__ = ["DiffExecutor", "DiffReport", "build_diff", "diff_log"]

MAX_EXAMPLES = 5


class DiffExecutor:
    """Scores one saved run with both versions: ``scores = {"old": x, "new": y}``."""

    def __init__(self, old: EvalFunction, new: EvalFunction) -> None:
        self.versions = {"old": old, "new": new}

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        return new_item_record(item)

    async def execute(self, item: WorkItem, record: dict[str, Any], control: RunControl) -> None:
        payload = item.row
        if payload["output"] is None:
            record["error"] = "the saved run errored or holds no model output"
            return
        messages = payload.get("messages") or conversation(payload["item"], payload["output"])
        record["output"] = payload["output"]
        errors: dict[str, str] = {}
        for side, fn in self.versions.items():
            try:
                record["scores"][side] = await fn.score(messages, payload["item"])
            except EvalFnError as exc:
                errors[side] = str(exc)
        if errors:
            record["eval_errors"] = errors
        record["success"] = True

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        """Nothing to add."""


@dataclass
class DiffReport:
    """What changing the reward from ``old`` to ``new`` changes on the saved runs."""

    old: str
    new: str
    pass_threshold: float
    runs: int = 0
    compared: int = 0
    errors: dict[str, int] = field(default_factory=lambda: {"old": 0, "new": 0})
    without_output: int = 0
    changed_scores: int = 0
    fail_to_pass: int = 0
    pass_to_fail: int = 0
    flip_examples: list[dict[str, Any]] = field(default_factory=list)
    old_summary: dict[str, Any] = field(default_factory=dict)
    new_summary: dict[str, Any] = field(default_factory=dict)
    groups: int = 0
    groups_skipped: int = 0
    groups_sign_changed: int = 0
    runs_sign_changed: int = 0
    sign_examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def flips(self) -> int:
        return self.fail_to_pass + self.pass_to_fail

    def as_json(self) -> dict[str, Any]:
        delta = {"mean": _minus(self.new_summary.get("mean"), self.old_summary.get("mean"))}
        for k, value in (self.new_summary.get("pass_at_k") or {}).items():
            delta[f"pass_at_{k}"] = _minus(value, (self.old_summary.get("pass_at_k") or {}).get(k))
        return {
            "old": self.old,
            "new": self.new,
            "pass_threshold": self.pass_threshold,
            "runs": self.runs,
            "compared": self.compared,
            "errors": self.errors,
            "without_output": self.without_output,
            "changed_scores": self.changed_scores,
            "flips": {
                "total": self.flips,
                "fail_to_pass": self.fail_to_pass,
                "pass_to_fail": self.pass_to_fail,
                "examples": self.flip_examples,
            },
            "old_summary": self.old_summary,
            "new_summary": self.new_summary,
            "delta": delta,
            "advantage": {
                "groups": self.groups,
                "groups_skipped": self.groups_skipped,
                "groups_sign_changed": self.groups_sign_changed,
                "runs_sign_changed": self.runs_sign_changed,
                "examples": self.sign_examples,
            },
        }


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _summary(groups: list[list[float | None]], threshold: float) -> dict[str, Any]:
    from osmosis_ai.stats import summarize

    if not any(x is not None for g in groups for x in g):
        return {"mean": None, "pass_at_k": {}}  # nothing scored: null, never 0
    summary = summarize([g for g in groups if g], pass_threshold=threshold)
    return {
        "mean": summary.mean,
        "std": summary.std,
        "pass_at_k": {str(k): v for k, v in summary.pass_at_k.items()},
    }


def build_diff(
    records: Iterable[Mapping[str, Any]], old: str, new: str, *, pass_threshold: float
) -> DiffReport:
    """The :class:`DiffReport` of diff records (one per saved run, ``scores: {"old", "new"}``)."""
    from osmosis_ai.stats import advantage_sign_changes

    report = DiffReport(old=old, new=new, pass_threshold=pass_threshold)
    groups: dict[tuple[int, str, str], list[Mapping[str, Any]]] = {}
    for record in records:
        report.runs += 1
        groups.setdefault(
            (int(record["row_index"]), record["row_key"], record.get("model_tag") or ""), []
        ).append(record)
    # Each version's attempts per row, as its eval would count them: a score, None (errored run), or none.
    attempts: dict[str, list[list[float | None]]] = {"old": [], "new": []}
    complete: list[tuple[tuple[int, str, str], list[float], list[float]]] = []
    for key in sorted(groups):
        runs = sorted(groups[key], key=lambda r: int(r["run_index"]))
        old_scores, new_scores = [], []
        row_attempts: dict[str, list[float | None]] = {"old": [], "new": []}
        for run in runs:
            scores = run.get("scores") or {}
            if run.get("error"):
                report.without_output += 1
            for side in ("old", "new"):
                report.errors[side] += side in (run.get("eval_errors") or {})
                if side in scores or run.get("error"):
                    row_attempts[side].append(scores.get(side))
            if "old" not in scores or "new" not in scores:
                continue
            a, b = scores["old"], scores["new"]
            old_scores.append(a)
            new_scores.append(b)
            report.changed_scores += a != b
            if (a >= pass_threshold) != (b >= pass_threshold):
                if b >= pass_threshold:
                    report.fail_to_pass += 1
                else:
                    report.pass_to_fail += 1
                if len(report.flip_examples) < MAX_EXAMPLES:
                    report.flip_examples.append(
                        {
                            "row_index": key[0],
                            "run_index": run["run_index"],
                            "output": str(run.get("output", ""))[:120],
                            "old": a,
                            "new": b,
                        }
                    )
        report.compared += len(old_scores)
        for side in ("old", "new"):
            attempts[side].append(row_attempts[side])
        if len(old_scores) == len(runs):
            complete.append((key, old_scores, new_scores))
        else:
            report.groups_skipped += 1
    report.old_summary = _summary(attempts["old"], pass_threshold)
    report.new_summary = _summary(attempts["new"], pass_threshold)
    report.groups = len(complete)
    if complete:
        changes = advantage_sign_changes([c[1] for c in complete], [c[2] for c in complete])
        report.groups_sign_changed, report.runs_sign_changed = changes.groups_changed, changes.runs_changed
        for index in changes.changed[:MAX_EXAMPLES]:
            key, a, b = complete[index]
            report.sign_examples.append({"row_index": key[0], "model_tag": key[2], "old": a, "new": b})
    return report


def diff_log(
    old: EvalFunction, new: EvalFunction, log_path: Any, *, pass_threshold: float = 1.0, concurrency: int = 4
) -> DiffReport:
    """Re-scores every saved run of the results log at ``log_path`` with ``old`` and ``new``.

    Example:
        >>> report = diff_log(load_eval_function("r:exact"), load_eval_function("r:contains"),
        ...                   Path("eval.jsonl"))  # doctest: +SKIP
        >>> report.flips, report.groups_sign_changed  # doctest: +SKIP
        (4, 3)
    """
    from pathlib import Path

    from osmosis_ai.graders.session import log_samples

    sink = MemorySink()
    engine = RunEngine(DiffExecutor(old, new), sink, concurrency=concurrency)
    asyncio.run(engine.run(log_samples(Path(log_path))))
    return build_diff(sink.records, old.name, new.name, pass_threshold=pass_threshold)
