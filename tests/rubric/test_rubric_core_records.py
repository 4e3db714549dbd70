"""`eval rubric -o`'s records laid out by the core (`_core.RubricOutputRecords`): byte for byte the document
text, console report and judge health of the Python writer (`record_runs` -> `DocumentTally.rows` ->
`record_0_3`, `RecordEcho`), or handed back where it cannot be (and then written the Python way)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from json_strategies import FLOAT as _FLOAT
from json_strategies import TEXT as _TEXT
from json_strategies import VALUE as _VALUE
from osmosis_ai._files import write_json_streamed
from osmosis_ai.rubric.document import (
    DocumentTally,
    UnrenderedRecords,
    core_records_0_3,
    record_0_3,
    record_runs,
)
from osmosis_ai.rubric.records import RecordSource
from osmosis_ai.rubric.report import RecordEcho
from osmosis_ai.runs.log import ResultsLog

_MISSING = object()
_COUNT = st.one_of(st.integers(0, 5), st.none(), st.just(_MISSING), _VALUE)
_USAGE = st.one_of(
    st.just({}),
    st.fixed_dictionaries(
        {},
        optional={
            "prompt_tokens": st.one_of(st.integers(0, 100), st.none()),
            "completion_tokens": st.integers(0, 100),
            "total_tokens": st.one_of(st.integers(0, 100), st.none()),
        },
    ),
    _VALUE,
    st.just(_MISSING),
)


@st.composite
def _run(draw: st.DrawFn, row: int, run: int, plain: bool) -> dict[str, Any]:
    def pick(usual: st.SearchStrategy[Any], *odd: st.SearchStrategy[Any]) -> Any:
        # A plain session keeps to the types the engine writes (laid out by the core, mostly).
        return draw(usual if plain else st.one_of(usual, *odd))

    record = {
        "row_key": "k",
        "row_index": row,
        "run_index": run,
        "model_tag": "",
        "success": draw(st.booleans()),
        "status": pick(
            st.sampled_from(["success", "success", "error", "unscored"]), st.sampled_from(["odd", "ß"])
        ),
        "started_at": "2026-11-28T09:18:10.977192+00:00",
        "duration_seconds": pick(st.one_of(_FLOAT, st.integers(0, 9)), st.just(_MISSING), _VALUE),
        "score": pick(st.one_of(_FLOAT, st.none(), st.integers(0, 3)), st.just(_MISSING), _VALUE),
        "explanation": pick(st.one_of(_TEXT, st.none()), st.just(_MISSING), _VALUE),
        "preview": pick(st.one_of(_TEXT, st.none()), st.just(_MISSING), _VALUE),
        "error": pick(st.one_of(st.none(), _TEXT), st.just(_MISSING), _VALUE),
        "raw": pick(st.dictionaries(_TEXT, st.one_of(_TEXT, st.integers(-(2**60), 2**60))), _VALUE),
        "raw_score": pick(st.one_of(_FLOAT, st.none(), _TEXT, st.integers(-9, 9)), _VALUE),
        "clamped": pick(st.booleans(), st.none(), st.just(_MISSING), _VALUE),
        "unscored_reason": draw(st.one_of(st.none(), _TEXT)),
        "attempts": pick(st.integers(0, 5), _COUNT),
        "retries": pick(st.integers(0, 5), _COUNT),
        "parse_failures": pick(st.integers(0, 5), _COUNT),
        "usage": pick(_USAGE),
        "duration_ms": 1.5,
    }
    return {key: value for key, value in record.items() if value is not _MISSING}


@st.composite
def _session(draw: st.DrawFn) -> tuple[list[bytes], list[bytes], int]:
    number = draw(st.integers(1, 3))
    labels = st.one_of(
        st.just(_MISSING), st.none(), _TEXT, _TEXT, st.integers(-5, 10**20), _FLOAT, st.booleans(), _VALUE
    )
    dataset = []
    for _ in range(draw(st.integers(1, 5))):
        record = {"id": draw(labels), "messages": [{"role": "assistant", "content": "hi"}]}
        record["conversation_id"] = draw(labels)
        record = {key: value for key, value in record.items() if value is not _MISSING}
        dataset.append(json.dumps(record).encode() + b"\n")  # integers past 64 bits too
        if draw(st.booleans()):
            dataset.append(b"  \n")
    items = [(row, run) for row in range(len(dataset) + 1) for run in range(number)]
    chosen = draw(st.lists(st.sampled_from(items), max_size=12)) if items else []
    plain = draw(st.booleans())
    log = [orjson.dumps(draw(_run(row, run, plain))) + b"\n" for row, run in chosen]
    return dataset, log, number


def _both_ways(tmp_path: Path, dataset: list[bytes], log_lines: list[bytes], number: int) -> tuple[Any, Any]:
    """``(core, python)``: each ``(document text, report text, judge health, completed runs)``; the core's
    None where it handed the records back, Python's None where it raised."""
    data = tmp_path / "data.jsonl"
    data.write_bytes(b"".join(dataset))
    log = tmp_path / "log.jsonl"
    with ResultsLog.create(log, {"c": 1}):
        pass
    with log.open("ab") as handle:
        handle.write(b"".join(log_lines))
    source = RecordSource(data)

    def written(name: str, records: Any, tally: DocumentTally) -> bytes:
        tail = lambda: {"health": tally.health.as_json(), "completed_runs": tally.completed_runs}  # noqa: E731
        write_json_streamed(tmp_path / name, {"head": 1}, "records", records, tail, ensure_ascii=False)
        return (tmp_path / name).read_bytes()

    tally, texts = DocumentTally(), []
    laid = core_records_0_3(source, log, number, tally, texts.append)
    assert laid is not None
    try:
        core = (written("core.json", laid, tally), "\n".join(texts), tally.health, tally.completed_runs)
    except UnrenderedRecords:
        core = None
    tally, echoed = DocumentTally(), []
    echo = RecordEcho(echoed.append)

    def shown(rows: Any) -> Any:
        for row in rows:
            yield row
            echo(row)

    try:
        rows = shown(tally.rows(record_runs(source, log, number, names_only=True)))
        document = written("python.json", map(record_0_3, rows), tally)
        echo.flush()
        python = (document, "\n".join(echoed), tally.health, tally.completed_runs)
    except Exception:
        python = None
    return core, python


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(session=_session())
def test_the_core_lays_out_the_records_byte_for_byte_as_python_writes_them(
    tmp_path_factory: pytest.TempPathFactory, session: tuple[list[bytes], list[bytes], int]
) -> None:
    dataset, log, number = session
    core, python = _both_ways(tmp_path_factory.mktemp("records"), dataset, log, number)
    event("laid out by the core" if core is not None else "handed back")
    if core is not None:
        assert core == python


def _engine_run(row: int, run: int, explanation: str = "scripted") -> dict[str, Any]:
    return {
        "row_key": f"k{row}", "row_index": row, "run_index": run, "model_tag": "", "success": True,
        "scores": {"rubric": 0.5}, "error": None, "status": "success",
        "started_at": "2026-11-28T09:18:10.977192+00:00", "completed_at": "2026-11-28T09:18:10.991952+00:00",
        "duration_seconds": 0.014742360001037014, "score": row / 7, "explanation": explanation,
        "preview": "giving solve final model the passage why ...", "raw": {"id": "x", "choices": [{"i": 0}]},
        "raw_score": row / 7, "clamped": False, "unscored_reason": None, "error_kind": None, "attempts": 1,
        "retries": 0, "parse_failures": 0, "usage": {"prompt_tokens": 50, "completion_tokens": 10,
        "total_tokens": 60}, "duration_ms": 14.7, "invocation": 0,
    }  # fmt: skip


@pytest.mark.parametrize("number", [1, 3])
def test_an_engine_session_is_laid_out_by_the_core_without_handing_it_back(
    tmp_path: Path, number: int
) -> None:
    dataset = [orjson.dumps({"id": f" chat é {i} ", "messages": []}) + b"\n" for i in range(40)]
    dataset[3] = b"{}\n"  # unlabelled: record[4]
    runs = [(row, run) for row in range(38) for run in range(number)]  # the last two never ran
    runs.reverse()  # finished out of order, and one run logged twice (a resumed item): the latest counts
    runs.append((5, 0))
    log = []
    for row, run in runs:
        record = _engine_run(row, run, "line one\nline \x1b[31m two" if row % 4 == 0 else "fine")
        if row % 6 == 1 and run == 0:
            record.update(status="error", success=False, score=None, error="Provider error: 500 é")
        log.append(orjson.dumps(record) + b"\n")
    core, python = _both_ways(tmp_path, dataset, log, number)
    assert core is not None and core == python
    document = orjson.loads(core[0])
    assert [r["label"] for r in document["records"][:5]] == [
        "chat é 0",
        "chat é 1",
        "chat é 2",
        "record[4]",
        "chat é 4",
    ]
    assert document["completed_runs"] == 38 * number
    assert "line \\x1b[31m two" in core[1]


def test_a_session_without_a_log_lays_out_every_record_without_runs(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_bytes(b'{"id": 1}\n{"conversation_id": "c"}')  # the last line without a newline counts
    tally, texts = DocumentTally(), []
    laid = core_records_0_3(RecordSource(data), None, 1, tally, texts.append)
    assert laid is not None
    text = b"".join(laid.pieces)
    assert laid.count() == 2 and tally.completed_runs == 0
    assert orjson.loads(b'{"r": ' + text + b"\n  ]}")["r"][1]["label"] == "c"
    assert "\n".join(texts) == "[1]\n[c]"


@pytest.mark.parametrize(
    "odd",
    [
        b'{"row_key":"k","row_index":0,"run_index":0,"status":"success","score":0.5,"raw":"\\ud800"}\n',
        b'{"row_key":"k","row_index":0,"run_index":0,"status":"success","score":1e400}\n',
        b'{"row_key":"k","row_index":0,"run_index":0,"status":"success","score":-0,"duration_seconds":1}\n',
        b'{"row_key":"k","row_index":0,"run_index":0,"status":"success","score":1e-7,"duration_seconds":1}\n',
    ],
)
def test_a_line_the_core_does_not_read_as_python_does_is_handed_back(tmp_path: Path, odd: bytes) -> None:
    dataset = [b'{"id": "a"}\n', b'{"id": "b"}\n']
    core, _ = _both_ways(tmp_path, dataset, [odd], 1)
    assert core is None
    log = tmp_path / "log.jsonl"
    tally = DocumentTally()
    laid = core_records_0_3(RecordSource(tmp_path / "data.jsonl"), log, 1, tally, None)
    assert laid is not None
    with pytest.raises(UnrenderedRecords) as raised:
        list(laid.pieces)
    assert raised.value.shown == 0 and tally.completed_runs == 0
