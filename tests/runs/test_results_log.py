"""The append-only results log: header, flush per run, torn-line recovery, resume refusal on config change."""

import json
import tracemalloc
from pathlib import Path

import pytest

from osmosis_ai.errors import CLIError, ResultsLogError
from osmosis_ai.runs.log import LOG_FORMATS, ResultsLog, iter_latest_runs, read_log, row_key

CONFIG = {"model": "openai/x", "eval_fns": ["a:f"], "max_turns": 10}


def run(row: dict, index: int, score: float) -> dict:
    return {
        "row_key": row_key(row),
        "row_index": 0,
        "run_index": index,
        "model_tag": "",
        "scores": {"a:f": score},
    }


def test_runs_are_on_disk_as_soon_as_they_are_appended(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = ResultsLog.create(path, CONFIG)
    log.append(run({"q": 1}, 0, 1.0))
    # Read through a second handle while the log is still open: nothing waits for close().
    contents = read_log(path)
    assert contents.header["config"] == CONFIG
    assert [r["scores"]["a:f"] for r in contents.runs] == [1.0]
    log.close()


def test_create_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    ResultsLog.create(path, CONFIG).close()
    # The library names the options fields; the CLI shows its flags (still catchable as CLIError).
    with pytest.raises(CLIError, match="already exists: pass resume_path") as refused:
        ResultsLog.create(path, CONFIG)
    flags = {"resume_path": "--resume", "log_path": "--log"}
    assert isinstance(refused.value, ResultsLogError)
    shown = refused.value.render(flags)
    assert "pass --resume" in shown and "another --log path" in shown


def test_resume_skips_done_runs_and_drops_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with ResultsLog.create(path, CONFIG) as log:
        log.append(run({"q": 1}, 0, 1.0))
        log.append(run({"q": 1}, 1, 0.0))
    with path.open("ab") as handle:
        handle.write(b'{"row_key": "abc", "run_in')  # a crash mid-write
    with ResultsLog.resume(path, CONFIG) as log:
        assert set(log.done) == {(0, row_key({"q": 1}), 0, ""), (0, row_key({"q": 1}), 1, "")}
        log.append(run({"q": 2}, 0, 0.5))
    assert [r["scores"]["a:f"] for r in read_log(path).runs] == [1.0, 0.0, 0.5]


def test_resume_refuses_a_different_config(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    ResultsLog.create(path, CONFIG).close()
    with pytest.raises(CLIError, match=r"different config \(model: 'openai/x' -> 'openai/y'\)"):
        ResultsLog.resume(path, {**CONFIG, "model": "openai/y"})


def test_bad_lines_are_reported_with_their_number(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with ResultsLog.create(path, CONFIG) as log:
        log.append(run({"q": 1}, 0, 1.0))
    path.write_bytes(path.read_bytes() + b"not json\n")
    with pytest.raises(CLIError, match=r"log.jsonl:3: results log line is not valid JSON"):
        read_log(path)
    other = tmp_path / "other.jsonl"
    other.write_text('{"x": 1}\n')
    with pytest.raises(CLIError, match=r"other\.jsonl:1: not an osmosis results log"):
        read_log(other)


def test_a_line_is_one_compact_json_object_with_secrets_masked_and_blank_lines_are_read_past(
    tmp_path: Path,
) -> None:
    from osmosis_ai.redact import remember

    remember(["sk-log-line-secret-1234"])
    path = tmp_path / "log.jsonl"
    with ResultsLog.create(path, CONFIG) as log:
        log.append(
            {**run({"q": 1}, 0, 1.0), "error": "401 from http://me:pw@host/v1 with sk-log-line-secret-1234"}
        )
        log.append({**run({"q": 1}, 1, 0.5), "error": "no credentials here: a@b, x://y"})
    _header, first, second = path.read_bytes().split(b"\n")[:3]
    assert b"sk-log-line-secret" not in first and b"pw@" not in first
    parsed = json.loads(first)
    assert parsed["error"] == "401 from http://***@host/v1 with ***"
    # The layout readers rely on: compact JSON, the record's keys in order, then the invocation's stamp.
    assert list(parsed)[:5] == ["row_key", "row_index", "run_index", "model_tag", "scores"]
    assert list(parsed)[-3:] == ["invocation", "invocation_ms", "invocation_cpu_ms"]
    assert first == json.dumps(parsed, separators=(",", ":")).encode()
    assert json.loads(second)["error"] == "no credentials here: a@b, x://y"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\n \t\n", 1))  # a blank line after the header
    assert [r["run_index"] for r in read_log(path).runs] == [0, 1]


def test_append_writes_the_record_then_its_stamp_and_leaves_the_callers_record_as_it_was(
    tmp_path: Path,
) -> None:
    import orjson

    path = tmp_path / "log.jsonl"
    records = [
        {**run({"q": 1}, 0, 1.0), "final_messages": [{"role": "user", "content": "é 🙂"}], "n": 1.5},
        {},  # an empty record is its stamp alone
    ]
    before = [(dict(r), list(r)) for r in records]
    with ResultsLog.create(path, CONFIG) as log:
        for record in records:
            log.append(record)
    assert [(dict(r), list(r)) for r in records] == before
    for record, line in zip(records, path.read_bytes().splitlines()[1:], strict=True):
        written = orjson.loads(line)
        stamp = {key: written[key] for key in ("invocation", "invocation_ms", "invocation_cpu_ms")}
        assert line == orjson.dumps({**record, **stamp}, default=str)


def test_row_key_depends_on_content_only() -> None:
    assert row_key({"a": 1, "b": [1, 2]}) == row_key({"b": [1, 2], "a": 1})
    assert row_key({"a": 1}) != row_key({"a": 2})


def test_header_names_kind_dataset_and_version(tmp_path: Path) -> None:
    from osmosis_ai import __version__
    from osmosis_ai.runs.log import LOG_FORMAT, dataset_fingerprint

    data = tmp_path / "data.jsonl"
    data.write_text('{"q": 1}\n')
    path = tmp_path / "log.jsonl"
    ResultsLog.create(path, CONFIG, kind="rubric", dataset=dataset_fingerprint(data)).close()
    header = read_log(path).header
    assert header["format"] == LOG_FORMAT and header["kind"] == "rubric"
    assert header["osmosis_version"] == __version__ and header["created_at"]
    assert header["dataset"]["size"] == 9 and len(header["dataset"]["fingerprint"]) == 32


def test_resume_refuses_a_changed_dataset_or_another_kind(tmp_path: Path) -> None:
    from osmosis_ai.runs.log import dataset_fingerprint

    data = tmp_path / "data.jsonl"
    data.write_text('{"q": 1}\n')
    path = tmp_path / "log.jsonl"
    ResultsLog.create(path, CONFIG, dataset=dataset_fingerprint(data)).close()
    with pytest.raises(CLIError, match="it is a 'eval' log, not a 'rubric' one"):
        ResultsLog.resume(path, CONFIG, kind="rubric", dataset=dataset_fingerprint(data))
    data.write_text('{"q": 2}\n')
    with pytest.raises(CLIError, match="the dataset changed since the log was started"):
        ResultsLog.resume(path, CONFIG, dataset=dataset_fingerprint(data))


def test_logs_of_the_earlier_eval_format_are_read_and_resumed(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    record = run({"q": 1}, 0, 1.0)
    import json

    path.write_text(
        json.dumps({"format": "osmosis-eval-log/1", "config": CONFIG}) + "\n" + json.dumps(record) + "\n"
    )
    with ResultsLog.resume(path, {**CONFIG, "n_runs": 3}) as log:  # keys it did not record are not compared
        assert log.done == {(0, row_key({"q": 1}), 0, "")}


def test_a_repeated_row_is_its_own_item_on_resume() -> None:
    from osmosis_ai.runs.work import RunOutcome, work_items

    rows = [(0, {"q": 1}), (1, {"q": 1})]
    done = {(0, row_key({"q": 1}), 0, "")}
    outcome = RunOutcome()
    pending = [(item.row_index, item.run_index) for item in work_items(rows, 1, ("",), done, outcome)]
    assert pending == [(1, 0)] and outcome.skipped == 1


def _latest_log(path: Path, rows: int, note: str = "") -> None:
    """A log of ``rows`` rows x 2 runs written out of order, every run of row 0 written twice."""
    with ResultsLog.create(path, CONFIG) as log:
        for row in reversed(range(rows)):
            for index in (1, 0):
                log.append({**run({"q": row}, index, 0.0), "row_index": row, "note": note})
        log.append({**run({"q": 0}, 1, 1.0), "note": "again"})
    with path.open("ab") as handle:
        handle.write(b'{"row_index": 0, "run_index": 0, "torn')  # a crash mid-write: not a record


def test_latest_runs_come_in_row_then_run_order_latest_attempt_winning(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    _latest_log(path, 3)
    latest = list(iter_latest_runs(path))
    assert [(r["row_index"], r["run_index"]) for r in latest] == [(r, k) for r in range(3) for k in (0, 1)]
    assert [r["note"] for r in latest[:2]] == ["", "again"]


def test_latest_runs_of_a_log_counted_from_1_read_from_0(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    # A rubric log of an earlier version: no index_base, its version named.
    header = {"format": LOG_FORMATS[-1], "kind": "rubric", "osmosis_version": "0.3.2", "config": CONFIG}
    runs = [{**run({"q": 1}, index, 1.0), "row_index": 1} for index in (2, 1)]
    path.write_text("".join(json.dumps(line) + "\n" for line in (header, *runs)))
    assert [(r["row_index"], r["run_index"]) for r in iter_latest_runs(path)] == [(0, 0), (0, 1)]


@pytest.mark.parametrize("runs_per_row", [2, 1, 5])
def test_latest_runs_read_the_same_with_the_runs_per_row_told(tmp_path: Path, runs_per_row: int) -> None:
    # 2: the log's shape; 1: run 1 falls outside it (the reader switches to its dict); 5: rows of gaps.
    path = tmp_path / "log.jsonl"
    _latest_log(path, 4)
    assert list(iter_latest_runs(path, runs_per_row)) == list(iter_latest_runs(path))


def _peak_reading_latest(path: Path) -> int:
    tracemalloc.start()
    try:
        for _ in iter_latest_runs(path):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_the_latest_runs_keeps_an_offset_per_run_not_the_run(tmp_path: Path) -> None:
    # Peak memory at two sizes (no timing): what 9,000 more runs of ~4 KB add is the offsets, not the runs.
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    _latest_log(small, 500, note="x" * 4000)
    _latest_log(large, 5000, note="x" * 4000)
    grown = _peak_reading_latest(large) - _peak_reading_latest(small)
    added = large.stat().st_size - small.stat().st_size
    assert grown < added / 20, f"reading grew {grown} bytes for {added} more bytes of runs"


def test_a_log_being_appended_to_cannot_be_resumed_by_another_appender(tmp_path: Path) -> None:
    import os

    path = tmp_path / "log.jsonl"
    log = ResultsLog.create(path, CONFIG)
    log.append(run({"q": 1}, 0, 1.0))
    # Each open of the log is its own lock holder, so one process shows what a second one meets.
    with pytest.raises(CLIError, match=rf"being appended to by another process \(pid {os.getpid()}\)"):
        ResultsLog.resume(path, CONFIG)
    log.close()
    resumed = ResultsLog.resume(path, CONFIG)  # released with the first handle (also by a crash)
    assert len(resumed.done) == 1
    resumed.close()


def test_a_second_eval_resuming_a_running_one_is_refused_naming_its_pid(tmp_path: Path, scripted) -> None:
    import subprocess
    import time

    from tests.cli.test_eval_cli import EXAMPLES, OSMOSIS, eval_args, osmosis, write_rows

    dataset = write_rows(tmp_path / "data.jsonl", [(f"q-{i}", "1") for i in range(400)])
    server = scripted({"default": {"content": "1", "delay": 0.2}})
    args = eval_args(server, dataset, tmp_path, "--no-preflight", "--batch-size", "1")
    log = tmp_path / "log.jsonl"
    first = subprocess.Popen(
        [OSMOSIS, *args], cwd=EXAMPLES, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 2):
            assert first.poll() is None, "the first eval ended before it logged a run"
            time.sleep(0.05)  # until the first run is logged (hang guard only)
        resume = [a for a in args if a not in ("--log", str(log))]
        second = osmosis(*resume, "--resume", str(log))
        assert second.returncode == 1, second.stderr
        assert f"another process (pid {first.pid})" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        first.kill()
        first.wait()


def test_the_stamp_is_milliseconds_to_three_decimals_as_round_gave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stamp's clocks are read in nanoseconds and written in whole microseconds: the same float that
    ``round(ns / 1e6, 3)`` gives, but a tie (a half microsecond) always rounded up."""
    import time

    import orjson

    # A cpu tie that round() of the float milliseconds took down (round(2.5025, 3) == 2.502): now up.
    readings = iter([1_000_000_000, 7_000_000, 1_000_000_000 + 127_002_499, 7_000_000 + 2_502_500])
    monkeypatch.setattr(time, "perf_counter_ns", lambda: next(readings))
    monkeypatch.setattr(time, "process_time_ns", lambda: next(readings))
    path = tmp_path / "log.jsonl"
    with ResultsLog.create(path, CONFIG) as log:
        log.append(run({"q": 1}, 0, 1.0))
    written = orjson.loads(path.read_bytes().splitlines()[1])
    assert written["invocation_ms"] == 127.002 == round(127_002_499 / 1e6, 3)
    assert written["invocation_cpu_ms"] == 2.503 != round(2_502_500 / 1e6, 3)
