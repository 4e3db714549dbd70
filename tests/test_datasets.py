"""The dataset engine: formats, the eval/rubric contracts, windows, counts, errors with positions."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osmosis_ai import _core
from osmosis_ai.datasets import check_rows, count_rows, iter_batches, read_dataset, validate_dataset
from osmosis_ai.errors import DatasetFormatError, DatasetParseError, DatasetValidationError


def row(i: int, **extra: Any) -> dict[str, Any]:
    return {"system_prompt": f"sys {i}", "user_prompt": f"user {i}", "ground_truth": str(i), **extra}


def write_jsonl(path: Path, rows: list[Any], *, newline: str = "\n", trailing: bool = True) -> Path:
    text = newline.join(json.dumps(r, ensure_ascii=False) for r in rows)
    path.write_text(text + (newline if trailing else ""), encoding="utf-8")
    return path


def write_json(path: Path, rows: list[Any]) -> Path:
    path.write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_parquet(path: Path, rows: list[dict[str, Any]], row_group_size: int = 1000) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=row_group_size)
    return path


WRITERS = {"jsonl": write_jsonl, "json": write_json, "csv": write_csv, "parquet": write_parquet}


# --- round trips -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_round_trip_every_format(tmp_path: Path, fmt: str) -> None:
    rows = [row(i, note=f"n{i}") for i in range(2500)]
    path = WRITERS[fmt](tmp_path / f"d.{fmt}", rows)
    assert list(read_dataset(path, batch_size=97)) == rows
    assert count_rows(path) == 2500
    report = validate_dataset(path)
    assert report.ok and report.rows == 2500
    assert report.columns == ["system_prompt", "user_prompt", "ground_truth", "note"]


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_limit_and_offset(tmp_path: Path, fmt: str) -> None:
    rows = [row(i) for i in range(2500)]
    path = WRITERS[fmt](tmp_path / f"d.{fmt}", rows)
    assert list(read_dataset(path, offset=1990, limit=25)) == rows[1990:2015]
    assert list(read_dataset(path, offset=2400)) == rows[2400:]
    assert list(read_dataset(path, offset=5000)) == []
    assert list(read_dataset(path, limit=0)) == []


def test_skipped_rows_are_not_checked(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"broken": True}, row(1)])
    path.write_text("{not json\n" + path.read_text().split("\n", 1)[1])
    assert list(read_dataset(path, offset=1)) == [row(1)]


def test_json_values_of_every_kind(tmp_path: Path) -> None:
    r = row(0, n=1, big=2**63 + 1, neg=-(2**62), f=1.5, t=True, z=None, nested={"a": [1, {"b": "c"}]})
    path = write_jsonl(tmp_path / "d.jsonl", [r])
    assert list(read_dataset(path)) == [r]


def test_jsonl_rows_keep_types_and_keys_whatever_their_shape(tmp_path: Path) -> None:
    """Batches whose rows share their keys are handed over column-wise; the rest row by row."""
    rows = [
        row(i, n=i if i % 3 else float(i), big=2**63 + i, flag=None if i % 2 else True) for i in range(50)
    ]
    rows[20] = row(20, extra="only here")
    rows[30] = {"user_prompt": "u", "ground_truth": "g", "system_prompt": "s"}  # another key order
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    for batch_size in (1, 7, 1000):
        read = list(read_dataset(path, batch_size=batch_size))
        assert read == rows
        assert [type(r.get("n")) for r in read] == [type(r.get("n")) for r in rows]
        assert [list(r) for r in read] == [list(r) for r in rows]


def test_jsonl_repeated_text_is_one_object_across_batches(tmp_path: Path) -> None:
    prompt = "You are a careful grader. " * 40
    rows = [
        {"system_prompt": prompt, "user_prompt": f"q{i}", "ground_truth": "x" if i % 2 else "y"}
        for i in range(300)
    ]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    read = list(read_dataset(path, batch_size=64))
    assert read == rows
    assert len({id(r["system_prompt"]) for r in read}) == 1
    assert len({r["user_prompt"] for r in read}) == 300


def test_unicode_crlf_blank_lines_and_no_trailing_newline(tmp_path: Path) -> None:
    rows = [row(0, text="naïve 数学 🙂 \u2028 résumé"), row(1)]
    path = tmp_path / "d.jsonl"
    body = "\r\n\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
    path.write_bytes(b"\xef\xbb\xbf" + ("\n  \n" + body).encode())
    assert list(read_dataset(path)) == rows
    assert count_rows(path) == 2
    with pytest.raises(DatasetValidationError) as info:
        list(read_dataset(write_jsonl(tmp_path / "e.jsonl", [row(0), {"x": 1}], trailing=False)))
    assert info.value.line == 2


def test_very_long_lines(tmp_path: Path) -> None:
    rows = [row(i, blob="x" * 3_000_000) for i in range(3)]
    for fmt in ("jsonl", "json"):
        path = WRITERS[fmt](tmp_path / f"d.{fmt}", rows)
        assert list(read_dataset(path)) == rows


def test_required_columns_are_case_insensitive_and_lowered(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "d.jsonl", [{"System_Prompt": "s", "USER_PROMPT": "u", "Ground_Truth": "g", "X": 1}]
    )
    assert list(read_dataset(path)) == [
        {"system_prompt": "s", "user_prompt": "u", "ground_truth": "g", "X": 1}
    ]


def test_parquet_nested_and_typed_columns(tmp_path: Path) -> None:
    rows = [row(i, meta={"k": i, "tags": ["a", "b"]}, score=i / 2, flag=i % 2 == 0) for i in range(5)]
    path = write_parquet(tmp_path / "d.parquet", rows, row_group_size=2)
    assert list(read_dataset(path)) == rows
    assert list(read_dataset(path, offset=3)) == rows[3:]


def test_parquet_flat_columns_with_nulls_across_groups_and_chunks(tmp_path: Path) -> None:
    """Top-level primitive columns are decoded column by column; they must interleave with nested ones."""
    n = 2_600
    table = pa.table(
        {
            "id": pa.array([i if i % 7 else None for i in range(n)], pa.int64()),
            "system_prompt": pa.array([f"sé {i}" for i in range(n)], pa.string()),
            "meta": pa.array([{"k": i, "tags": ["a"] * (i % 3)} for i in range(n)]),
            "user_prompt": pa.array(["数学 " * (i % 5) + "u" for i in range(n)], pa.string()),
            "small": pa.array([i % 100 for i in range(n)], pa.int32()),
            "score": pa.array([i / 4 if i % 5 else None for i in range(n)], pa.float64()),
            "half": pa.array([0.5] * n, pa.float32()),
            "flag": pa.array([None if i % 11 == 0 else i % 2 == 0 for i in range(n)], pa.bool_()),
            "ground_truth": pa.array([str(i) for i in range(n)], pa.string()),
            "note": pa.array([None if i % 3 else "x" for i in range(n)], pa.string()),
        }
    )
    path = tmp_path / "d.parquet"
    pq.write_table(table, path, row_group_size=1_000)
    expected = table.to_pylist()
    assert list(read_dataset(path)) == expected
    assert list(read_dataset(path, offset=1_500, limit=1_100)) == expected[1_500:]
    assert list(read_dataset(path, offset=999, limit=3)) == expected[999:1_002]
    flat = tmp_path / "flat.parquet"
    pq.write_table(table.drop_columns(["meta"]), flat, row_group_size=700)
    assert list(read_dataset(flat, offset=2_000)) == table.drop_columns(["meta"]).to_pylist()[2_000:]


def test_parquet_lists_hold_batch_size_rows_up_to_each_row_group_end(tmp_path: Path) -> None:
    """The core reads many lists' rows at once; only a row group's end cuts a list short, as before."""
    rows = [row(i, meta={"k": i, "tags": ["t"] * (i % 3)}) for i in range(2_600)]
    path = write_parquet(tmp_path / "d.parquet", rows, row_group_size=1_000)
    lists = list(iter_batches(path, batch_size=300))
    assert [len(b) for b in lists] == [300, 300, 300, 100] * 2 + [300, 300]
    assert [r for b in lists for r in b] == rows
    assert [len(b) for b in iter_batches(path, batch_size=1, limit=3, offset=999)] == [1, 1, 1]


@pytest.mark.parametrize("nested", [False, True])
def test_parquet_chunks_of_long_cells_stay_within_a_few_mib(tmp_path: Path, nested: bool) -> None:
    """A row group of 512 KiB cells is handed out a few rows at a time (about 2 MiB a batch, as for the text
    formats), not as one batch of the whole group: before, 48 such rows made one 24 MiB batch. Flat columns
    are cut by the row group's size per row, nested ones by the text decoded so far."""
    cell = 512 << 10
    rows = [row(i, note=f"{i:04d}" + "x" * cell) for i in range(48)]
    if nested:  # only nested columns: the record reader's path
        rows = [{"item": r} for r in rows]
    path = write_parquet(tmp_path / "long.parquet", rows)
    batches = list(iter_batches(path, batch_size=1024, contract="any"))
    assert [r for b in batches for r in b] == rows
    assert len(batches) >= 48 * cell // (4 << 20)
    assert max(len(b) for b in batches) <= (2 << 20) // cell + 1, [len(b) for b in batches]


def test_parquet_repeated_and_dictionary_text(tmp_path: Path) -> None:
    """Repeats of a value share one string; values that change, or leave the dictionary, are never stale."""
    long_prompt = "You are a careful grader. " * 20
    rows = [
        {
            "system_prompt": long_prompt if i % 50 else f"{long_prompt} variant {i}",
            "user_prompt": f"question {i} " + "x" * (i % 40),
            "ground_truth": "a" if i % 3 else "b",
            "label": ["easy", "hard", "easy", None][i % 4],
        }
        for i in range(5_000)
    ]
    path = tmp_path / "d.parquet"
    # A tiny dictionary page limit makes the writer fall back to plain encoding part way through.
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=1_500, dictionary_pagesize_limit=64)
    read = list(read_dataset(path, batch_size=333))
    assert read == rows
    # Plain-encoded repeats are recognised by their text.
    assert read[1]["system_prompt"] is read[2]["system_prompt"]
    # Written with the default (dictionary) encoding, a repeated prompt is one object, not 5,000.
    shared = write_parquet(tmp_path / "shared.parquet", rows)
    read = list(read_dataset(shared))
    assert read == rows
    assert read[1]["system_prompt"] is read[2]["system_prompt"]


def test_parquet_written_by_polars(tmp_path: Path) -> None:
    import polars as pl

    frame = pl.DataFrame(
        {
            "system_prompt": ["s"] * 3,
            "user_prompt": ["u1", "数学 u2", "u3"],
            "ground_truth": ["1", "2", "3"],
            "score": [0.5, None, 2.0],
            "meta": [{"k": 1, "tags": ["a"]}, {"k": 2, "tags": []}, {"k": None, "tags": ["b", "c"]}],
        }
    )
    path = tmp_path / "d.parquet"
    frame.write_parquet(path)
    assert list(read_dataset(path)) == frame.to_dicts()


def test_parquet_required_columns_are_case_insensitive_and_lowered(tmp_path: Path) -> None:
    rows = [{"System_Prompt": "s", "USER_PROMPT": f"u{i}", "Ground_Truth": "g", "X": i} for i in range(3)]
    path = write_parquet(tmp_path / "d.parquet", rows)
    assert list(read_dataset(path)) == [
        {"system_prompt": "s", "user_prompt": f"u{i}", "ground_truth": "g", "X": i} for i in range(3)
    ]


def test_parquet_good_rows_before_a_bad_row_are_handed_out(tmp_path: Path) -> None:
    rows = [row(i) for i in range(2_000)]
    rows[1_234]["user_prompt"] = "   "
    path = write_parquet(tmp_path / "d.parquet", rows, row_group_size=700)
    seen = []
    with pytest.raises(DatasetValidationError) as info:
        for r in read_dataset(path, batch_size=100):
            seen.append(r)
    assert seen == rows[:1_234]
    assert (info.value.line, info.value.row, info.value.field) == (1_235, 1_234, "user_prompt")
    assert "'user_prompt' cannot be empty" in str(info.value)
    assert list(read_dataset(path, limit=1_234)) == rows[:1_234]
    assert list(read_dataset(path, offset=1_235)) == rows[1_235:]


def test_parquet_validation_reports_every_bad_row(tmp_path: Path) -> None:
    rows = [row(i) for i in range(3_000)]
    for i in (5, 1_500, 2_999):
        rows[i]["ground_truth"] = None
    rows[42]["system_prompt"] = ""
    path = write_parquet(tmp_path / "d.parquet", rows, row_group_size=1_000)
    report = validate_dataset(path)
    assert not report.ok and report.rows == 3_000 and report.bad_rows == 4
    assert [(p.line, p.field) for p in report.problems] == [
        (6, "ground_truth"),
        (43, "system_prompt"),
        (1_501, "ground_truth"),
        (3_000, "ground_truth"),
    ]
    assert report.columns == ["system_prompt", "user_prompt", "ground_truth"]


# --- errors ----------------------------------------------------------------------------------------------


def expect(exc_type: type[Exception], path: Path, **kwargs: Any) -> DatasetFormatError:
    with pytest.raises(exc_type) as info:
        list(read_dataset(path, **kwargs))
    return info.value  # type: ignore[return-value]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="Dataset file not found"):
        read_dataset(tmp_path / "nope.jsonl")
    with pytest.raises(FileNotFoundError):
        count_rows(tmp_path / "nope.parquet")
    with pytest.raises(FileNotFoundError):
        validate_dataset(tmp_path / "nope.csv")


def test_directory_and_unsupported_extension(tmp_path: Path) -> None:
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(IsADirectoryError):
        read_dataset(tmp_path / "dir.jsonl")
    (tmp_path / "d.txt").write_text("{}")
    with pytest.raises(
        DatasetParseError, match=r"unsupported file extension '\.txt'.*\.jsonl, \.json, \.csv"
    ):
        read_dataset(tmp_path / "d.txt")


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_jsonl(tmp_path: Path, content: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(content)
    err = expect(DatasetParseError, path)
    assert "no JSON records found" in str(err)
    report = validate_dataset(path)
    assert not report.ok and report.problems[0].kind == "empty"


def test_empty_other_formats(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("[]")
    (tmp_path / "b.csv").write_text("system_prompt,user_prompt,ground_truth\n")
    (tmp_path / "c.csv").write_text("")
    pq.write_table(pa.table({"system_prompt": pa.array([], pa.string())}), tmp_path / "d.parquet")
    for name in ("a.json", "b.csv", "c.csv", "d.parquet"):
        expect(DatasetParseError, tmp_path / name)


def test_invalid_json_line_names_line_and_row(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(row(0)) + "\n\n" + '{"a": 1,,}\n' + json.dumps(row(2)) + "\n")
    err = expect(DatasetParseError, path)
    assert (err.path, err.line, err.row) == (str(path), 3, 1)
    assert str(err).startswith(f"{path}, line 3 (row 1): invalid JSON at column 9")


def test_non_object_row(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row(0), [1, 2]])
    err = expect(DatasetValidationError, path)
    assert err.line == 2 and "Expected object, got list" in str(err)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "'user_prompt' cannot be null"),
        (5, "'user_prompt' must be a string, got int"),
        (["x"], "'user_prompt' must be a string, got list"),
        ("   ", "'user_prompt' cannot be empty"),
        ("\x1c\x1f", "'user_prompt' cannot be empty"),  # blank to Python's str.strip too
    ],
)
def test_bad_required_field(tmp_path: Path, value: Any, message: str) -> None:
    bad = {**row(1), "user_prompt": value}
    path = write_jsonl(tmp_path / "d.jsonl", [row(0), bad])
    err = expect(DatasetValidationError, path)
    assert (err.line, err.row, err.field) == (2, 1, "user_prompt")
    assert message in str(err)


def test_missing_required_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"user_prompt": "u"}])
    err = expect(DatasetValidationError, path)
    assert "Missing required columns: ['system_prompt', 'ground_truth']" in str(err)
    assert err.line == 1


def test_json_array_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('[\n  {"system_prompt": "s", "user_prompt": "u", "ground_truth": "g"},\n  {"a": tru}\n]')
    err = expect(DatasetParseError, path)
    assert err.line == 3 and err.row == 1
    path.write_text('{"system_prompt": "s"}')
    assert "must start with '['" in str(expect(DatasetParseError, path))
    path.write_text('[{"system_prompt": "s", "user_prompt": "u", "ground_truth": 1}]')
    err = expect(DatasetValidationError, path)
    assert err.field == "ground_truth" and err.line == 1


def test_csv_errors(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('system_prompt,user_prompt,ground_truth\ns,"multi\nline",g\ns,u,g,EXTRA\n')
    err = expect(DatasetParseError, path)
    assert err.line == 4 and err.row == 1 and "4 fields but the header has 3" in str(err)
    assert list(read_dataset(path, limit=1)) == [
        {"system_prompt": "s", "user_prompt": "multi\nline", "ground_truth": "g"}
    ]
    path.write_text("system_prompt,user_prompt,ground_truth\ns,,g\n")
    err = expect(DatasetValidationError, path)
    assert err.field == "user_prompt" and err.line == 2


def test_csv_crlf_and_unicode(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes("system_prompt,user_prompt,ground_truth\r\nsé,数学,g\r\n".encode())
    assert list(read_dataset(path)) == [{"system_prompt": "sé", "user_prompt": "数学", "ground_truth": "g"}]


def test_parquet_error_names_row(tmp_path: Path) -> None:
    rows = [row(i) for i in range(10)]
    rows[7]["ground_truth"] = None
    path = write_parquet(tmp_path / "d.parquet", rows, row_group_size=3)
    err = expect(DatasetValidationError, path)
    assert (err.line, err.row, err.field) == (8, 7, "ground_truth")
    assert str(err).startswith(f"{path}, row 8: 'ground_truth' cannot be null")
    (tmp_path / "bad.parquet").write_bytes(b"not a parquet file at all")
    with pytest.raises(DatasetParseError, match="invalid Parquet"):
        read_dataset(tmp_path / "bad.parquet")


def test_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(json.dumps(row(0)).encode() + b'\n{"system_prompt": "\xff"}\n')
    err = expect(DatasetParseError, path)
    assert err.line == 2 and "invalid UTF-8 at column 20" in str(err)


# --- the validation pass ---------------------------------------------------------------------------------


def test_validate_reports_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    lines = [
        json.dumps(row(0)),
        "{bad",
        "",
        json.dumps({**row(2), "ground_truth": 3}),
        "[]",
        json.dumps(row(4)),
    ]
    path.write_text("\n".join(lines))
    report = validate_dataset(path)
    assert report.rows == 5 and report.bad_rows == 3 and report.total_problems == 3
    assert [(p.line, p.row, p.kind) for p in report.problems] == [
        (2, 1, "parse"),
        (4, 2, "validation"),
        (5, 3, "validation"),
    ]
    assert report.problems[1].field == "ground_truth"
    capped = validate_dataset(path, max_problems=1)
    assert len(capped.problems) == 1 and capped.truncated and capped.total_problems == 3


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet"])
def test_validate_other_formats_agree_with_reader(tmp_path: Path, fmt: str) -> None:
    rows = [row(i) for i in range(6)]
    rows[2]["user_prompt"] = ""
    rows[4]["system_prompt"] = " "
    path = WRITERS[fmt](tmp_path / f"d.{fmt}", rows)
    report = validate_dataset(path)
    assert [p.row for p in report.problems] == [2, 4]
    assert [p.field for p in report.problems] == ["user_prompt", "system_prompt"]
    err = expect(DatasetValidationError, path)
    assert err.row == 2 and err.line == report.problems[0].line


def test_rubric_contract(tmp_path: Path) -> None:
    good = {"solution_str": "x", "rubric_id": "r", "score_min": 0, "score_max": 1.5, "metadata": {}}
    path = write_jsonl(
        tmp_path / "d.jsonl", [good, {"solution_str": ""}, {"solution_str": "y", "score_max": "1"}]
    )
    report = validate_dataset(path, contract="rubric")
    assert [(p.line, p.field) for p in report.problems] == [(2, "solution_str"), (3, "score_max")]
    assert next(read_dataset(path, contract="rubric")) == good
    assert len(list(read_dataset(path, contract="any"))) == 3


def test_bad_arguments(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row(0)])
    with pytest.raises(ValueError):
        read_dataset(path, offset=-1)
    with pytest.raises(ValueError):
        read_dataset(path, batch_size=0)
    with pytest.raises(RuntimeError, match="unknown row contract"):
        read_dataset(path, contract="nope")  # type: ignore[arg-type]


def test_batches_cross_the_boundary(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row(i) for i in range(10)])
    assert [len(b) for b in iter_batches(path, batch_size=4)] == [4, 4, 2]
    batches = _core.DatasetBatches(str(path), "eval", 0, None, 3)
    assert batches.format == "jsonl"
    next(batches)
    del batches  # the reader thread ends with the iterator


def test_iteration_from_another_thread(tmp_path: Path) -> None:
    import threading

    path = write_jsonl(tmp_path / "d.jsonl", [row(i) for i in range(50)])
    rows = read_dataset(path, batch_size=8)
    first = next(rows)
    rest: list[dict[str, Any]] = []
    worker = threading.Thread(target=lambda: rest.extend(rows))
    worker.start()
    worker.join()
    assert [first, *rest] == [row(i) for i in range(50)]


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_reading_in_the_callers_thread_reads_the_same_rows(tmp_path: Path, fmt: str) -> None:
    rows = [row(i, note="x" * (i % 7)) for i in range(2500)]
    path = WRITERS[fmt](tmp_path / f"d.{fmt}", rows)
    assert list(read_dataset(path, read_ahead=False)) == rows
    assert list(read_dataset(path, offset=1990, limit=25, read_ahead=False)) == rows[1990:2015]
    assert [len(b) for b in iter_batches(path, batch_size=1000, read_ahead=False)][:2] == [1000, 1000]


def test_reading_in_the_callers_thread_starts_no_reader_thread(tmp_path: Path) -> None:
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        pytest.skip("needs /proc")
    path = write_jsonl(tmp_path / "d.jsonl", [row(i) for i in range(3000)])
    before = len(list(tasks.iterdir()))
    inline = read_dataset(path, read_ahead=False)
    next(inline)
    assert len(list(tasks.iterdir())) == before
    ahead = read_dataset(path)
    next(ahead)
    assert len(list(tasks.iterdir())) == before + 1  # the default reads ahead on a thread of its own
    del ahead


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_check_rows_counts_the_window_and_meets_the_readers_error(tmp_path: Path, fmt: str) -> None:
    rows = [row(i) for i in range(2500)]
    path = WRITERS[fmt](tmp_path / f"d.{fmt}", rows)
    assert check_rows(path) == 2500
    assert check_rows(path, offset=1990, limit=25) == 25
    assert check_rows(path, offset=5000) == 0
    bad = [*rows[:1500], {**row(1500), "user_prompt": ""}, *rows[1501:]]
    path = WRITERS[fmt](tmp_path / f"bad.{fmt}", bad)
    with pytest.raises(DatasetValidationError) as read:
        list(read_dataset(path))
    with pytest.raises(DatasetValidationError) as checked:
        check_rows(path)
    assert (str(checked.value), checked.value.line, checked.value.row, checked.value.field) == (
        str(read.value),
        read.value.line,
        read.value.row,
        read.value.field,
    )
    assert check_rows(path, limit=1500) == 1500  # the bad row outside the window is not read
    assert check_rows(path, offset=1501) == 999


def test_check_rows_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="Dataset file not found"):
        check_rows(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DatasetParseError, match="no JSON records found"):
        check_rows(tmp_path / "empty.jsonl", contract="any")
    (tmp_path / "d.txt").write_text("{}")
    with pytest.raises(DatasetParseError, match="unsupported file extension"):
        check_rows(tmp_path / "d.txt")
    with pytest.raises(ValueError):
        check_rows(tmp_path / "d.txt", offset=-1)


def test_stub_lists_the_dataset_bindings() -> None:
    stub = (Path(_core.__file__).parent / "_core.pyi").read_text()
    for name in ("DatasetBatches", "count_rows", "validate_dataset", "check_rows"):
        assert hasattr(_core, name)
        assert f" {name}" in stub


# --- property: what is written is what is read -------------------------------------------------------------

text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)
required_text = text.filter(lambda s: s.strip() != "")
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
rows_strategy = st.lists(
    st.fixed_dictionaries(
        {"system_prompt": required_text, "user_prompt": required_text, "ground_truth": required_text},
        optional={"extra": json_values, "id": st.integers(0, 10**6)},
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=rows_strategy, batch_size=st.integers(1, 7))
def test_property_jsonl_and_json_round_trip(
    tmp_path: Path, rows: list[dict[str, Any]], batch_size: int
) -> None:
    for fmt in ("jsonl", "json"):
        path = WRITERS[fmt](tmp_path / f"p.{fmt}", rows)
        assert list(read_dataset(path, batch_size=batch_size)) == rows
        assert count_rows(path) == len(rows)
        assert validate_dataset(path).ok


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.fixed_dictionaries(
            {
                "system_prompt": required_text,
                "user_prompt": required_text,
                "ground_truth": required_text,
                "note": text,
            }
        ),
        min_size=1,
        max_size=20,
    )
)
def test_property_csv_and_parquet_round_trip(tmp_path: Path, rows: list[dict[str, str]]) -> None:
    # CSV cannot hold a lone carriage return faithfully through csv.DictWriter + universal newlines.
    rows = [{k: v.replace("\r", "") for k, v in r.items()} for r in rows]
    rows = [r for r in rows if all(v.strip() for k, v in r.items() if k != "note")] or [row(0, note="")]
    for fmt in ("csv", "parquet"):
        path = WRITERS[fmt](tmp_path / f"p.{fmt}", rows)
        assert list(read_dataset(path)) == rows
        assert count_rows(path) == len(rows)


def test_validate_large_file_keeps_exact_line_numbers(tmp_path: Path) -> None:
    """Over 16 MiB, JSONL is validated in byte ranges on several threads; positions must not shift."""
    path = tmp_path / "big.jsonl"
    bad_lines = {7, 5_001, 9_999, 14_321, 19_998}
    pad = "p" * 900
    with path.open("w", encoding="utf-8") as f:
        for line in range(1, 20_001):
            if line in bad_lines:
                f.write('{"system_prompt": "s", "user_prompt": null, "ground_truth": "g"}\n')
            elif line % 1000 == 0:
                f.write("\n")
            else:
                f.write(json.dumps({**row(line), "pad": pad}) + "\n")
    assert path.stat().st_size > 17 * 2**20
    report = validate_dataset(path)
    assert [p.line for p in report.problems] == sorted(bad_lines)
    blank_before = {line: line // 1000 for line in bad_lines}
    assert [p.row for p in report.problems] == [line - 1 - blank_before[line] for line in sorted(bad_lines)]
    assert report.rows == 20_000 - 20 and report.columns[-1] == "pad"


def test_reading_leaves_the_garbage_collector_as_it_was(tmp_path: Path) -> None:
    """The collector is held off while a batch is built; it must come back exactly as the caller had it."""
    import gc

    path = write_parquet(tmp_path / "d.parquet", [row(i, meta={"k": [i]}) for i in range(3_000)])
    was = gc.isenabled()
    try:
        gc.enable()
        batches = iter_batches(path, batch_size=1_000)
        next(batches)
        assert gc.isenabled()
        gc.disable()
        assert sum(len(b) for b in batches) == 2_000
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()
