"""Bad inputs end in a clear error naming what is wrong, before anything runs (issue #22 items 2, 4, 6, 8)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_eval_cli import osmosis

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
    assert f"{records}:2: not valid UTF-8" in result.stderr
    assert "Traceback" not in result.stderr


def test_sigterm_on_eval_rubric_writes_the_results_file(rubric_dir, scripted) -> None:
    records = rubric_dir / "records.jsonl"
    records.write_text(
        "".join(json.dumps({"rubric_id": "polite", "solution_str": f"a{i}"}) + "\n" for i in range(40))
    )
    server = scripted({"default": {"score": 0.5, "delay": 0.05}})
    log = rubric_dir / "run.jsonl"
    args = [sys.executable, "-m", "osmosis_ai.cli.main", "eval-rubric", "-r", "polite", "-d", str(records),
            "--base-url", server.base_url, "-o", "partial.json", "--log", str(log)]  # fmt: skip
    env = {**os.environ, "OSMOSIS_EVAL_RESULT_DIR": str(rubric_dir / "cache")}
    proc = subprocess.Popen(
        args, cwd=rubric_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (log.exists() and len(log.read_text().splitlines()) >= 4):
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    partial = json.loads((rubric_dir / "partial.json").read_text())
    assert partial["interrupted"] is True and 3 <= partial["completed_runs"] < 40
