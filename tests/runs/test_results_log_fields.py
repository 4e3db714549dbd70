"""Reading chosen fields of a results log's records (the `-o` rows' reader): the same records, numbering and
errors as reading each line whole, without building the rest of a record."""

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from osmosis_ai.errors import ResultsLogError
from osmosis_ai.eval.summary import _ROW_FIELDS
from osmosis_ai.runs.log import iter_runs

FIELDS = _ROW_FIELDS  # the fields of an `-o` row
HEADER = b'{"format":"osmosis-results/1","kind":"eval","config":{},"index_base":0}\n'


def _record(row: int, **extra: Any) -> dict[str, Any]:
    return {
        "row_key": f"k{row}",
        "row_index": row,
        "run_index": 0,
        "model_tag": "",
        "success": True,
        "scores": {"m:f": 0.5, "m:g": 1, "é 🙂": None},
        "error": None,
        "final_messages": [{"role": "user", "content": 'a "quoted" ] } \\ text é 🙂 \u2028 \x7f'}],
        "duration_ms": 1.25,
        "tokens": 7,
        **extra,
    }


def _both(path: Path) -> tuple[list[Any], list[Any]]:
    whole = [{k: r[k] for k in FIELDS if k in r} if isinstance(r, dict) else r for r in iter_runs(path)]
    return whole, list(iter_runs(path, FIELDS))


def _error(path: Path, fields: tuple[str, ...] | None) -> str:
    with pytest.raises(ResultsLogError) as caught:
        list(iter_runs(path, fields))
    return str(caught.value)


def test_the_chosen_fields_match_the_whole_records_values_and_types(tmp_path: Path) -> None:
    lines = [
        _record(0),
        _record(1, success=False, error="Provider error: boom", scores={}, tokens=0, duration_ms=0),
        _record(2, eval_errors={"m:f": "ValueError: ✗"}, model_tag="base", run_index=3),
        _record(3, tokens=2**70, duration_ms=-0.0, scores={"m:f": 1e-7, "m:g": 12345678901234567890}),
        {"row_index": 4, "run_index": 0, "scores": {"m:f": 1.0}},  # a hand-written record: fields missing
        [1, 2],  # JSON, but not an object: given as the whole reader gives it
    ]
    body = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)
    path = tmp_path / "log.jsonl"
    # Blank lines anywhere (\x0b and \x0c are blank to Python too), and a last line a crash cut short.
    path.write_bytes(HEADER + b"\n \t\x0b\x0c\r\n" + body + b"   \n" + b'{"row_index": 9, "run_')
    whole, chosen = _both(path)
    assert chosen == whole
    assert [type(v) for r in chosen[:4] for v in r["scores"].values()] == [
        type(v) for r in whole[:4] for v in r["scores"].values()
    ]
    assert len(chosen) == 6 and "final_messages" not in chosen[0]
    assert (
        type(chosen[3]["tokens"]) is float and type(chosen[1]["duration_ms"]) is int
    )  # as orjson reads them


def test_an_earlier_rubric_log_counted_from_one_reads_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    header = {"format": "osmosis-results/1", "kind": "rubric", "osmosis_version": "0.3.2", "config": {}}
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header, _record(1), _record(2, run_index=1)]))
    whole, chosen = _both(path)
    assert chosen == whole
    assert [(r["row_index"], r["run_index"]) for r in chosen] == [(0, -1), (1, 0)]


@pytest.mark.parametrize(
    "bad",
    [
        b'{"row_index": 1, "run_index": 0,',  # cut JSON (with its newline: not a crash's cut)
        b'{"row_index": 1, "final_messages": [{"content": "\\ud800"}]}',  # a lone surrogate, skipped field
        b'{"row_index": 1, "final_messages": "\xff\xfe"}',  # not UTF-8
        b'{"row_index": 1, "final_messages": "a\x01b"}',  # a raw control character
        b'{"row_index": 1, "final_messages": [1e400]}',  # past a double
        b'{"row_index": 1} trailing',
    ],
)
def test_a_bad_line_is_the_same_error_naming_its_line(tmp_path: Path, bad: bytes) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(HEADER + orjson.dumps(_record(0)) + b"\n" + bad + b"\n")
    message = _error(path, FIELDS)
    assert message == _error(path, None)
    assert message.startswith(f"{path}:3: results log line is not valid JSON")


@pytest.mark.parametrize("first", [b'{"format": "other/1"}\n', b"[1]\n", b"not json\n"])
def test_a_file_that_is_no_results_log_is_refused_as_before(tmp_path: Path, first: bytes) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(first + orjson.dumps(_record(0)) + b"\n")
    assert _error(path, FIELDS) == _error(path, None)


def test_a_missing_file_is_an_os_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"missing\.jsonl"):
        list(iter_runs(tmp_path / "missing.jsonl", FIELDS))


def test_a_negative_zero_literal_reads_as_orjson_reads_it(tmp_path: Path) -> None:
    # serde_json reads `-0` as the float -0.0, orjson as the integer 0 (its sign and type kept as orjson's).
    path = tmp_path / "log.jsonl"
    path.write_bytes(HEADER + b'\n{"row_index":-0,"run_index":0,"scores":{"m:f":-0},"tokens":-0.0}\n')
    whole, chosen = _both(path)
    assert chosen == whole
    assert type(chosen[0]["row_index"]) is int and type(chosen[0]["scores"]["m:f"]) is int
    assert str(chosen[0]["tokens"]) == "-0.0"
