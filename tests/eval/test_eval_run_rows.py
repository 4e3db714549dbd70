"""The 0.3 local row contract of `osmosis eval run` (spec 4.3), checked by the Rust reader: errors name the
file, the line (Parquet: the row) and the field, and only selected rows are checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.datasets import read_dataset, validate_dataset
from osmosis_ai.errors import DatasetValidationError
from osmosis_ai.eval.run_rows import check_rows, item_prompt, item_row, normalize_row, select_rows
from tests.eval.test_eval_run import index, osmosis_run
from tests.eval_run_workspace import calc_rows, make_workspace
from tests.test_datasets import write_csv, write_json, write_parquet

GOOD = {"user_prompt": "u", "ground_truth": "4"}
NEEDS = "a row without a 'metadata' column needs one"


def write_jsonl_with_blank(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A blank line after the first row: line numbers and row indices differ by two from then on."""
    lines = [json.dumps(rows[0]), "", *(json.dumps(r) for r in rows[1:])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def error_of(path: Path, **kwargs: Any) -> DatasetValidationError:
    selection = {"indices": None, "limit": None, **kwargs}
    with pytest.raises(DatasetValidationError) as info:
        list(select_rows(path, **selection))
    with pytest.raises(DatasetValidationError) as checked:
        check_rows(path, **selection)  # the check before a run: the very same error
    assert (str(checked.value), checked.value.line, checked.value.field) == (
        str(info.value),
        info.value.line,
        info.value.field,
    )
    return info.value


def test_jsonl_error_names_file_line_and_field(tmp_path: Path) -> None:
    path = write_jsonl_with_blank(tmp_path / "nogt.jsonl", [GOOD, {"user_prompt": "u"}])
    err = error_of(path)
    assert str(err) == f"{path}, line 3 (row 1): missing 'ground_truth' (or 'label'); {NEEDS}"
    assert (err.line, err.row, err.field) == (3, 1, "ground_truth")


def test_a_prompt_that_is_not_text_is_refused_as_eval_refuses_it(tmp_path: Path) -> None:
    # The row contract of `eval`: anchor 0.3 ran {"user_prompt": 123} as the prompt "123".
    path = write_jsonl_with_blank(tmp_path / "d.jsonl", [GOOD, {"user_prompt": 123, "ground_truth": "4"}])
    err = error_of(path)
    assert str(err) == f"{path}, line 3 (row 1): 'user_prompt' must be a string, got int"
    assert err.field == "user_prompt"
    path = write_jsonl_with_blank(tmp_path / "l.jsonl", [{"user_prompt": "u", "label": ["4"]}])
    assert "'label' must be a string or a number, got list" in str(error_of(path))


def test_csv_error_names_the_line_of_an_empty_cell(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "d.csv", [GOOD, GOOD, {"user_prompt": "", "ground_truth": "4"}])
    err = error_of(path)
    assert str(err) == f"{path}, line 4 (row 2): 'user_prompt' cannot be empty; {NEEDS}"
    assert err.field == "user_prompt"


def test_json_array_error_names_the_line(tmp_path: Path) -> None:
    path = write_json(tmp_path / "d.json", [GOOD, {"user_prompt": None, "ground_truth": "4"}])
    err = error_of(path)
    assert str(err).startswith(f"{path}, line ") and "(row 1): 'user_prompt' cannot be null" in str(err)


def test_parquet_error_names_the_row(tmp_path: Path) -> None:
    rows = [GOOD, GOOD, {"user_prompt": "u", "ground_truth": ""}]
    path = write_parquet(tmp_path / "d.parquet", rows)
    err = error_of(path)
    assert str(err) == f"{path}, row 3: 'ground_truth' cannot be empty; {NEEDS}"
    assert (err.row, err.field) == (2, "ground_truth")


def test_only_an_empty_string_is_empty_and_label_is_an_alias(tmp_path: Path) -> None:
    rows = [
        {"user_prompt": "  ", "ground_truth": " "},  # spec 4.3: only "" is empty
        {"user_prompt": "u", "label": "7"},
        {"user_prompt": "5", "ground_truth": 4, "system_prompt": None},  # a number label is its text
        {"user_prompt": "u", "ground_truth": "", "label": "9"},
    ]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    items = [normalize_row(source, row) for source, row in select_rows(path, None, None)]
    assert [(i.prompt[-1]["content"], i.label) for i in items] == [
        ("  ", " "),
        ("u", "7"),
        ("5", "4"),
        ("u", "9"),
    ]


def test_a_work_item_row_keeps_the_key_order_resumes_and_logs_rely_on() -> None:
    # No system prompt: its empty column comes after the prompts (a resume matches rows by this content).
    assert list(item_row(2, {"user_prompt": "u", "label": 7, "metadata": {"a": 1}})) == [
        "source_row_index",
        "user_prompt",
        "system_prompt",
        "ground_truth",
        "metadata",
    ]
    item = item_row(0, {"system_prompt": "s", "user_prompt": "u", "ground_truth": ""})
    assert item == {"source_row_index": 0, "system_prompt": "s", "user_prompt": "u"}
    assert item_prompt(item) == normalize_row(0, {"system_prompt": "s", "user_prompt": "u"}).prompt


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ([1], "'metadata' must be a JSON object (or a string holding one), got list"),
        ("not json", "'metadata' is a string that does not hold a JSON object"),
        ('["a"]', "'metadata' is a string that does not hold a JSON object"),
        ({}, "no 'user_prompt' or 'system_prompt', and no metadata: the row has nothing to run"),
    ],
)
def test_metadata_rules(tmp_path: Path, metadata: Any, message: str) -> None:
    path = tmp_path / "m.jsonl"
    rows = [{"metadata": {"a": 1}}, {"metadata": '{"b": 2}', "user_prompt": "u"}, {"metadata": metadata}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    err = error_of(path)
    assert str(err) == f"{path}, line 3 (row 2): {message}"
    ok = [normalize_row(s, r) for s, r in select_rows(path, None, 2)]
    assert [(i.metadata, i.label) for i in ok] == [({"a": 1}, None), ({"b": 2}, None)]


def test_rows_selection_skips_unselected_bad_rows(tmp_path: Path) -> None:
    rows = [GOOD, {"user_prompt": "u"}, GOOD, GOOD, {"ground_truth": "x"}, GOOD]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [s for s, _ in select_rows(path, [0, 2, 3, 5], None)] == [0, 2, 3, 5]
    err = error_of(path, indices=[0, 3, 4])
    assert (err.line, err.field) == (5, "user_prompt")
    assert [s for s, _ in select_rows(path, None, 1)] == [0]  # a limit reads (and checks) only its window
    check_rows(path, [0, 2, 3, 5], None)  # the unselected bad rows pass the check before a run too
    check_rows(path, None, 1)


def test_dataset_validate_knows_the_eval_run_contract(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "d.csv", [GOOD, {"user_prompt": "u", "ground_truth": ""}])
    report = validate_dataset(path, contract="eval_run")
    assert [(p.line, p.field) for p in report.problems] == [(3, "ground_truth")]
    assert list(read_dataset(path, contract="eval_run", limit=1)) == [GOOD]


def test_eval_run_cli_names_file_line_and_field(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    rows = calc_rows(3)
    del rows[1]["ground_truth"]
    ws = make_workspace(tmp_path / "ws", rows)
    code, _, stderr = osmosis_run(ws, server)
    assert code != 0
    assert f"data/calc.jsonl, line 2 (row 1): missing 'ground_truth' (or 'label'); {NEEDS}" in stderr
    assert not (ws / ".osmosis/evals/r1").exists() and not server.requests()
    # The bad row left out of --rows does not stop the run.
    assert osmosis_run(ws, server, "--rows", "0,2")[0] == 0
    assert [r["source_row_index"] for r in index(ws)] == [0, 2]


def test_eval_run_cli_csv_line(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(2))
    write_csv(ws / "data/bad.csv", [*calc_rows(2), {**calc_rows(1)[0], "user_prompt": ""}])
    code, _, stderr = osmosis_run(ws, server, "--dataset-file", "data/bad.csv")
    assert code != 0
    assert f"data/bad.csv, line 4 (row 2): 'user_prompt' cannot be empty; {NEEDS}" in stderr
