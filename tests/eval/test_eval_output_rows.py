"""The rows of eval's `-o` document, streamed from the results log: order, completeness, latest run wins."""

import random
from pathlib import Path

from osmosis_ai.eval.summary import iter_rows
from osmosis_ai.runs.log import ResultsLog


def _record(row: int, run: int, tag: str = "", score: float = 1.0) -> dict:
    return {
        "row_key": f"k{row}",
        "row_index": row,
        "run_index": run,
        "model_tag": tag,
        "success": True,
        "scores": {"m:f": score},
        "error": None,
        "final_messages": [{"role": "user", "content": "x" * 300}],
        "duration_ms": 1.5,
        "tokens": 7,
    }


def test_rows_come_whole_in_first_mention_order_with_runs_sorted_and_the_latest_run_kept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.jsonl"
    # Two models, two runs each, finishing out of order; row 3 is never completed; row 0's primary run 0 is
    # logged twice before the row is complete (a resumed item): the later record is the one shown.
    order = [(1, 1, "b"), (0, 0, ""), (1, 0, ""), (0, 1, "b"), (3, 0, ""), (0, 0, ""), (1, 0, "b")]
    order += [(1, 1, ""), (2, 1, "b"), (0, 1, ""), (2, 0, ""), (2, 1, ""), (2, 0, "b"), (0, 0, "b")]
    with ResultsLog.create(path, {"c": 1}) as log:
        for number, (row, run, tag) in enumerate(order):
            log.append(_record(row, run, tag, score=float(number)))
    rows = list(iter_rows(path, runs_per_row=4, with_tags=True))
    # Row 1 is complete first; row 0 then; row 2 waits behind row 3, which never completes.
    assert [r["row_index"] for r in rows] == [1, 0, 3, 2]
    assert [len(r["runs"]) for r in rows] == [4, 4, 1, 4]
    runs = [(run["model_tag"], run["run_index"]) for run in rows[1]["runs"]]
    assert runs == [("primary", 0), ("primary", 1), ("b", 0), ("b", 1)]  # the primary model's first
    assert rows[1]["runs"][0]["scores"] == {"m:f": 5.0}
    assert all("final_messages" not in run for r in rows for run in r["runs"])


def test_a_long_log_streams_every_row_once(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    rng = random.Random(3)
    items = [(row, run) for row in range(3000) for run in range(2)]
    # Bounded concurrency: items finish a little out of order.
    window: list[tuple[int, int]] = []
    finished = []
    for item in items:
        window.append(item)
        if len(window) > 8:
            finished.append(window.pop(rng.randrange(len(window))))
    finished += window
    with ResultsLog.create(path, {"c": 1}) as log:
        for row, run in finished:
            log.append(_record(row, run))
    rows = list(iter_rows(path, runs_per_row=2, with_tags=False))
    assert sorted(r["row_index"] for r in rows) == list(range(3000))
    assert all([run["run_index"] for run in r["runs"]] == [0, 1] for r in rows)
