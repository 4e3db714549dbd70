"""`osmosis eval run` end to end: our own 0.3 workspace, the real CLI in a subprocess, a scripted model server."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.eval_run_workspace import LOOP_MAIN, MAIN, calc_rows, make_workspace

OSMOSIS = str(Path(sys.executable).with_name("osmosis"))
MODES = ("wrong_type", "hang", "raise", "no_reward", "nan", "grader_raise")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}


def run_args(server: Any, *extra: str, name: str = "r1") -> list[str]:
    return [
        OSMOSIS, "--json", "eval", "run", "configs/eval/calc.toml", "--dataset-file", "data/calc.jsonl",
        "--name", name, "-y", "--base-url", server.base_url, *extra,
    ]  # fmt: skip


def osmosis_run(ws: Path, server: Any, *extra: str, name: str = "r1") -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        run_args(server, *extra, name=name), cwd=ws, capture_output=True, text=True, timeout=120, env=_env()
    )
    envelope = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    return proc.returncode, envelope, proc.stderr


def index(ws: Path, name: str = "r1") -> list[dict[str, Any]]:
    text = (ws / ".osmosis/evals" / name / "index.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_workspace_runs_and_grades_against_ground_truth(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4", "usage": {"prompt_tokens": 7, "completion_tokens": 3}}})
    ws = make_workspace(tmp_path / "ws", calc_rows(6), n=2)
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    assert envelope["status"] == "success"
    metrics = envelope["resource"]["metrics"]
    # Rows with ground truth "4" pass, those with "5" fail: half the items, as graded, none failed.
    assert (metrics["total_samples"], metrics["passed"], metrics["failed"]) == (12, 6, 0)
    assert metrics["pass_rate"] == 0.5
    assert metrics["tokens_used"] == 12 * 10
    assert [p["k"] for p in metrics["pass_at_k"]] == [1, 2]
    rows = index(ws)
    assert [(r["row_index"], r["run_index"]) for r in rows] == [(i, k) for i in range(6) for k in range(2)]
    assert [r["reward"] for r in rows[::2]] == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    run_dir = ws / ".osmosis/evals/r1"
    assert (run_dir / "summary.jsonl").read_bytes() == (run_dir / "index.jsonl").read_bytes()
    assert json.loads((run_dir / "progress.json").read_text()) == {
        "total_runs": 12, "sampled_rows": 6, "total_dataset_rows": 6,
    }  # fmt: skip
    assert json.loads((run_dir / "metrics.json").read_text())["eval_run"]["status"] == "finished"
    # Every model call went through the bridge with the workflow's own messages.
    sent = server.requests()
    assert len(sent) == 12 and sent[0]["messages"][0] == {
        "role": "system",
        "content": "Answer with a number.",
    }


def test_a_local_server_with_fewer_slots_gets_no_more_rollouts_at_once(tmp_path: Path, scripted: Any) -> None:
    # As eval-rubric's judge calls: llama.cpp's queue wait counts against each call's timeout.
    server = scripted({"default": {"content": "4"}, "props": {"total_slots": 1}})
    ws = make_workspace(tmp_path / "ws", calc_rows(4), n=1)
    code, envelope, stderr = osmosis_run(ws, server, "--max-in-flight", "4")
    assert code == 0, stderr
    notice = (
        f"The server at {server.base_url} has 1 request slot(s): running 1 rollouts at a time instead of 4"
    )
    assert stderr.count(notice) == 1, stderr
    assert envelope["status"] == "success"
    assert len(server.requests()) == 4 and server.most_in_flight() == 1


def test_bad_workflows_and_graders_become_classified_failures(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    modes = [m for m in MODES if m != "hang"]  # its deadline is the test below: no other item races it
    rows = calc_rows(2) + [{"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": m}} for m in modes]
    ws = make_workspace(tmp_path / "ws", rows)
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0, stderr  # spec §4.9: failed items are results; only an incomplete run is partial
    assert envelope["status"] == "success"
    by_mode = {modes[r["row_index"] - 2]: r for r in index(ws) if r["row_index"] >= 2}
    assert {mode: r["error_type"] for mode, r in by_mode.items()} == {
        "wrong_type": "validation_error",
        "raise": "agent_error",
        "no_reward": "validation_error",
        "nan": "validation_error",
        "grader_raise": "agent_error",
    }
    assert all(r["status"] == "failed" and "reward" not in r for r in by_mode.values())  # never a 0 score
    metrics = envelope["resource"]["metrics"]
    assert (metrics["failed"], metrics["graded"], metrics["passed"]) == (5, 2, 1)
    failed = {f["row_index"]: f["error"] for f in envelope["resource"]["failed_rows"]}
    assert "set_reward" in failed[4] and "must return AgentWorkflowOutput" in failed[2]


def test_a_workflow_past_its_deadline_is_a_timeout(tmp_path: Path, scripted: Any) -> None:
    # The only item, so a 1 s deadline cannot catch a healthy item on a loaded machine.
    server = scripted({"default": {"content": "4"}})
    rows = [{"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "hang"}}]
    ws = make_workspace(tmp_path / "ws", rows, agent_timeout=1)
    code, envelope, stderr = osmosis_run(ws, server)
    # Its only item timed out, so nothing was scored: exit 1, saying so, with the item's record kept.
    assert code == 1 and "no run was scored" in stderr, stderr
    [row] = index(ws)
    assert (row["status"], row["error_type"]) == ("failed", "timeout") and "reward" not in row
    [failure] = envelope["resource"]["failed_rows"]
    assert "deadline" in failure["error"]


def test_kill_9_then_the_same_command_resumes_without_loss_or_repeats(tmp_path: Path, scripted: Any) -> None:
    # Rows 8 and on are held by the server (never answered): once the 4 slots all wait on held calls, rows
    # 0-7 are logged and no later one can be, however slow the machine.
    held = {f"(#{i})": [{"hold": True}] for i in range(8, 40)}
    server = scripted({"default": {"content": "4"}, "by_prompt": held})
    ws = make_workspace(tmp_path / "ws", calc_rows(40))
    log = ws / ".osmosis/evals/r1/results.jsonl"
    proc = subprocess.Popen(
        run_args(server), cwd=ws, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env()
    )
    server.wait_held(4)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = len(log.read_bytes().split(b"\n")) - 2  # header, and the final (possibly torn) fragment
    assert before == 8
    server.set_plan({"default": {"content": "4"}})
    code, envelope, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    records = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    keys = [(r["row_index"], r["run_index"]) for r in records]
    assert sorted(keys) == [(i, 0) for i in range(40)]  # each item exactly once
    assert envelope["resource"]["resumed"] == 8 and envelope["resource"]["dispatched"] == 32
    assert len(server.requests()) == 32  # only what was not logged is asked again


def test_fresh_archives_and_rows_selects(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(10))
    assert osmosis_run(ws, server, "--rows", "1,3-4")[0] == 0
    assert [r["source_row_index"] for r in index(ws)] == [1, 3, 4]
    # A different selection under the same name is refused, not mixed in.
    code, _, stderr = osmosis_run(ws, server, "--rows", "2")
    assert code != 0 and "--fresh" in stderr
    assert osmosis_run(ws, server, "--rows", "2", "--fresh")[0] == 0
    assert [r["source_row_index"] for r in index(ws)] == [2]
    assert len(list((ws / ".osmosis/evals").glob("r1.archive-*"))) == 1
    code, _, stderr = osmosis_run(ws, server, "--rows", "3-1")
    assert code != 0 and "1-3" in stderr


def test_retry_failed_reruns_only_failed_items(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    rows = [*calc_rows(2), {"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "raise"}}]
    ws = make_workspace(tmp_path / "ws", rows)
    assert osmosis_run(ws, server)[0] == 0
    code, envelope, _ = osmosis_run(ws, server, "--retry-failed")
    assert code == 0 and envelope["resource"]["dispatched"] == 1
    log = (ws / ".osmosis/evals/r1/results.jsonl").read_text().splitlines()
    assert len(log) == 1 + 4  # header, three items, one retry appended


def test_a_0_2_agent_loop_runs_with_an_eval_fn(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(4))
    (ws / "rollouts/calc/main.py").write_text(LOOP_MAIN)
    code, _, stderr = osmosis_run(ws, server)
    assert code != 0 and "--eval-fn" in stderr
    twice = ("--eval-fn", "rollouts/calc/main.py:exact") * 2
    code, _, stderr = osmosis_run(ws, server, *twice)
    assert code != 0 and "scored by one --eval-fn" in stderr
    code, envelope, stderr = osmosis_run(ws, server, "--eval-fn", "rollouts/calc/main.py:exact")
    assert code == 0, stderr
    assert [r["reward"] for r in index(ws)] == [1.0, 0.0, 1.0, 0.0]
    metrics = envelope["resource"]["metrics"]
    assert metrics["tokens_used"] > 0
    # The eval function's score is the reward every number is read from (finding 1: not "nothing scored").
    assert (metrics["total_samples"], metrics["graded"], metrics["passed"]) == (4, 4, 2)
    assert metrics["pass_rate"] == 0.5 and metrics["reward_stats"]["mean"] == 0.5
    assert metrics["warnings"] == []
    on_disk = json.loads((ws / ".osmosis/evals/r1/metrics.json").read_text())["summary"]
    assert on_disk["pass_rate"] == 0.5


def test_an_eval_fn_beside_a_workflows_grader_is_refused(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(2))
    (ws / "rollouts/calc/scorer.py").write_text(
        "def exact(solution_str, ground_truth, extra_info=None):\n    return 1.0\n"
    )
    code, _, stderr = osmosis_run(ws, server, "--eval-fn", "rollouts/calc/scorer.py:exact")
    assert code != 0 and "scored by its Grader: leave --eval-fn out" in stderr


def test_a_0_2_agent_loop_whose_eval_fn_never_scores_exits_1(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(2))
    boom = "\n\ndef boom(solution_str, ground_truth, extra_info=None):\n    raise ValueError('no')\n"
    (ws / "rollouts/calc/main.py").write_text(LOOP_MAIN + boom)
    code, envelope, _ = osmosis_run(ws, server, "--eval-fn", "rollouts/calc/main.py:boom")
    metrics = envelope["resource"]["metrics"]
    assert code == 1 and (metrics["graded"], metrics["pass_rate"]) == (0, None)
    assert "nothing_scored" in [w["code"] for w in metrics["warnings"]]


def test_an_entrypoint_with_relative_imports_validates_and_runs(tmp_path: Path, scripted: Any) -> None:
    # One importer with package semantics: what `config validate` accepts, `eval run` runs.
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(4))
    (ws / "rollouts/calc/workflow.py").write_text(MAIN)
    (ws / "rollouts/calc/main.py").write_text("from .workflow import CalcGrader, CalcWorkflow\n")
    validate = subprocess.run(
        [OSMOSIS, "config", "validate", "configs/eval/calc.toml"], cwd=ws, capture_output=True, text=True
    )
    assert validate.returncode == 0 and "warning" not in validate.stderr, validate.stdout + validate.stderr
    code, _, stderr = osmosis_run(ws, server)
    assert code == 0, stderr
    assert [r["reward"] for r in index(ws)] == [1.0, 0.0, 1.0, 0.0]


def test_an_entrypoint_that_blocks_at_import_is_stopped_at_the_deadline(
    tmp_path: Path, scripted: Any
) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(2))
    (ws / "rollouts/calc/main.py").write_text("import os\n\nwhile True:\n    pass\n")
    env = {**_env(), "OSMOSIS_IMPORT_TIMEOUT": "1"}
    proc = subprocess.run(
        [a for a in run_args(server) if a != "--json"], cwd=ws, capture_output=True, text=True, env=env
    )
    assert proc.returncode == 1, proc.stderr
    assert (
        "main.py did not finish within 1 s (stopped at " in proc.stderr
        and "main.py:3: while True:" in proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_the_printed_next_command_continues_the_same_run(tmp_path: Path, scripted: Any) -> None:
    # A user copies the "Next:" command: it must carry what decides which run and how it runs (-o, --rows,
    # --base-url, ...), never --fresh (which would archive it) and never the API key itself.
    server = scripted({"default": {"content": "4"}})
    rows = [*calc_rows(3), {"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "raise"}}]
    ws = make_workspace(tmp_path / "ws", rows)
    first = ["-o", "my runs", "--rows", "1-3", "--fresh", "--api-key", "sk-secret-123"]
    code, envelope, stderr = osmosis_run(ws, server, *first)
    assert code == 0, stderr
    assert "finished (1 work item failed)" in envelope["message"]
    (step,) = envelope["next_steps_structured"]
    assert step["action"] == "retry_failed"
    command = step["command"]
    assert "sk-secret-123" not in command and "--fresh" not in command and "--retry-failed" in command
    argv = shlex.split(command)
    assert argv[0] == "osmosis" and argv[argv.index("eval") + 1] == "run"
    argv[argv.index("--api-key") + 1] = "sk-secret-123"  # the user fills in their key
    proc = subprocess.run(
        [OSMOSIS, *argv[1:]], cwd=ws, capture_output=True, text=True, timeout=120, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)["resource"]
    assert again["output_path"] == str(ws / "my runs" / "r1")
    # Only the failed item ran again; the two good ones were carried over.
    assert (again["dispatched"], again["resumed"], again["total_work_items"]) == (1, 2, 3)


def test_after_a_bad_key_stopped_the_run_the_next_command_reruns_what_it_failed(
    tmp_path: Path, scripted: Any
) -> None:
    # The items in flight when the provider refused the key are failed results; the key fixed, the printed
    # command must run them again, not only the items never started.
    refusal = {"status": 401, "body": {"error": {"message": "Incorrect API key", "code": "invalid_api_key"}}}
    server = scripted({"default": refusal})
    ws = make_workspace(tmp_path / "ws", calc_rows(6))
    code, envelope, stderr = osmosis_run(ws, server, "--max-in-flight", "2")
    assert code == 1, stderr  # stopped early: partial
    assert envelope["resource"]["failed"] >= 1
    (step,) = envelope["next_steps_structured"]
    argv = shlex.split(step["command"])
    server.set_plan({"default": {"content": "4"}})  # the key fixed on the same endpoint
    proc = subprocess.run(
        [OSMOSIS, *argv[1:]], cwd=ws, capture_output=True, text=True, timeout=120, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)["resource"]
    assert (again["failed"], again["succeeded"], again["dispatched"]) == (0, 6, 6)


def test_a_failed_rows_multi_line_error_stays_indented_under_its_row(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(
        tmp_path / "ws", [{"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "raise_lines"}}]
    )
    argv = [a for a in run_args(server) if a != "--json"]
    proc = subprocess.run(argv, cwd=ws, capture_output=True, text=True, timeout=120, env=_env())
    # The only item errored: nothing was scored, which is said in one line and exits 1 (issue #28).
    assert proc.returncode == 1, proc.stderr
    assert "Error: reward: no run was scored (1 errored, 0 unscored)" in proc.stderr
    lines = proc.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if "workflow exploded" in line)
    assert lines[first + 1] == "    see the second line"


def test_verbose_prints_a_log_line_per_item_in_place_of_the_bar(tmp_path: Path, scripted: Any) -> None:
    server = scripted({"default": {"content": "4"}})
    rows = [*calc_rows(2), {"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "raise"}}]
    ws = make_workspace(tmp_path / "ws", rows)
    code, _, stderr = osmosis_run(ws, server, "--verbose")
    assert code == 0, stderr
    items = [line for line in stderr.splitlines() if "[item]" in line]
    assert len(items) == 3 and sum("INFO [item] success: reward" in line for line in items) == 2
    assert any("WARNING [item] failed: workflow raised RuntimeError" in line for line in items)
    logged = (ws / ".osmosis/evals/r1/logs.txt").read_text()
    assert all(line in logged for line in items)
    # Counts as they are: 3 items, so up to 3 in flight (batch_size is larger); then one left to retry.
    assert "up to 3 work items in flight" in stderr
    code, _, stderr = osmosis_run(ws, server, "--verbose", "--retry-failed")
    assert "1 of 3 work items pending" in stderr and "up to 1 work item in flight" in stderr


def test_rollout_port_fixes_the_workflows_endpoint_and_a_taken_one_is_an_error(
    tmp_path: Path, scripted: Any
) -> None:
    import socket

    server = scripted({"default": {"content": "4"}})
    ws = make_workspace(
        tmp_path / "ws", [{"user_prompt": "x", "ground_truth": "4", "metadata": {"mode": "url"}}]
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, stderr = osmosis_run(ws, server, "--rollout-port", str(port))
        assert code == 1 and f"--rollout-port {port}: cannot listen" in stderr
    code, _, stderr = osmosis_run(ws, server, "--rollout-port", str(port), name="r2")
    assert code == 0, stderr
    url = (ws / ".osmosis/evals/r2/artifacts/row_0_run_0/url.txt").read_text()
    assert url.startswith(f"http://127.0.0.1:{port}/v1/rollouts/")
    proc = subprocess.run(
        [*run_args(server, "--rollout-port", "9000", name="r3"), "--backend", "ray"],
        cwd=ws, capture_output=True, text=True, timeout=60, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 2 and "--rollout-port applies to the local backend" in proc.stderr


def test_resuming_against_another_endpoint_is_refused(tmp_path: Path, scripted: Any) -> None:
    # Two servers' results in one run would be one number over two models: the endpoint is locked.
    first, other = scripted({"default": {"content": "4"}}), scripted({"default": {"content": "5"}})
    ws = make_workspace(tmp_path / "ws", calc_rows(2))
    assert osmosis_run(ws, first)[0] == 0
    code, _envelope, stderr = osmosis_run(ws, other)
    assert code == 1
    assert "base_url" in stderr and first.base_url in stderr and other.base_url in stderr
    assert other.requests() == []
    assert osmosis_run(ws, first)[0] == 0  # the same endpoint resumes


NO_MODEL_MAIN = """
from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader


class CalcWorkflow(AgentWorkflow):
    async def run(self, ctx):
        return AgentWorkflowOutput(messages=[*ctx.prompt, {"role": "assistant", "content": "4"}])


class CalcGrader(Grader):
    async def grade(self, ctx):
        ctx.set_reward(1.0 if ctx.sample.messages[-1]["content"] == ctx.label else 0.0)
"""


def test_a_missing_provider_key_is_a_warning_for_a_workflow_that_never_calls_the_model(
    tmp_path: Path,
) -> None:
    # 0.3 starts the run and fails at the first model call; a workflow without one simply runs.
    ws = make_workspace(tmp_path / "ws", calc_rows(2))
    (ws / "rollouts/calc/main.py").write_text(NO_MODEL_MAIN)
    args = [
        OSMOSIS,
        "--json",
        "eval",
        "run",
        "configs/eval/calc.toml",
        "--dataset-file",
        "data/calc.jsonl",
        "-y",
    ]
    proc = subprocess.run(args, cwd=ws, capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr
    warning = json.loads(proc.stderr.splitlines()[0])["warning"]
    assert warning["code"] == "MISSING_API_KEY" and "The run starts anyway" in warning["message"]
    assert json.loads(proc.stdout)["resource"]["metrics"]["passed"] == 1
