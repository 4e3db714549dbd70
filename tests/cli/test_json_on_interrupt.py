"""`osmosis grade --json` and `osmosis reward probe --json` stopped by Ctrl+C or SIGTERM print their envelope
over what finished, marked ``interrupted: true`` (as `osmosis eval --json` does), then exit 130 / 143.

Before, both printed nothing on stdout: a script saw no JSON. Each test starts the real CLI in a subprocess
against a scripted model server that answers the first two items and holds the third (an event: the server
says when a request is held), then sends the signal. No sleep: the timeouts are hang guards.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.probes.test_reward_probe import RUBRIC_CONFIG
from tests.test_stop_signals import HANG_GUARD_S, OSMOSIS, _env, _grader_files

SIGNALS = [(signal.SIGINT, 130, "Interrupted"), (signal.SIGTERM, 143, "Terminated (SIGTERM)")]


def _stop(args: list[str], cwd: Path, server: Any, sig: int) -> tuple[subprocess.Popen[str], str, str]:
    """Runs `osmosis ARGS`, waits until the server holds a request, sends ``sig``; (process, stdout, stderr)."""
    proc = subprocess.Popen(
        [OSMOSIS, *args], cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    server.wait_held(1)  # the two items before it finished (one at a time), the third waits on the model
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=HANG_GUARD_S)
    return proc, out, err


@pytest.mark.parametrize(("sig", "code", "word"), SIGNALS)
def test_grade_json_prints_what_finished_when_stopped(
    tmp_path: Path, scripted: Any, sig: int, code: int, word: str
) -> None:
    answered = [{"content": '{"result": 0.75}'}]
    server = scripted({"by_prompt": {"answer 0": answered, "answer 1": answered}, "default": {"hold": True}})
    grader, data = _grader_files(tmp_path, server)
    log = tmp_path / "grade.jsonl"
    args = ["--json", "grade", "--grader", str(grader), "-d", str(data), "--base-url", server.base_url,
            "--concurrency", "1", "--log", str(log)]  # fmt: skip
    proc, out, err = _stop(args, tmp_path, server, sig)
    assert proc.returncode == code, err
    envelope = json.loads(out)  # before: stdout was empty
    summary = envelope["data"]
    assert summary["interrupted"] is True and summary["log"] == str(log)
    assert (summary["graded"], summary["mean"], summary["passed"]) == (2, 0.75, 2)
    assert f"{word}: the graded samples are saved in {log}" in err and "Traceback" not in err


@pytest.mark.parametrize(("sig", "code", "word"), SIGNALS)
def test_reward_probe_json_prints_what_finished_when_stopped(
    tmp_path: Path, scripted: Any, sig: int, code: int, word: str
) -> None:
    rows = [(f"q-fast-{i}" if i < 2 else f"q-hold-{i}", "5") for i in range(4)]
    (tmp_path / "data.jsonl").write_text(
        "".join(json.dumps({"user_prompt": prompt, "ground_truth": truth}) + "\n" for prompt, truth in rows)
    )
    (tmp_path / "rubric_configs.yaml").write_text(RUBRIC_CONFIG)
    fine = [{"score": 1.0, "explanation": "fine"}]
    server = scripted({"by_prompt": {"q-fast-0": fine, "q-fast-1": fine}, "default": {"hold": True}})
    log = tmp_path / "probe.jsonl"
    args = ["--json", "reward", "probe", "-d", "data.jsonl", "--rubric", "lenient", "--base-url", server.base_url,
            "--concurrency", "1", "--log", str(log)]  # fmt: skip
    proc, out, err = _stop(args, tmp_path, server, sig)
    assert proc.returncode == code, err
    data = json.loads(out)["data"]  # before: stdout was empty
    assert data["interrupted"] is True and data["log"] == str(log)
    assert data["rows"] == 2 and "rubric:lenient" in data["functions"]
    assert f"{word}: the finished rows are saved in {log}" in err and "Traceback" not in err
