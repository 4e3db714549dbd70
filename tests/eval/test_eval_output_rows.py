"""The rows of eval's `-o` document, streamed from the results log: order, completeness, latest run wins."""

import random
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from json_strategies import FLOAT as _FLOAT
from json_strategies import TEXT as _TEXT
from json_strategies import VALUE as _VALUE
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


# The core lays the rows of an `-o` file out from the log; byte for byte what the Python rows and
# json_block write, or handed back (and then written the Python way) where it cannot be.
_MISSING = object()


@st.composite
def _records(draw: st.DrawFn) -> dict:
    record = {
        "row_key": "k",
        "row_index": draw(st.integers(0, 5)),
        "run_index": draw(st.integers(0, 2)),
        "model_tag": draw(st.sampled_from(["", "b", "primary", None, _MISSING])),
        "success": draw(st.booleans()),
        "scores": draw(st.one_of(st.none(), st.dictionaries(_TEXT, _FLOAT, max_size=2), _VALUE)),
        "error": draw(st.one_of(st.none(), _TEXT)),
        "eval_errors": draw(
            st.one_of(st.just(_MISSING), st.none(), st.dictionaries(_TEXT, _TEXT, max_size=2))
        ),
        "final_messages": [{"role": "user", "content": "x" * 30}],
        "duration_ms": draw(st.one_of(st.just(_MISSING), _FLOAT, st.none())),
        "tokens": draw(st.one_of(st.just(_MISSING), st.integers(0, 10**6), _VALUE)),
    }
    return {key: value for key, value in record.items() if value is not _MISSING}


def _both_ways(tmp_path: Path, lines: list[bytes], runs_per_row: int, with_tags: bool) -> tuple[bytes, bytes]:
    from osmosis_ai._files import write_json_streamed
    from osmosis_ai.eval import summary

    log = tmp_path / "log.jsonl"
    with ResultsLog.create(log, {"c": 1}):
        pass
    with log.open("ab") as handle:
        handle.write(b"".join(lines))
    report = summary.EvalReport({}, [], 0, 0, 0, 0, 0, log_path=log, with_tags=with_tags)
    report.n_runs = runs_per_row
    head, tail = {"config": {"c": 1}}, {}
    report.write_json(tmp_path / "fast.json", config={"c": 1}, duration_ms=1.0)
    write_json_streamed(tmp_path / "python.json", head, "rows", report.rows(), lambda: tail)
    fast = (tmp_path / "fast.json").read_bytes()
    python = (tmp_path / "python.json").read_bytes()
    return fast.split(b'"rows": ', 1)[1], python.split(b'"rows": ', 1)[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(_records(), max_size=12),
    runs_per_row=st.integers(1, 3),
    with_tags=st.booleans(),
    torn=st.booleans(),
)
def test_the_core_lays_out_the_rows_byte_for_byte_as_python_writes_them(
    tmp_path_factory: pytest.TempPathFactory, records: list, runs_per_row: int, with_tags: bool, torn: bool
) -> None:
    tmp_path = tmp_path_factory.mktemp("rows")
    lines = [orjson.dumps(record) + b"\n" for record in records]
    if torn and lines:
        lines[-1] = lines[-1][:-5]
    fast, python = _both_ways(tmp_path, lines, runs_per_row, with_tags)
    assert fast == python


def test_the_core_writes_an_engine_log_without_handing_it_back(tmp_path: Path) -> None:
    from osmosis_ai.eval.summary import _laid_out_rows

    path = tmp_path / "log.jsonl"
    with ResultsLog.create(path, {"c": 1}) as log:
        for row in range(50):
            for run in (1, 0):
                record = _record(row, run, score=row / 7)
                record["error"] = 'Provider error: é "quoted"\n' if row % 5 == 0 else None
                log.append(record)
    laid_out = _laid_out_rows(path, 2, False)
    assert laid_out is not None
    text = b"".join(laid_out.pieces)  # never None: nothing handed back
    assert laid_out.count() == 50
    empty = tmp_path / "empty"
    empty.mkdir()
    fast, python = _both_ways(empty, [], 2, False)  # an empty log: "[]" both ways
    assert fast == python == b"[]\n}\n"
    assert text.startswith(b'[\n    {\n      "row_index": 0,')


def test_odd_lines_are_handed_back_and_written_the_python_way(tmp_path: Path) -> None:
    good = orjson.dumps(_record(0, 0)) + b"\n"
    for odd in [b"\n", b"   \n", b'{"row_index": 1.0, "run_index": 0, "success": true}\n',
                b'{"row_index": 1, "run_index": 0, "success": true, "scores": {"f": -0.0}}\n',
                b'{"row_index": 1, "run_index": 0, "success": true, "tokens": -0}\n',
                b'{"row_index": 1, "run_index": 0, "success": true, "model_tag": 5}\n']:  # fmt: skip
        folder = tmp_path / str(abs(hash(odd)))
        folder.mkdir()
        fast, python = _both_ways(folder, [good, odd, good], 1, True)
        assert fast == python, odd


@pytest.mark.parametrize("member", [b'"bad \\ud800 text"', b"1e400"])
def test_a_line_python_cannot_read_is_never_written_by_the_core(tmp_path: Path, member: bytes) -> None:
    # The member is one the rows do not show, yet the line is not JSON Python reads: the core hands the
    # file back, and the Python writer names the line.
    from osmosis_ai import _core
    from osmosis_ai.eval import summary
    from osmosis_ai.runs.log import ResultsLogError

    log = tmp_path / "log.jsonl"
    with ResultsLog.create(log, {"c": 1}):
        pass
    line = orjson.dumps(_record(0, 0))[:-1] + b',"final_messages_extra":[{"content":' + member + b"}]}\n"
    with log.open("ab") as handle:
        handle.write(line)
    assert list(_core.EvalOutputRows(str(log), 1, False)) == [None]
    report = summary.EvalReport({}, [], 0, 0, 0, 0, 0, log_path=log)
    report.n_runs = 1
    with pytest.raises(ResultsLogError, match=f"{log}:2"):
        report.write_json(tmp_path / "out.json", config={"c": 1}, duration_ms=1.0)


def _report_both_ways(
    tmp_path: Path, lines: list[bytes], n_runs: int, models: dict | None, laid: bool = True
) -> tuple:
    """The `-o` file from rows the result model's pass laid out (`laid=False`: rows it gave up), and from
    rows read again from the log (or the error each raised)."""
    from osmosis_ai.eval.summary import build_report

    log = tmp_path / "log.jsonl"
    with ResultsLog.create(log, {"kind": "eval", "config": {"eval_fns": ["m:f"], "n_runs": n_runs}}):
        pass
    with log.open("ab") as handle:
        handle.write(b"".join(lines))
    out = []
    for with_rows in (True, False):
        try:
            report = build_report(log, eval_fns=["m:f"], n_runs=n_runs, pass_threshold=0.5, models=models,
                                  with_rows=with_rows)  # fmt: skip
            assert (report._pass_rows is not None) == (with_rows and laid)
            target = tmp_path / f"out-{with_rows}.json"
            report.write_json(target, config={"c": 1}, duration_ms=1.0)
            out.append(target.read_bytes())
        except Exception as error:  # both ways must fail alike
            out.append((type(error), str(error)))
    return out[0], out[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(_records(), max_size=12),
    n_runs=st.integers(1, 3),
    two_models=st.booleans(),
    torn=st.booleans(),
)
def test_the_result_models_pass_lays_out_the_rows_as_a_second_read_of_the_log(
    tmp_path_factory: pytest.TempPathFactory, records: list, n_runs: int, two_models: bool, torn: bool
) -> None:
    tmp_path = tmp_path_factory.mktemp("rows")
    lines = [orjson.dumps(record) + b"\n" for record in records]
    if torn and lines:
        lines[-1] = lines[-1][:-5]
    models = {"": "a", "b": "b"} if two_models else None
    one_pass, two_passes = _report_both_ways(tmp_path, lines, n_runs, models)
    assert one_pass == two_passes


def test_the_result_models_pass_hands_back_odd_lines_and_a_late_score_name(tmp_path: Path) -> None:
    good = orjson.dumps(_record(0, 0)) + b"\n"
    late = orjson.dumps({**_record(1, 0), "scores": {"m:g": 0.5}}) + b"\n"
    for odd in [b"\x0c" + good, orjson.dumps(_record(1, 0))[:-1] + b',"x":"\\ud800"}\n', late, b"\x0b\n"]:
        folder = tmp_path / str(abs(hash(odd)))
        folder.mkdir()
        one_pass, two_passes = _report_both_ways(folder, [good, odd, good], 1, None)
        assert one_pass == two_passes, odd


def test_rows_waiting_past_the_memory_bound_are_read_again_from_the_log(tmp_path: Path) -> None:
    # Every first run, then a few second runs (a run stopped early): every row waits until the log's
    # end, past what the shared pass holds, so it gives the rows up and they are read from the log.
    lines = [orjson.dumps(_record(row, 0)) + b"\n" for row in range(8000)]
    lines += [orjson.dumps(_record(row, 1, score=0.0)) + b"\n" for row in range(100)]
    one_pass, two_passes = _report_both_ways(tmp_path, lines, 2, None, laid=False)
    assert isinstance(one_pass, bytes) and one_pass == two_passes
