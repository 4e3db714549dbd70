"""`osmosis preview` and `osmosis dataset validate`, run as the installed console script would be."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from osmosis_ai.cli.main import main


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "osmosis_ai.cli.main", *args], capture_output=True, text=True, check=False
    )


def good(i: int) -> dict[str, str]:
    return {"system_prompt": "s", "user_prompt": f"u{i}", "ground_truth": "g"}


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(good(i), ensure_ascii=False) for i in range(3)) + "\n")
    return path


def test_preview_jsonl_prints_every_record(jsonl: Path) -> None:
    result = run("preview", "--path", str(jsonl))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"Loaded 3 JSONL record(s) from {jsonl}"
    assert lines[1:3] == ["", "JSONL record #1"]
    assert '  "user_prompt": "u0",' in lines
    assert "JSONL record #3" in lines


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet"])
def test_preview_other_formats(tmp_path: Path, fmt: str) -> None:
    rows = [good(i) for i in range(2)]
    path = tmp_path / f"d.{fmt}"
    if fmt == "json":
        path.write_text(json.dumps(rows))
    elif fmt == "csv":
        path.write_text("system_prompt,user_prompt,ground_truth\ns,u0,g\ns,u1,g\n")
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    label = {"json": "JSON record", "csv": "CSV row", "parquet": "Parquet row"}[fmt]
    out = run("preview", "-p", str(path), "--limit", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Loaded 2 {label}(s) from {path}\n\n{label} #1\n")
    assert f"{label} #2" not in out.stdout and "1 more not shown" in out.stdout


def test_preview_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n\n[1, 2]\n')
    result = run("preview", "-p", str(bad))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip() == f"Error: {bad}, line 3 (row 1): Expected object, got list"
    assert "Traceback" not in result.stderr
    missing = run("preview", "-p", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    (tmp_path / "x.txt").write_text("hi")
    unsupported = run("preview", "-p", str(tmp_path / "x.txt"))
    assert unsupported.returncode == 1 and "Unsupported file extension '.txt'" in unsupported.stderr
    (tmp_path / "e.jsonl").write_text("\n")
    assert "No JSON records found" in run("preview", "-p", str(tmp_path / "e.jsonl")).stderr


def test_preview_yaml_rubric_config(tmp_path: Path) -> None:
    path = tmp_path / "rubrics.yaml"
    path.write_text(
        "version: 1\n"
        "default_score_min: 0.0\n"
        "rubrics:\n"
        "  - id: helpful\n"
        "    title: Helpfulness\n"
        "    rubric: |\n      Is it helpful?\n      Say why.\n"
        "    model_info: {provider: openai, model: gpt-4o}\n"
        "  - id: short\n"
        "    rubric: Be brief.\n"
        "---\n"
        "extra:\n  nested:\n    rubric: Nested one.\n    id: nested\n"
    )
    result = run("preview", "-p", str(path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"Loaded 3 rubric config(s) from {path}\n")
    assert (
        "Rubric config #1 (rubrics[0])\nid: helpful\ntitle: Helpfulness\nrubric: |\n  Is it helpful?" in out
    )
    assert "Rubric config #3 (extra.nested)" in out
    path.write_text("rubrics:\n  - id: a\n    rubric: x\n  - id: a\n    rubric: y\n")
    dup = run("preview", "-p", str(path))
    assert dup.returncode == 1 and "duplicate rubric id 'a'" in dup.stderr
    path.write_text("version: 2\nrubrics: [{id: a, rubric: x}]\n")
    assert "Unsupported rubric config version 2" in run("preview", "-p", str(path)).stderr


def test_dataset_validate_ok(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dataset", "validate", str(jsonl)]) == 0
    out = capsys.readouterr().out
    assert "Rows:     3" in out and "Columns:  system_prompt, user_prompt, ground_truth" in out
    assert out.rstrip().endswith("OK")


def test_dataset_validate_lists_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    rows = [good(0), {**good(1), "user_prompt": None}, "oops", {**good(3), "ground_truth": 7}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    result = run("dataset", "validate", str(path))
    assert result.returncode == 1
    assert "Problems: 4 in 4 row(s)" in result.stdout
    assert "line 2 (row 1) [user_prompt]: 'user_prompt' cannot be null" in result.stdout
    assert "line 3 (row 2): Expected object, got str" in result.stdout
    assert "line 4 (row 3) [ground_truth]: 'ground_truth' must be a string, got int" in result.stdout
    assert "line 5 (row 4): invalid JSON" in result.stdout
    capped = run("dataset", "validate", str(path), "--max-problems", "1")
    assert "... 3 more (raise --max-problems)" in capped.stdout
    as_json = json.loads(run("dataset", "validate", str(path), "--json").stdout)
    assert as_json["ok"] is False and as_json["total_problems"] == 4
    assert as_json["problems"][0]["line"] == 2


def test_dataset_validate_parquet_and_contract(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist([{"solution_str": "a"}, {"solution_str": ""}]), path)
    result = run("dataset", "validate", str(path), "--contract", "rubric")
    assert result.returncode == 1 and "row 2 [solution_str]: 'solution_str' cannot be empty" in result.stdout
    assert run("dataset", "validate", str(path), "--contract", "any").returncode == 0


def test_a_parquet_file_the_reader_panics_on_gives_only_our_error(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.parquet"
    pq.write_table(pa.Table.from_pylist([good(i) for i in range(3)]), path, compression="NONE")
    data = bytearray(path.read_bytes())
    data[5] = 3  # after "PAR1", the first page header's type: -2, on which the parquet crate panics
    path.write_bytes(bytes(data))
    preview = run("preview", "-p", str(path))
    assert preview.returncode == 1
    assert preview.stderr.startswith(f"Error: {path}, row 1: invalid Parquet:"), preview.stderr
    assert "corrupt data" in preview.stderr  # the case goes through the reader's caught panic
    validate = run("dataset", "validate", str(path))
    assert validate.returncode == 1 and "row 1: invalid Parquet:" in validate.stdout
    assert str(path) in validate.stdout
    for result in (preview, validate):
        assert "panicked" not in result.stderr and "backtrace" not in result.stderr, result.stderr


def test_dataset_validate_missing_file(tmp_path: Path) -> None:
    result = run("dataset", "validate", str(tmp_path / "nope.jsonl"))
    assert result.returncode == 1
    assert result.stderr.strip() == f"Error: Dataset file not found: {tmp_path / 'nope.jsonl'}"


def test_help_lists_the_commands_without_importing_them() -> None:
    code = (
        "import sys; from osmosis_ai.cli.main import main; main(['--help']);"
        "print('datasets' in sys.modules or 'osmosis_ai.datasets' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert "preview" in result.stdout and "dataset" in result.stdout
    assert result.stdout.strip().endswith("False")
