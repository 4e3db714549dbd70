"""Reading a results log's latest runs: the first pass reads the head of each line the engine wrote, and
the answer is what reading every line whole gives."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from osmosis_ai.errors import ResultsLogError
from osmosis_ai.runs.log import LOG_FORMATS, ResultsLog, iter_latest_runs, iter_runs, row_key

CONFIG = {"model": "openai/x", "eval_fns": ["a:f"]}


def _run(row: int, index: int, note: str) -> dict:
    return {
        "row_key": row_key({"q": row}),
        "row_index": row,
        "run_index": index,
        "model_tag": "",
        "note": note,
    }


def _whole_lines_latest(path: Path) -> list[dict]:
    """The reference: every record parsed whole, the last one of each (row, run) kept, sorted."""
    lines = [line for line in path.read_bytes().split(b"\n")[1:] if line.strip()]
    latest: dict[tuple[int, int], dict] = {}
    for line in lines:
        record = orjson.loads(line)
        latest[(record["row_index"], record["run_index"])] = record
    return [latest[key] for key in sorted(latest)]


def test_heads_and_whole_lines_give_the_same_latest_runs(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with ResultsLog.create(path, CONFIG) as log:
        for row in (2, 0, 1):
            for index in (1, 0):
                log.append(_run(row, index, "first"))
        log.append(_run(0, 1, 'again, with "row_index":9,"run_index":9, in it'))
    with path.open("ab") as handle:
        # Lines the engine did not write: other spacing, other key order, an index that is no integer
        # text, a blank line. Each is read whole.
        handle.write(b'{"row_key": "k", "row_index": 1, "run_index": 0, "note": "spaced"}\n\n')
        handle.write(json.dumps({"run_index": 1, "row_index": 2, "note": "reordered"}).encode() + b"\n")
        handle.write(b'{"row_key":"k","row_index":3,"run_index":0.0,"note":"float"}\n')
    expected = _whole_lines_latest(path)
    with path.open("ab") as handle:
        handle.write(b'{"row_key":"k","row_index":4,"run_index":0,"to')  # torn by a crash: not a record
    latest = list(iter_latest_runs(path))
    assert latest == expected
    assert [r["note"] for r in latest if r["row_index"] in (1, 2)] == [
        "spaced",
        "first",
        "first",
        "reordered",
    ]
    assert [r["note"] for r in latest if r["row_index"] == 0][1].startswith("again")


def test_a_log_counted_from_1_is_read_from_0_by_its_heads_too(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    header = {"format": LOG_FORMATS[-1], "kind": "rubric", "osmosis_version": "0.3.2", "config": CONFIG}
    runs = [_run(1, index, str(index)) for index in (2, 1)]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in (header, *runs)))
    assert [(r["row_index"], r["run_index"], r["note"]) for r in iter_latest_runs(path)] == [
        (0, 0, "1"),
        (0, 1, "2"),
    ]


def test_a_damaged_line_is_still_an_error_naming_the_log(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with ResultsLog.create(path, CONFIG) as log:
        log.append(_run(0, 0, "ok"))
    good = path.read_bytes()
    # A head the engine wrote, then damage: found when the line is read whole.
    path.write_bytes(good + b'\n\n{"row_key":"k","row_index":1,"run_index":0,"note":oops}\n')
    with pytest.raises(ResultsLogError, match=r"log\.jsonl:5: results log line is not valid JSON"):
        list(iter_latest_runs(path))
    # No head: found by the first pass, with its line number.
    path.write_bytes(good + b'{"row_index": 1, oops}\n')
    with pytest.raises(ResultsLogError, match=r"log\.jsonl:3: results log line is not valid JSON"):
        list(iter_latest_runs(path))


def test_an_empty_log_and_one_cut_short_between_the_passes(tmp_path: Path, monkeypatch) -> None:
    from osmosis_ai.runs import log_read as results_log

    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")  # nothing to map: read as no lines, not an error of the mapping
    assert list(iter_latest_runs(empty)) == [] and list(iter_runs(empty)) == []
    path = tmp_path / "log.jsonl"
    with ResultsLog.create(path, CONFIG) as log:
        log.append(_run(0, 0, "ok"))
    first_pass, core_first_pass = results_log._records, results_log.latest_run_offsets

    def then_emptied(*args, **kwargs):
        yield from first_pass(*args, **kwargs)
        path.write_bytes(b"")  # another process empties the log once the first pass has read it

    def core_then_emptied(*args, **kwargs):
        found = core_first_pass(*args, **kwargs)
        path.write_bytes(b"")
        return found

    # The first pass is the core's for a log the engine wrote, Python's for any other: both are cut short.
    monkeypatch.setattr(results_log, "_records", then_emptied)
    monkeypatch.setattr(results_log, "latest_run_offsets", core_then_emptied)
    with pytest.raises(ResultsLogError, match=r"log\.jsonl:1: results log line is not valid JSON"):
        list(iter_latest_runs(path))


def test_a_hand_numbered_row_far_past_the_log_keeps_the_pass_small(tmp_path: Path) -> None:
    """A row index far past the lines read (a log edited by hand) does not size the flat offsets by it:
    past a bound the pass keys its runs, as the core's pass does, and the order is unchanged."""
    from osmosis_ai.runs.log_read import _Starts

    starts = _Starts(3)
    starts.set(0, 0, 10)
    starts.set(10**7, 1, 20)  # would be 240 MB of flat offsets
    assert starts._flat is None
    assert list(starts.ordered()) == [10, 20]

    path = tmp_path / "log.jsonl"
    header = {"format": LOG_FORMATS[-1], "kind": "eval", "config": CONFIG}
    runs = [
        {"row_index": 2**40, "run_index": 0, "note": "far"},  # key order the engine does not write:
        {"row_index": 1, "run_index": 2, "note": "near"},  # read by the Python pass
    ]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in (header, *runs)))
    assert [r["note"] for r in iter_latest_runs(path, runs_per_row=3)] == ["near", "far"]
