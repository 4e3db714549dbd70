"""Results logs (and their dataset files) for the report, compare and view tests, written as the
commands write them: a header naming the dataset, then one record per run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from osmosis_ai.runs.log import dataset_fingerprint, row_key

FIRST, SECOND = "m:exact", "m:format"
TOPICS = ("algebra", "geometry", "counting")


def dataset_rows(rows: int) -> list[dict[str, Any]]:
    return [
        {"system_prompt": "Answer with a number.", "user_prompt": f"Question {i}: what is {i} + {i}?",
         "ground_truth": f"truth-{2 * i}", "topic": TOPICS[i % 3], "difficulty": "hard" if i % 4 == 0 else "easy"}
        for i in range(rows)
    ]  # fmt: skip


def write_dataset(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _record(i: int, run: int, row: dict[str, Any], *, answer: str, exact: float | None, ok: bool = True,
            format_error: bool = False, extra: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    scores: dict[str, Any] = {}
    if ok and exact is not None:
        scores[FIRST] = exact
    if ok and not format_error:
        scores[SECOND] = 1.0
    record = {
        "row_key": row_key(row), "row_index": i, "run_index": run, "model_tag": "", "success": ok, "scores": scores,
        "error": None if ok else "Provider error: 429 Too Many Requests", "finish_reason": "stop" if ok else None,
        "final_messages": [{"role": "system", "content": row["system_prompt"]}, {"role": "user", "content": row["user_prompt"]},
                           {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "add", "arguments": json.dumps({"a": i, "b": i})}}]},
                           {"role": "tool", "tool_call_id": "c1", "content": str(2 * i)},
                           {"role": "assistant", "content": answer}] if ok else [],
        "tool_calls": [{"name": "add", "arguments": {"a": i, "b": i}, "result": str(2 * i), "error": None,
                        "duration_ms": 1.5 + run, "started_ms": 12.5 + 10 * run}] if ok else [],
        "duration_ms": 40.0 * (1 + i % 7) + run, "tokens": 100 + i, "prompt_tokens": 80, "completion_tokens": 20 + i,
    }  # fmt: skip
    if format_error:
        record["eval_errors"] = {SECOND: f"ValueError: cannot parse the answer of row {i}"}
    record.update(extra or {})
    return record


def passes(i: int, run: int, variant: str = "a") -> bool:
    """Whether run ``run`` of row ``i`` passes ``m:exact`` in run A or B (see :func:`write_eval_log`)."""
    if variant == "b" and i % 5 == 1:
        return run == 0  # B passes the first attempt of the rows A never passes
    if variant == "b" and i % 10 == 0:
        return run != 0  # ... and misses the first attempt of some rows A always passes
    return i % 5 in (0, 2) or (i % 5 in (3, 4) and (i + run) % 3 != 0)


def write_eval_log(folder: Path, rows: int = 90, n: int = 4, variant: str = "a") -> tuple[Path, Path]:
    """An eval log over a dataset with ``topic`` and ``difficulty`` fields, n runs per row.

    Row i, run r: ``m:exact`` passes on every run for i % 5 in (0, 2), on none for i % 5 == 1, when
    (i + r) % 3 != 0 otherwise; rows i % 11 == 7 score 0.0 on every run. ``m:format`` raises on run 1
    of rows i % 10 == 3. Run 2 of rows i % 9 == 4 errors (a provider 429): no score at all.
    Variant "b" (another model on the same dataset, :func:`passes`) differs on rows i % 5 == 1 and
    i % 10 == 0 only, where it also words its answers "Result: ...".
    """
    data = dataset_rows(rows)
    dataset = folder / "questions.jsonl"
    if not dataset.exists():
        write_dataset(dataset, data)
    header = {"format": "osmosis-results/1", "kind": "eval",
              "config": {"eval_fns": [FIRST, SECOND], "n_runs": n, "model": f"org/model-{variant}", "agent": "agent:loop"},
              "dataset": dataset_fingerprint(dataset), "created_at": "2026-11-27T00:00:00+00:00",
              "osmosis_version": "0.3.9"}  # fmt: skip
    lines = [header]
    for i, row in enumerate(data):
        for run in range(n):
            passed = passes(i, run, variant)
            exact = 0.0 if i % 11 == 7 else float(passed)
            changed = variant == "b" and (i % 5 == 1 or i % 10 == 0)
            lead = "Result:" if changed else "The answer is"
            answer = f"{lead} {2 * i if passed else 2 * i + 1}."
            lines.append(_record(i, run, row, answer=answer, exact=exact, ok=not (i % 9 == 4 and run == 2),
                                 format_error=i % 10 == 3 and run == 1))  # fmt: skip
    log = folder / ("eval-log.jsonl" if variant == "a" else "eval-log-b.jsonl")
    log.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return log, dataset
