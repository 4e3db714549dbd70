"""SIGTERM is worded "terminated" (exit 143) by every command, not only those on the run engine (issue #32).

Each test starts the real CLI in a subprocess, waits for an event that says the command is where the test
wants it (a model call held by the scripted server, a line on its stdout), sends SIGTERM and waits for the
exit. No sleep: the timeouts below are hang guards.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.stop_signals import Terminated, exit_code_of, sigterm_raises, stop_word
from tests.eval_run_workspace import calc_rows, make_workspace
from tests.report_logs import write_eval_log

OSMOSIS = str(Path(sys.executable).with_name("osmosis"))
HANG_GUARD_S = 120


def _env() -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}
    return {**clean, "PYTHONUNBUFFERED": "1"}


def _terminate(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=HANG_GUARD_S)
    return out, err


def test_the_wording_of_a_stop() -> None:
    assert (exit_code_of(signal.SIGTERM), exit_code_of(signal.SIGINT)) == (143, 130)
    assert stop_word(143) == "terminated (SIGTERM)" and stop_word(130) == "interrupted"
    assert stop_word(130, ctrl_c="cancelled by user") == "cancelled by user"
    assert stop_word(143, starts_sentence=True) == "Terminated (SIGTERM)"
    assert str(Terminated()) == "Terminated (SIGTERM)" and Terminated().exit_code == 143


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_the_engine_puts_back_the_process_sigterm_handler() -> None:
    # asyncio leaves SIG_DFL behind when its handler goes: a second SIGTERM (or one after the run, while
    # the -o file or the report is written) then killed the process without a word.
    from osmosis_ai.runs.engine import RunEngine
    from osmosis_ai.runs.work import MemorySink, WorkItem

    class Echo:
        def new_record(self, item: Any) -> dict[str, Any]:
            return {"row_index": item.row_index, "success": True, "scores": {}}

        async def execute(self, item: Any, record: dict[str, Any], control: Any) -> None:
            return None

        def finish(self, item: Any, record: dict[str, Any]) -> None:
            return None

    async def run() -> Any:
        return await RunEngine(Echo(), MemorySink(), concurrency=1).run([WorkItem(0, {}, "k0", 0)])

    with sigterm_raises():
        raising = signal.getsignal(signal.SIGTERM)
        outcome = asyncio.run(run())
        assert signal.getsignal(signal.SIGTERM) is raising
    assert outcome.executed == 1


def _grader_files(tmp_path: Path, server: Any) -> tuple[Path, Path]:
    grader = tmp_path / "grader.json"
    grader.write_text(
        json.dumps(
            {
                "type": "score_model",
                "name": "judge",
                "model": "openai/scripted",
                "input": [{"role": "user", "content": "Rate {{sample.output_text}}"}],
                "range": [0, 1],
                "pass_threshold": 0.5,
            }
        )
    )
    rows = [{"ground_truth": "4", "output_text": f"answer {i}"} for i in range(6)]
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return grader, data


def test_sigterm_on_grade_says_terminated(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"hold": True}})
    grader, data = _grader_files(tmp_path, server)
    log = tmp_path / "grade.jsonl"
    proc = subprocess.Popen(
        [OSMOSIS, "grade", "--grader", str(grader), "-d", str(data), "--base-url", server.base_url,
         "--concurrency", "1", "--log", str(log)],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    server.wait_held(1)  # the first sample's model call is in flight
    _out, err = _terminate(proc)
    assert proc.returncode == 143, err
    assert f"Terminated (SIGTERM): the graded samples are saved in {log}" in err
    assert "Traceback" not in err and "Interrupted" not in err


def test_sigterm_on_eval_run_says_terminated(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"hold": True}})
    ws = make_workspace(tmp_path / "ws", calc_rows(4), n=1)
    proc = subprocess.Popen(
        [OSMOSIS, "eval", "run", "configs/eval/calc.toml", "--dataset-file", "data/calc.jsonl", "--name", "r1",
         "-y", "--base-url", server.base_url],
        cwd=ws, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    server.wait_held(1)
    out, err = _terminate(proc)
    assert proc.returncode == 1, out + err  # 0.3's rule: exit 1 when not every item has a result
    assert "Evaluation run terminated (SIGTERM)" in out and "Traceback" not in err
    summary = json.loads((ws / ".osmosis/evals/r1/metrics.json").read_text())
    assert summary["eval_run"]["status"] == "incomplete"


def _serving_view(tmp_path: Path) -> subprocess.Popen[str]:
    """`osmosis view` of a small eval log, once its own "Serving <url>" line says it listens."""
    log, _ = write_eval_log(tmp_path, rows=4)
    proc = subprocess.Popen(
        [OSMOSIS, "view", str(log), "--port", "0"],
        env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("Serving "):
            break
    return proc


def test_sigterm_on_view_says_terminated(tmp_path: Path) -> None:
    # view does not run on the engine: before, SIGTERM killed it without a word (exit -15).
    proc = _serving_view(tmp_path)
    _out, err = _terminate(proc)
    assert proc.returncode == 143, err
    assert err.strip().endswith("Terminated (SIGTERM).") and "Traceback" not in err


def test_ctrl_c_on_view_still_ends_it_quietly(tmp_path: Path) -> None:
    proc = _serving_view(tmp_path)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 0, err
