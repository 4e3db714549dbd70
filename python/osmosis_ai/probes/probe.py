"""``osmosis reward probe``: every eval function on the correct answer and on every control of each row.

One work item per row on the run engine (results log kind ``probe``, so ``--resume`` works as for eval).
A record's ``scores`` are keyed ``"<function>@<probe>"``, with the probe ``correct`` for the row's real
answer as written and ``correct_*`` for it in the other common formats (:data:`~osmosis_ai.probes.controls.CORRECT_FORMS`); a function
that raised is under ``eval_errors`` with the same key, never a score. ``previews`` keeps each answer's
text (cut) so the report can show example rows without re-reading the dataset.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from osmosis_ai.errors import EvalFnError
from osmosis_ai.eval.functions import EvalFunction
from osmosis_ai.probes.controls import build_controls, correct_answer, correct_forms
from osmosis_ai.runs.engine import RunEngine
from osmosis_ai.runs.work import RunControl, RunOutcome, WorkItem, new_item_record, work_items

__all__ = ["CORRECT", "ProbeExecutor", "log_config", "other_answers", "probe_key", "run_probes"]

CORRECT = "correct"
_PREVIEW = 120


def probe_key(function: str, probe: str) -> str:
    """The score name of one function on one probe (``"mod:fn@empty"``)."""
    return f"{function}@{probe}"


def _preview(text: str) -> str:
    if len(text) <= _PREVIEW:  # as it is: whitespace around an answer can be what a probe is about
        return text
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 3] + "..."


def conversation(row: Mapping[str, Any], answer: str) -> list[dict[str, Any]]:
    """The messages an eval function sees: the row's prompts, then ``answer`` as the assistant's reply."""
    messages: list[dict[str, Any]] = []
    if isinstance(row.get("system_prompt"), str):
        messages.append({"role": "system", "content": row["system_prompt"]})
    messages.append({"role": "user", "content": str(row.get("user_prompt") or "")})
    messages.append({"role": "assistant", "content": answer})
    return messages


def other_answers(answers: Sequence[str]) -> dict[int, str | None]:
    """For each row index, the next row's answer that differs from its own (cyclically), or None.

    Example:
        >>> other_answers(["1", "1", "2"])
        {0: '2', 1: '2', 2: '1'}
    """
    result: dict[int, str | None] = {}
    n = len(answers)
    if len(set(answers)) < 2:  # also keeps the search below linear when every answer is the same
        return dict.fromkeys(range(n))
    for i, own in enumerate(answers):
        result[i] = next((answers[(i + j) % n] for j in range(1, n) if answers[(i + j) % n] != own), None)
    return result


class ProbeExecutor:
    """Scores one row's correct answer and controls with every eval function.

    Args:
        eval_fns: The loaded eval functions.
        others: Row index -> another row's correct answer (see :func:`other_answers`).
    """

    def __init__(self, eval_fns: Sequence[EvalFunction], others: Mapping[int, str | None]) -> None:
        self.eval_fns = list(eval_fns)
        self.others = others

    def new_record(self, item: WorkItem) -> dict[str, Any]:
        return new_item_record(item)

    async def execute(self, item: WorkItem, record: dict[str, Any], control: RunControl) -> None:
        candidates = {
            **correct_forms(correct_answer(item.row)),
            **build_controls(item.row, self.others.get(item.row_index)),
        }
        answers = {name: text for name, text in candidates.items() if text is not None}
        record["previews"] = {name: _preview(text) for name, text in answers.items()}
        record["not_applicable"] = sorted(name for name, text in candidates.items() if text is None)
        errors: dict[str, str] = {}
        for fn in self.eval_fns:
            for probe, text in answers.items():
                key = probe_key(fn.name, probe)
                try:
                    record["scores"][key] = await fn.score(conversation(item.row, text), item.row)
                except EvalFnError as exc:
                    errors[key] = str(exc)
        if errors:
            record["eval_errors"] = errors
        record["success"] = True

    def finish(self, item: WorkItem, record: dict[str, Any]) -> None:
        """Nothing to add: a probe spends no tokens."""


def log_config(eval_fns: Sequence[EvalFunction], threshold: float) -> dict[str, Any]:
    """What makes probe logs comparable (a resume with another function list is refused)."""
    # probes_version 2: controls sized to each answer, correct answers in common formats.
    return {"eval_fns": [fn.name for fn in eval_fns], "threshold": threshold, "probes_version": 2}


def run_probes(
    eval_fns: Sequence[EvalFunction],
    rows: Iterator[tuple[int, Mapping[str, Any]]],
    others: Mapping[int, str | None],
    log: Any,
    *,
    concurrency: int = 4,
    on_record: Callable[[dict[str, Any], RunOutcome], None] | None = None,
) -> RunOutcome:
    """Runs the probes of every row the log does not hold yet; the records go to ``log``.

    Args:
        eval_fns: The functions to probe.
        rows: ``(row_index, row)`` pairs.
        others: Row index -> another row's answer.
        log: An open :class:`~osmosis_ai.runs.log.ResultsLog` (or ``MemorySink``).
        concurrency: Rows in flight.
        on_record: The progress display.

    Returns:
        What the session did; the results are in the log (see :func:`~osmosis_ai.probes.report.build_report`).
    """
    engine = RunEngine(ProbeExecutor(eval_fns, others), log, concurrency=concurrency, on_record=on_record)
    items = work_items(rows, 1, ("",), log.done, engine.outcome)
    from osmosis_ai.llm.pool import TransportPool

    async def main() -> RunOutcome:
        # One connection pool for every judge / grader model call of the session.
        async with TransportPool(max_connections=concurrency):
            return await engine.run(items)

    try:
        return asyncio.run(main())
    except KeyboardInterrupt as exc:  # a second Ctrl+C or SIGTERM: what finished is in the log
        engine.outcome.interrupted_by(exc)
        return engine.outcome


def read_answers(path: Path) -> list[str]:
    """Every row's correct answer, in order (for the ``other_row`` control)."""
    from osmosis_ai.datasets import read_dataset

    return [correct_answer(row) for row in read_dataset(path, contract="any")]
