"""`osmosis eval run`'s run directory (anchor-0.3 §4.4, §4.7): manifest lock, logs.txt, trajectories, artifacts."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

from tests.atif_check import assert_valid_atif
from tests.eval.test_eval_run import _env, index, osmosis_run, run_args
from tests.eval_run_workspace import calc_rows, make_workspace
from tests.json_text import assert_json_dumps_text

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z (INFO|WARNING|ERROR) \[[\w.]+\] .+$")


def test_run_directory_holds_the_manifest_logs_trajectories_and_artifacts(
    tmp_path: Path, scripted: Any
) -> None:
    server = scripted({"default": {"content": "4", "usage": {"prompt_tokens": 2, "completion_tokens": 1}}})
    rows = [*calc_rows(3), {"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "artifact"}}]
    ws = make_workspace(tmp_path / "ws", rows)
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    run = ws / ".osmosis/evals/r1"

    # The files users read keep the established text (json.dumps(indent=2) of their own values).
    manifest = assert_json_dumps_text(run / "manifest.json")
    for name in ("metrics.json", "progress.json"):
        assert_json_dumps_text(run / name)
    assert manifest["schema_version"] == 1 and re.fullmatch(r"[0-9a-f]{32}", manifest["local_run_id"])
    assert manifest["run_name"] == "r1"
    inputs = manifest["inputs"]
    assert sorted(inputs) == [
        "base_url", "dataset", "env", "model_path", "n", "rollout", "secret_names", "timeouts", "versions",
    ]  # fmt: skip
    assert inputs["base_url"] == server.base_url  # the endpoint is locked with the model
    assert inputs["dataset"] == {
        "sha256": hashlib.sha256((ws / "data/calc.jsonl").read_bytes()).hexdigest(),
        "selected_source_rows": "0-3",
    }
    assert inputs["rollout"]["name"] == "calc" and len(inputs["rollout"]["source_digest"]) == 64
    assert inputs["timeouts"] == {"agent_timeout_sec": 30.0, "grader_timeout_sec": 5.0}
    assert manifest["provenance"]["sdk_version"]
    assert envelope["resource"]["local_run_id"] == manifest["local_run_id"]

    eval_run = json.loads((run / "metrics.json").read_text())["eval_run"]
    assert eval_run["id"] == manifest["local_run_id"] and eval_run["started_at"] == manifest["created_at"]
    assert eval_run["status"] == "finished" and eval_run["completed_at"]

    logs = run / "logs.txt"
    assert stat.S_IMODE(logs.stat().st_mode) == 0o600
    lines = logs.read_text().splitlines()
    assert lines and all(LOG_LINE.match(line) for line in lines), lines
    assert any("4 of 4 work items pending" in line for line in lines)

    # Standard json.dumps separators, as the established index files (line tools match on them).
    assert '"status": "success"' in (run / "index.jsonl").read_text()
    for row in index(ws):
        # As the established layout (anchor-0.3 §4.7): the file name is relative to the attempt's
        # rollout_trials/<rollout id>/, and trajectories/row_<r>_run_<k>.json holds the same document.
        name = f"row_{row['row_index']}_run_{row['run_index']}"
        assert row["trajectory_filename"] == "trajectory.json"
        trial = run / "rollout_trials" / row["rollout_id"] / row["trajectory_filename"]
        assert trial.read_bytes() == (run / f"trajectories/{name}.json").read_bytes()
        trajectory = json.loads(trial.read_text())
        assert trajectory["session_id"] == row["rollout_id"]
        assert trajectory["extra"]["osmosis"]["request_extra_fields"] == {
            "row_index": row["row_index"],
            "run_index": 0,
        }
        assert_valid_atif(trajectory)
        assert trajectory["schema_version"] == "ATIF-v1.7"
        assert trajectory["agent"]["model_name"] == "openai/calc-model"
        steps = trajectory["steps"]
        system = ["system"] if "system_prompt" in rows[row["row_index"]] else []
        assert [s["source"] for s in steps] == [*system, "user", "agent"] and steps[-1]["message"] == "4"
        agent = steps[-1]
        # The bridge served one call for the workflow's one agent step: its tokens are that step's metrics.
        assert (
            agent["metrics"] == {"prompt_tokens": 2, "completion_tokens": 1} and agent["llm_call_count"] == 1
        )
        assert trajectory["final_metrics"] == {
            "total_prompt_tokens": 2, "total_completion_tokens": 1, "total_steps": len(steps),
        }  # fmt: skip
        # The platform context of the ATIF document (anchor-0.3 §9): the label and the workflow's metrics.
        assert trajectory["extra"]["osmosis"]["label"] == rows[row["row_index"]]["ground_truth"]
        assert trajectory["extra"]["osmosis"]["sample_metrics"] == {"turns": 1.0}
    assert (run / "artifacts/row_3_run_0/note.txt").read_text() == "kept"


def test_resume_refuses_changed_inputs_by_name_and_ignores_the_threshold(
    tmp_path: Path, scripted: Any
) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(3))
    assert osmosis_run(ws, server)[0] == 0
    config = ws / "configs/eval/calc.toml"
    config.write_text(config.read_text().replace("pass_threshold = 1.0", "pass_threshold = 0.5"))
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0, stderr  # the threshold is not part of the lock: resumed, nothing re-run
    assert envelope["resource"]["resumed"] == 3 and envelope["resource"]["dispatched"] == 0

    (ws / "rollouts/calc/main.py").write_text((ws / "rollouts/calc/main.py").read_text() + "\n# edited\n")
    config.write_text(config.read_text().replace("grader_timeout_s = 5", "grader_timeout_s = 7"))
    code, _, stderr = osmosis_run(ws, server)
    assert code != 0
    assert "rollout:" in stderr and "timeouts:" in stderr and "--fresh" in stderr
    assert "dataset:" not in stderr  # only what changed is named
    assert osmosis_run(ws, server, "--fresh")[0] == 0


def test_logs_txt_masks_secrets_and_records_failures(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    rows = [
        {"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "log_secret"}},
        {"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "raise"}},
    ]
    ws = make_workspace(tmp_path / "ws", rows)
    config = ws / "configs/eval/calc.toml"
    config.write_text(config.read_text().replace("required = []", 'required = ["CALC_TOKEN"]'))
    (ws / "secrets.env").write_text("CALC_TOKEN=tok-planted-98765\n")
    code, _, stderr = osmosis_run(ws, server, "--secrets-file", "secrets.env")
    assert code == 0, stderr
    run = ws / ".osmosis/evals/r1"
    text = (run / "logs.txt").read_text()
    assert "calling with ***" in text and "workflow exploded" in text
    assert "CALC_TOKEN" in (run / "manifest.json").read_text()  # its name is in the lock...
    for path in run.rglob("*"):
        if path.is_file():
            assert "tok-planted-98765" not in path.read_text(errors="replace"), path  # ...never its value


def test_a_secret_taken_from_the_environment_is_masked_too(tmp_path: Path, scripted: Any) -> None:
    # §7.1: a [secrets] value comes from --secrets-file, else from the environment; both are secrets.
    server = scripted({"default": {"content": "4"}})
    rows = [{"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "log_secret"}}]
    ws = make_workspace(tmp_path / "ws", rows)
    config = ws / "configs/eval/calc.toml"
    config.write_text(config.read_text().replace("required = []", 'required = ["CALC_TOKEN"]'))
    env = {**_env(), "CALC_TOKEN": "tok-env-planted-4242"}
    proc = subprocess.run(run_args(server), cwd=ws, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    run = ws / ".osmosis/evals/r1"
    assert "calling with ***" in (run / "logs.txt").read_text()
    for text in (
        proc.stdout,
        proc.stderr,
        *(p.read_text(errors="replace") for p in run.rglob("*") if p.is_file()),
    ):
        assert "tok-env-planted-4242" not in text


def test_the_runs_bridge_token_is_masked_where_user_code_logs_it(tmp_path: Path, scripted: Any) -> None:
    # §4.7: logs.txt masks the configured secrets and the run's own bearer tokens.
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(
        tmp_path / "ws", [{"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "log_key"}}]
    )
    code, _, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    text = (ws / ".osmosis/evals/r1/logs.txt").read_text()
    assert "WARNING [calc] bridge key ***" in text, text


def test_a_resume_projects_what_a_killed_run_left_out_and_keeps_the_rest(
    tmp_path: Path, scripted: Any
) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(4))
    assert osmosis_run(ws, server, "--rows", "0-1")[0] == 0  # a first invocation over two rows
    run = ws / ".osmosis/evals/r1"
    kept = run / "trajectories/row_0_run_0.json"
    lost = run / "trajectories/row_1_run_0.json"
    before = kept.stat().st_mtime_ns
    lost.unlink()  # as if the process died between the log and the projection
    code, envelope, stderr = osmosis_run(ws, server, "--rows", "0-1")
    assert code == 0, stderr
    assert envelope["resource"]["dispatched"] == 0 and envelope["resource"]["resumed"] == 2
    assert lost.exists() and kept.stat().st_mtime_ns == before
    assert all(row.get("resumed") for row in index(ws))


def test_a_resume_rewrites_every_trajectory_after_a_projection_that_died_part_way(
    tmp_path: Path, scripted: Any
) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(2))
    assert osmosis_run(ws, server)[0] == 0
    run = ws / ".osmosis/evals/r1"
    assert not (run / "trajectories/.projecting").exists()  # gone once every file is whole
    torn = run / "trajectories/row_0_run_0.json"
    whole = torn.read_bytes()
    # Files are written in place: a process killed mid-projection leaves a torn file and the marker.
    torn.write_bytes(whole[: len(whole) // 2])
    (run / "trajectories/.projecting").write_bytes(b"")
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    assert envelope["resource"]["dispatched"] == 0 and envelope["resource"]["resumed"] == 2
    assert torn.read_bytes() == whole and not (run / "trajectories/.projecting").exists()


def test_rerunning_a_finished_run_keeps_its_duration_and_completion_time(
    tmp_path: Path, scripted: Any
) -> None:
    # The same command again finds nothing pending: metrics.json still describes the run that happened, not
    # a zero-second run that "completed" now.
    server = scripted({"default": {"content": "4", "delay": 0.05}})
    ws = make_workspace(tmp_path / "ws", calc_rows(3))
    assert osmosis_run(ws, server)[0] == 0
    metrics = ws / ".osmosis/evals/r1/metrics.json"
    first = json.loads(metrics.read_text())["eval_run"]
    assert first["duration_ms"] > 0
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0 and envelope["resource"]["dispatched"] == 0, stderr
    again = json.loads(metrics.read_text())["eval_run"]
    assert (again["duration_ms"], again["completed_at"]) == (first["duration_ms"], first["completed_at"])
    assert envelope["resource"]["duration_ms"] == first["duration_ms"]


def _older_trajectory(rollout_id: str, row: int) -> dict[str, Any]:
    """A trajectory file as versions before ATIF wrote it: the conversation as ``messages``."""
    return {
        "session_id": rollout_id,
        "trajectory_id": f"{rollout_id}/0",
        "messages": [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"}],
        "extra": {
            "osmosis": {"rollout_id": rollout_id, "request_extra_fields": {"row_index": row, "run_index": 0}}
        },
        "final_metrics": {"total_tokens": 3},
    }


def test_an_older_run_directory_gets_atif_trajectories_on_its_next_invocation(
    tmp_path: Path, scripted: Any
) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(3))
    assert osmosis_run(ws, server)[0] == 0
    run = ws / ".osmosis/evals/r1"
    rows = index(ws)
    for row in rows[:2]:  # rows 0 and 1 as an older version left them; row 2 is already ATIF
        name = run / f"trajectories/row_{row['row_index']}_run_0.json"
        trial = run / "rollout_trials" / row["rollout_id"] / "trajectory.json"
        name.unlink()
        trial.write_text(json.dumps(_older_trajectory(row["rollout_id"], row["row_index"])))
        os.link(trial, name)
    atif_already = run / "trajectories/row_2_run_0.json"
    before = atif_already.stat().st_mtime_ns
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    assert envelope["resource"]["dispatched"] == 0 and envelope["resource"]["resumed"] == 3
    for row in index(ws):
        trial = run / "rollout_trials" / row["rollout_id"] / row["trajectory_filename"]
        document = json.loads(trial.read_text())
        assert_valid_atif(document)
        assert document["steps"][-1]["message"] == "4" and "messages" not in document
        assert trial.read_bytes() == (run / f"trajectories/row_{row['row_index']}_run_0.json").read_bytes()
    assert atif_already.stat().st_mtime_ns == before  # a valid carried file is left alone


def test_failed_items_keep_their_trajectory_with_the_failure(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    rows = [{"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "grader_raise"}}]
    ws = make_workspace(tmp_path / "ws", rows)
    assert osmosis_run(ws, server)[0] == 1  # nothing scored: exit 1 (the result model), files still written
    (row,) = index(ws)
    assert row["status"] == "failed" and row["trajectory_filename"] == "trajectory.json"
    trial = ws / ".osmosis/evals/r1/rollout_trials" / row["rollout_id"] / "trajectory.json"
    document = json.loads(trial.read_text())
    assert_valid_atif(document)
    osmosis = document["extra"]["osmosis"]
    assert osmosis["status"] == "failed" and osmosis["error_type"] == row["error_type"]
    assert "reward" not in osmosis and osmosis["request_metadata"] == {"mode": "grader_raise"}


def test_a_sample_without_trajectory_messages_gets_no_trajectory_file(tmp_path: Path, scripted: Any) -> None:
    # RolloutSample(trajectory_messages=None) turns trajectory persistence off (anchor-0.3 §3.3).
    server = scripted({"default": {"content": "4"}})
    rows = [{"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "no_trajectory"}}, *calc_rows(1)]
    ws = make_workspace(tmp_path / "ws", rows)
    assert osmosis_run(ws, server)[0] == 0
    off, on = index(ws)
    assert off["status"] == "success" and "trajectory_filename" not in off
    assert on["trajectory_filename"] == "trajectory.json"
    run = ws / ".osmosis/evals/r1"
    assert not (run / "rollout_trials" / off["rollout_id"] / "trajectory.json").exists()
    assert not (run / "trajectories/row_0_run_0.json").exists()
