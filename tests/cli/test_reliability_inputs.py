"""Bad inputs end in a clear error naming what is wrong, before anything runs (issue #22 items 2, 4, 6, 8)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_eval_cli import EXAMPLES, OSMOSIS, osmosis

RUBRICS = (
    "version: 1\npolite:\n  id: polite\n  rubric: Is it polite?\n"
    "  model_info: {provider: openai, model: judge-model, api_key: sk-local-judge}\n"
)


@pytest.fixture
def rubric_dir(tmp_path: Path) -> Path:
    (tmp_path / "rubric_configs.yaml").write_text(RUBRICS)
    return tmp_path


def test_rubric_records_with_invalid_utf8_name_file_and_line(rubric_dir) -> None:
    records = rubric_dir / "records.jsonl"
    records.write_bytes(
        b'{"rubric_id": "polite", "solution_str": "ok"}\n{"rubric_id": "polite", "x": "\xff"}\n'
    )
    result = osmosis("eval-rubric", "-r", "polite", "-d", str(records), "--base-url", "http://127.0.0.1:1/v1",
                     cwd=rubric_dir)  # fmt: skip
    assert result.returncode != 0
    assert f"Invalid UTF-8 on line 2 of '{records}'" in result.stderr
    assert "Traceback" not in result.stderr


def test_sigterm_on_eval_rubric_writes_the_results_file(rubric_dir, scripted) -> None:
    records = rubric_dir / "records.jsonl"
    records.write_text(
        "".join(json.dumps({"rubric_id": "polite", "solution_str": f"a{i}"}) + "\n" for i in range(40))
    )
    # Records 4 and on are held by the server (never answered): once both judge slots wait on them, the
    # first four runs are logged and no later one can be, however slow the machine.
    held = {f"a{i}\n": [{"hold": True}] for i in range(4, 40)}
    server = scripted({"default": {"score": 0.5}, "by_prompt": held})
    log = rubric_dir / "run.jsonl"
    args = [sys.executable, "-m", "osmosis_ai.cli.main", "eval-rubric", "-r", "polite", "-d", str(records),
            "--base-url", server.base_url, "--concurrency", "2", "-o", "partial.json", "--log", str(log)]  # fmt: skip
    env = {**os.environ, "OSMOSIS_EVAL_RESULT_DIR": str(rubric_dir / "cache")}
    proc = subprocess.Popen(
        args, cwd=rubric_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    server.wait_held(2)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err  # 128 + SIGTERM; Ctrl+C is 130
    assert "Traceback" not in err
    partial = json.loads((rubric_dir / "partial.json").read_text())
    assert partial["interrupted"] is True and partial["completed_runs"] == 4
    assert "Evaluation terminated (SIGTERM) after 4 of 40 run(s)" in err


EVAL = ["eval", "-m", "math_agent:agent_loop", "-d", "missing.jsonl", "--model", "m", "--eval-fn", "a:f"]
TEST = ["test", "-m", "math_agent:agent_loop", "-d", "missing.jsonl", "--model", "m"]
RUBRIC = ["eval-rubric", "-r", "polite", "-d", "missing.jsonl"]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        ([*EVAL, "--batch-size", "1000000000"], "--batch-size"),
        ([*EVAL, "--n", "9223372036854775807"], "--n"),
        ([*EVAL, "--run-timeout", "nan"], "--run-timeout"),
        ([*EVAL, "--run-timeout", "1e308"], "--run-timeout"),
        ([*EVAL, "--temperature", "nan"], "--temperature"),
        ([*EVAL, "--temperature", "inf"], "--temperature"),
        ([*EVAL, "--pass-threshold", "nan"], "--pass-threshold"),
        ([*EVAL, "--max-tokens", "0"], "--max-tokens"),
        ([*EVAL, "--mcp-tool-timeout", "nan"], "--mcp-tool-timeout"),
        ([*TEST, "--run-timeout", "nan"], "--run-timeout"),
        ([*TEST, "--temperature", "-0.5"], "--temperature"),
        ([*RUBRIC, "--concurrency", "100000"], "--concurrency"),
        ([*RUBRIC, "--timeout", "inf"], "--timeout"),
        ([*RUBRIC, "-n", "9223372036854775807"], "--number"),
    ],
)
def test_numeric_options_are_finite_and_bounded(args, option) -> None:
    result = osmosis(*args)
    assert result.returncode == 2, result.stderr  # a usage error, before anything is read or run
    assert option in result.stderr and "Traceback" not in result.stderr


def test_an_output_path_that_is_a_directory_is_refused_before_the_run(tmp_path) -> None:
    result = osmosis(*EVAL, "-o", str(tmp_path))
    assert result.returncode == 2  # a usage error (the CLI contract)
    assert f"{tmp_path} is a directory" in result.stderr
    assert "missing.jsonl" not in result.stderr  # refused before the dataset is even opened


def test_an_output_path_that_cannot_be_created_is_refused_before_the_run(tmp_path) -> None:
    (tmp_path / "a-file").write_text("")
    result = osmosis(*EVAL, "-o", str(tmp_path / "a-file" / "out.json"))
    assert result.returncode == 2
    assert "a-file is not a directory" in result.stderr and "missing.jsonl" not in result.stderr


def test_a_link_to_a_device_is_refused_not_read_forever(tmp_path) -> None:
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    for args in (["dataset", "validate", str(link)], [*EVAL[:4], str(link), *EVAL[5:]]):
        result = osmosis(*args, timeout=60)  # before the fix: grew until the kernel killed it, or hung
        assert result.returncode != 0
        assert "is not a regular file" in result.stderr and "Traceback" not in result.stderr


def test_a_file_without_line_breaks_stops_at_the_line_limit(tmp_path) -> None:
    blob = tmp_path / "blob.jsonl"
    blob.write_bytes(b'{"a": 1}\n' + b"x" * 600_000)  # longer than a validation block (256 KiB)
    env = {**os.environ, "OSMOSIS_MAX_LINE_BYTES": "100000"}
    for args in (["dataset", "validate", str(blob)], [*EVAL[:4], str(blob), *EVAL[5:]]):
        result = subprocess.run(
            [OSMOSIS, *args], capture_output=True, text=True, timeout=60, env=env, cwd=EXAMPLES
        )
        assert result.returncode != 0
        assert f"{blob}, line 2" in result.stderr and "longer than 100000 bytes" in result.stderr
        assert "OSMOSIS_MAX_LINE_BYTES" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("row", "validate_says", "eval_says"),
    [
        ('{"system_prompt": "s", "user_prompt": "u", "ground_truth": "1", "ground_truth": "2"}',
         "given twice", "given twice"),
        ('{"system_prompt": "s", "user_prompt": "u", "ground_truth": "1", "x": ' + "[" * 5000 + "]" * 5000 + "}",
         "recursion limit", "recursion limit"),
    ],
)  # fmt: skip
def test_dataset_validate_and_eval_give_one_verdict(tmp_path, row, validate_says, eval_says) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(row + "\n")
    validated = osmosis("dataset", "validate", str(data))
    evaluated = osmosis(
        *EVAL[:4], str(data), "--model", "m", "--eval-fn", "reward_fn.compute_reward:numbers_match_reward",
        "--base-url", "http://127.0.0.1:1/v1", "--no-preflight", "--log", str(tmp_path / "log.jsonl"),
    )  # fmt: skip
    assert validated.returncode != 0 and validate_says in validated.stdout + validated.stderr
    assert evaluated.returncode != 0 and eval_says in evaluated.stderr
    assert "Traceback" not in validated.stderr + evaluated.stderr
