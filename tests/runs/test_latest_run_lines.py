"""The first pass over a results log's latest lines in the core (`latest_run_offsets`): for a log the engine
wrote, the same lines in the same order as Python's own pass; any other log is left to Python's."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osmosis_ai.runs import log_read as results_log
from osmosis_ai.runs.log import ResultsLog, latest_run_lines, row_key
from osmosis_ai.stats._results import latest_run_offsets

CONFIG = {"model": "openai/x", "eval_fns": ["a:f"]}


def _python_pass(path: Path, runs_per_row: int | None) -> list:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(results_log, "latest_run_offsets", lambda *_: None)
        base, lines = latest_run_lines(path, runs_per_row)
        return [base, *lines]


# (row, run) of each appended record, blank lines among them, and a last write a crash cut short.
_writes = st.lists(st.one_of(st.tuples(st.integers(0, 4), st.integers(0, 3)), st.just("blank")), max_size=25)


@settings(max_examples=60, deadline=None)
@given(writes=_writes, torn=st.booleans(), runs_per_row=st.sampled_from([None, 1, 2, 4]))
def test_the_core_finds_the_lines_python_finds(
    tmp_path_factory: pytest.TempPathFactory, writes: list, torn: bool, runs_per_row: int | None
) -> None:
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    with ResultsLog.create(path, CONFIG) as log:
        for n, write in enumerate(writes):
            if write == "blank":
                with path.open("ab") as handle:
                    handle.write(b"\n \t\n")
            else:
                row, run = write
                log.append({"row_key": row_key({"q": row}), "row_index": row, "run_index": run, "note": n})
    if torn:
        with path.open("ab") as handle:
            handle.write(b'{"row_key":"k","row_index":0,"run_index":0,"no')
    assert latest_run_offsets(path) is not None  # every line is the engine's: the core reads this log
    base, lines = latest_run_lines(path, runs_per_row)
    assert [base, *lines] == _python_pass(path, runs_per_row)


def test_a_line_the_engine_did_not_write_leaves_the_log_to_python(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with ResultsLog.create(path, CONFIG) as log:
        log.append({"row_key": "k", "row_index": 0, "run_index": 0})
    assert latest_run_offsets(path) is not None
    with path.open("ab") as handle:
        handle.write(b'{"row_key": "k", "row_index": 1, "run_index": 0}\n')  # spaced: written by hand
    assert latest_run_offsets(path) is None
    base, lines = latest_run_lines(path)
    assert base == 0 and [raw.startswith(b'{"row_key') for _, raw in lines] == [True, True]
