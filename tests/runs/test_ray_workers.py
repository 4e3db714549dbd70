"""`--backend ray` beyond `eval`: `eval run` workspaces, MCP tool folders shipped to the workers, and user
code that blocks a worker's loop. A local Ray head (2 CPUs, the ``ray_head`` fixture); models are
scripted servers on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_repo import REWARD, make_repo, write, write_rows
from osmosis_ai.cli.main import main
from tests.atif_check import assert_valid_atif
from tests.eval_run_workspace import LOOP_MAIN, MAIN, calc_rows, make_workspace

pytest.importorskip("ray")

OSMOSIS = str(Path(sys.executable).parent / "osmosis")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


# ---- eval run ----------------------------------------------------------------------------------------


def eval_run_args(server: Any, name: str, *extra: str) -> list[str]:
    return [
        "eval", "run", "configs/eval/calc.toml", "--dataset-file", "data/calc.jsonl", "--name", name, "-y",
        "--base-url", server.base_url, "--api-key", "sk-local", *extra,
    ]  # fmt: skip


def results_table(text: str) -> list[str]:
    """The printed results table without wall-clock, path and backend lines."""
    lines = text[text.index("Results") :].splitlines()
    skip = ("Duration:", "Output:", "Backend:")
    return [line for line in lines if line.startswith("  ") and not line.strip().startswith(skip)]


def graded(run_dir: Path) -> list[tuple[Any, ...]]:
    """Each item's outcome from the run's index, in row order (rollout ids and durations differ)."""
    rows = [json.loads(line) for line in (run_dir / "index.jsonl").read_text().splitlines()]
    keys = ("row_index", "run_index", "status", "reward", "tokens", "error_type")
    return sorted(tuple(r.get(k) for k in keys) for r in rows)


def trajectories(run_dir: Path) -> list[dict[str, Any]]:
    """Each item's trajectory (valid ATIF, checked twice) in row order, without its rollout id."""
    rows = [json.loads(line) for line in (run_dir / "index.jsonl").read_text().splitlines()]
    found = []
    for row in sorted(rows, key=lambda r: (r["row_index"], r["run_index"])):
        document = json.loads(
            (run_dir / "rollout_trials" / row["rollout_id"] / "trajectory.json").read_text()
        )
        assert_valid_atif(document)
        found.append({"steps": document["steps"], "final_metrics": document["final_metrics"]})
    return found


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted: Any) -> dict[str, Any]:
    ws = make_workspace(tmp_path / "ws", calc_rows(12), n=2)
    monkeypatch.chdir(ws)
    usage = {"prompt_tokens": 7, "completion_tokens": 3}
    server = scripted({"default": {"content": "4", "usage": usage, "delay": 0.05}})
    return {"dir": ws, "server": server}


@pytest.mark.parametrize("style", ["workflow", "loop"], ids=["0.3-workflow", "0.2-loop-eval-fn"])
def test_eval_run_on_ray_gives_the_local_summary_byte_for_byte(ray_head, workspace, capsys, style) -> None:
    ws, server = workspace["dir"], workspace["server"]
    extra: list[str] = []
    if style == "loop":  # the scorer is named by file: its folder travels to the workers, its name stays
        (ws / "rollouts/calc/main.py").write_text(LOOP_MAIN)
        extra = ["--eval-fn", "rollouts/calc/main.py:exact"]
    code, local = run_cli(capsys, *eval_run_args(server, "local", *extra))
    assert code == 0, local
    args = eval_run_args(server, "ray", *extra, "--backend", "ray", "--ray-workers", "2")
    code, remote = run_cli(capsys, *args)
    assert code == 0, remote
    assert results_table(remote) == results_table(local)
    evals = ws / ".osmosis/evals"
    summary = lambda name: json.loads((evals / name / "metrics.json").read_text())["summary"]  # noqa: E731
    assert summary("ray") == summary("local")
    assert graded(evals / "ray") == graded(evals / "local")
    # The driver lays out what the workers did with the same builder: the same ATIF documents.
    assert trajectories(evals / "ray") == trajectories(evals / "local")
    assert trajectories(evals / "ray")[0]["final_metrics"]["total_prompt_tokens"] == 7
    line = next(x for x in remote.splitlines() if x.strip().startswith("Backend:"))
    spread = [int(n) for n in line.split("items per worker ")[1].split(",")[0].split("/")]
    assert "ray: 2 workers" in line and len(spread) == 2 and sum(spread) == 24 and min(spread) > 0


ENV_MAIN = """
import logging
import os

from osmosis_ai.rollout import AgentWorkflow, Grader, get_rollout_context


class EnvWorkflow(AgentWorkflow):
    async def run(self, ctx):
        logging.getLogger("calc").warning("calling with %s", os.environ.get("CALC_TOKEN"))
        logging.getLogger("calc").warning("bridge key %s", get_rollout_context().api_key)
        print("printed", os.environ.get("CALC_TOKEN"), flush=True)
        seen = f"{os.environ.get('CALC_MODE')}|{os.environ.get('CALC_TOKEN')}"
        return [*ctx.prompt, {"role": "assistant", "content": seen}]


class EnvGrader(Grader):
    async def grade(self, ctx):
        ctx.set_reward(float(ctx.sample.messages[-1]["content"] == "fast|tok-planted-9876"))
"""


def test_an_entrypoint_with_relative_imports_runs_on_ray_workers(ray_head, workspace, capsys) -> None:
    # The workers import the shipped rollout folder as a package, as the driver does.
    calc = workspace["dir"] / "rollouts/calc"
    (calc / "workflow.py").write_text(MAIN)
    (calc / "main.py").write_text("from .workflow import CalcGrader, CalcWorkflow\n")
    args = eval_run_args(
        workspace["server"], "rel", "--backend", "ray", "--ray-workers", "1", "--rows", "0-3"
    )
    code, out = run_cli(capsys, *args)
    assert code == 0, out
    rewards = [item[3] for item in graded(workspace["dir"] / ".osmosis/evals/rel")]
    assert rewards == [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]


def test_eval_run_on_ray_gives_workers_the_env_and_secrets_and_keeps_secrets_out_of_ray_logs(
    ray_head, workspace, capsys, tmp_path, monkeypatch
) -> None:
    # The head started before the secrets file was read: its workers only see what the run sends them.
    ws, server = workspace["dir"], workspace["server"]
    (ws / "rollouts/calc/main.py").write_text(ENV_MAIN)
    config = ws / "configs/eval/calc.toml"
    text = config.read_text().replace("required = []", 'required = ["CALC_TOKEN"]')
    config.write_text(text.replace("[secrets]", '[env]\nCALC_MODE = "fast"\n\n[secrets]'))
    (tmp_path / "secrets.env").write_text("CALC_TOKEN=tok-planted-9876\n")
    for name in ("CALC_TOKEN", "CALC_MODE"):
        monkeypatch.delenv(name, raising=False)  # restored (absent) after the run sets them here
    args = eval_run_args(server, "envs", "--secrets-file", str(tmp_path / "secrets.env"), "--backend", "ray")
    code, out = run_cli(capsys, *args, "--ray-workers", "2", "--rows", "0-3")
    assert code == 0, out
    rows = [json.loads(line) for line in (ws / ".osmosis/evals/envs/index.jsonl").read_text().splitlines()]
    assert [r["reward"] for r in rows] == [1.0] * 8  # every worker saw [env] and the secret
    # What the workflow logged reaches logs.txt as on one machine, masked.
    logged = (ws / ".osmosis/evals/envs/logs.txt").read_text()
    assert logged.count("WARNING [calc] calling with ***") == 8 and "tok-planted-9876" not in logged
    assert logged.count("WARNING [calc] bridge key ***") == 8  # each actor's own bridge token too
    logs = Path(ray_head._private.worker._global_node.get_logs_dir_path())
    leaked = [p.name for p in logs.glob("worker-*") if b"tok-planted-9876" in p.read_bytes()]
    assert leaked == []


def test_eval_run_resumes_on_ray_after_a_killed_driver(ray_head, workspace, capsys) -> None:
    ws, server = workspace["dir"], workspace["server"]
    address = ray_head.get_runtime_context().gcs_address
    args = eval_run_args(server, "r", "--backend", "ray", "--ray-address", address, "--ray-workers", "1")
    log = ws / ".osmosis/evals/r/results.jsonl"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen([OSMOSIS, *args], cwd=ws, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 5):
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    before = len(log.read_bytes().split(b"\n")) - 2  # header, and a possibly torn last line
    assert 4 <= before < 24

    code = main(["--json", *eval_run_args(server, "r", "--backend", "ray", "--ray-workers", "2")])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    resource = json.loads(out)["resource"]
    assert resource["resumed"] == before and resource["dispatched"] == 24 - before
    assert resource["backend"]["workers"] == 2 and sum(resource["backend"]["items_per_worker"]) == 24 - before
    records = [json.loads(line) for line in log.read_text().splitlines()[1:] if line.strip().endswith("}")]
    keys = [(r["row_index"], r["run_index"]) for r in records]
    assert sorted(set(keys)) == [(i, k) for i in range(12) for k in range(2)]


def test_eval_run_with_nothing_left_to_run_starts_no_ray(ray_never_starts, workspace, capsys) -> None:
    server = workspace["server"]
    code, first = run_cli(capsys, *eval_run_args(server, "r"))
    assert code == 0, first
    code, again = run_cli(capsys, *eval_run_args(server, "r", "--backend", "ray"))
    assert code == 0, again
    assert "0 of 24 work items pending" in again and "Backend:" not in again


def test_eval_run_with_an_unreachable_cluster_fails_before_its_run_directory_exists(workspace) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    ws, server = workspace["dir"], workspace["server"]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    args = eval_run_args(server, "gone", "--backend", "ray", "--ray-address", address)
    # A guard against a hang, not a timing claim: ray.init alone retries an address for minutes.
    done = subprocess.run([OSMOSIS, *args], cwd=ws, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert f"No Ray cluster at '{address}'" in done.stderr and "Traceback" not in done.stderr
    assert not (ws / ".osmosis/evals/gone").exists()
    assert not list(ws.rglob("results.jsonl"))


# ---- MCP tool folders --------------------------------------------------------------------------------

PROMPTS = [(f"row-{i:02d}: {i}+{i}?", str(2 * i)) for i in range(6)]


def test_an_mcp_folder_reaches_the_workers_without_the_drivers_path(
    ray_head, scripted, tmp_path, monkeypatch, capsys
) -> None:
    import osmosis_ai.runs.ray_backend as ray_backend

    repo = make_repo(tmp_path / "repo")
    monkeypatch.chdir(repo)
    write_rows(repo / "test_data.jsonl", PROMPTS)
    plan = {
        prompt: [{"tool_calls": [{"name": "twice", "arguments": {"x": i}}]}, {"content": truth}]
        for i, (prompt, truth) in enumerate(PROMPTS)
    }

    def base() -> list[str]:  # a server of its own per run: the plan's replies are used up in order
        server = scripted({"by_prompt": json.loads(json.dumps(plan))})
        return ["eval", "--mcp", "./mcp", "-d", "test_data.jsonl", "--eval-fn", REWARD, "--model", "scripted",
                "--base-url", server.base_url, "--api-key", "sk-local", "--no-preflight", "--max-turns", "3"]  # fmt: skip

    code, local = run_cli(capsys, *base(), "-o", "local.json", "--log", "local.jsonl")
    assert code == 0, local

    # Once Ray has the folder, it disappears from the driver's path: the workers must use their copy.
    real = ray_backend.runtime_env_for

    def upload_then_hide(modules: list[str], paths: list[str]) -> dict[str, Any]:
        env = real(modules, paths)
        shutil.move(repo / "mcp", tmp_path / "hidden-mcp")
        return env

    monkeypatch.setattr(ray_backend, "runtime_env_for", upload_then_hide)
    args = [*base(), "-o", "ray.json", "--log", "ray.jsonl", "--backend", "ray", "--ray-workers", "2"]
    code, remote = run_cli(capsys, *args)
    assert code == 0, remote
    assert not (repo / "mcp").exists()
    block = lambda text: text[text.index("Evaluation Results:") : text.rindex("Results log:")]  # noqa: E731
    strip = lambda text: [x for x in block(text).splitlines() if "Duration:" not in x]  # noqa: E731
    assert strip(remote) == strip(local)
    runs = [json.loads(line) for line in (repo / "ray.jsonl").read_text().splitlines()[1:]]
    assert len(runs) == len(PROMPTS)
    assert all(r["success"] and r["tool_calls"][0]["name"] == "twice" for r in runs), runs
    assert sorted(r["tool_calls"][0]["result"] for r in runs) == sorted(t for _, t in PROMPTS)


def test_a_worker_that_cannot_import_the_mcp_folder_says_which_folder_and_why(ray_head, tmp_path) -> None:
    from osmosis_ai.eval.remote import AgentExecutorSpec
    from osmosis_ai.runs.backends import BackendError, BackendOptions, start_backend

    folder = tmp_path / "tools"
    write(folder / "main.py", "import only_on_the_driver_xyz\n")
    spec = AgentExecutorSpec(None, str(folder), (f"{REWARD}",), {})

    async def start() -> None:
        async with start_backend(
            BackendOptions("ray", ray_workers=1), spec, concurrency=1, item_timeout=None
        ):
            pass

    with pytest.raises(BackendError) as caught:
        asyncio.run(start())
    message = str(caught.value)
    assert "cannot load the job's code" in message
    assert "only_on_the_driver_xyz" in message and str(folder) in message


# ---- user code that blocks a worker ------------------------------------------------------------------

# Each blocking call leaves a file when it ends: none may exist when the run is over, so the run ended
# while user code still blocked its loop or thread (a worker that waited for it would have let it finish).
BLOCKING_AGENT = """
import pathlib
import time
from osmosis_ai.rollout import RolloutAgentLoop

class Blocker(RolloutAgentLoop):
    name = "blocker"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        if "block-agent" in str(ctx.request.messages):
            time.sleep(30)  # blocks the loop it runs on, as careless user code does
            pathlib.Path("{marker}.agent").write_text("")
        reply = await ctx.chat(ctx.request.messages, **ctx.request.completion_params)
        return ctx.complete([*ctx.request.messages, reply.message])

agent = Blocker()
"""

BLOCKING_SCORE = """
import pathlib
import time

def score(solution_str, ground_truth, extra_info=None):
    if ground_truth == "block-score":
        time.sleep(30)
        pathlib.Path("{marker}.score").write_text("")
    return 1.0
"""


def test_user_code_that_blocks_a_worker_is_timed_out_per_item(
    ray_head, scripted, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "woke"
    (tmp_path / "blocking_agent.py").write_text(BLOCKING_AGENT.replace("{marker}", str(marker)))
    (tmp_path / "blocking_score.py").write_text(BLOCKING_SCORE.replace("{marker}", str(marker)))
    rows = [("block-agent", "x"), ("fine-1", "x"), ("fine-2", "block-score"), ("fine-3", "x")]
    write_rows(tmp_path / "data.jsonl", rows)
    server = scripted({"default": {"content": "ok"}})
    args = ["eval", "-m", "blocking_agent:agent", "-d", "data.jsonl", "--eval-fn", "blocking_score:score",
            "--model", "scripted", "--base-url", server.base_url, "--api-key", "sk-local", "--no-preflight",
            "--run-timeout", "2", "--batch-size", "1", "--max-failure-rate", "1", "--log", "ray.jsonl",
            "-o", "ray.json", "--backend", "ray", "--ray-workers", "1"]  # fmt: skip
    code, out = run_cli(capsys, *args)
    assert code == 0, out
    runs = {r["row_index"]: r for r in map(json.loads, (tmp_path / "ray.jsonl").read_text().splitlines()[1:])}
    assert len(runs) == 4
    assert runs[0]["error"] == "Run timed out after 2s" and not runs[0]["success"]
    assert runs[2]["error"] == "Run timed out after 2s" and not runs[2]["success"]
    # One item at a time: the items after a blocked one run on a fresh loop, as on one machine.
    assert runs[1]["success"] and runs[3]["success"], runs
    assert not list(tmp_path.glob("woke.*"))  # the run did not wait for the blocked calls to return


# ---- early stop on a worker --------------------------------------------------------------------------


def test_a_systemic_error_on_a_worker_stops_the_run_early_as_on_one_machine(
    ray_head, scripted, tmp_path, monkeypatch, capsys
) -> None:
    # The agent runs isolated on the worker (a lane); the model answers 404, which every call would
    # repeat: the worker's session stops, the items it did not start come back as not run (not lost,
    # not retried on a new worker), and the driver stops with the reason.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain_agent.py").write_text(BLOCKING_AGENT.replace("{marker}", str(tmp_path / "unused")))
    (tmp_path / "plain_score.py").write_text(BLOCKING_SCORE.replace("{marker}", str(tmp_path / "unused")))
    write_rows(tmp_path / "data.jsonl", [(f"q-{i}", "x") for i in range(3)])
    server = scripted({"default": {"status": 404, "message": "model not found"}})
    args = ["eval", "-m", "plain_agent:agent", "-d", "data.jsonl", "--eval-fn", "plain_score:score",
            "--model", "scripted", "--base-url", server.base_url, "--api-key", "sk-local", "--no-preflight",
            "--n", "5", "--batch-size", "1", "--log", "ray.jsonl", "-o", "ray.json",
            "--backend", "ray", "--ray-workers", "1"]  # fmt: skip
    code, out = run_cli(capsys, *args)
    assert code == 1, out
    summary = json.loads((tmp_path / "ray.json").read_text())["summary"]
    assert summary["stopped_early"] is True and "HTTP 404" in summary["stop_reason"], summary
    assert summary["total_runs"] == 1  # one item at a time: the first failure stops the rest
    logged = (tmp_path / "ray.jsonl").read_text().splitlines()[1:]
    assert len(logged) == 1
    assert "retried" not in out and "replaced" not in out, out


# ---- concurrency on a worker -------------------------------------------------------------------------

# Counts the runs in flight in the worker's process; each run appends the highest count seen so far.
COUNTING_AGENT = """
import asyncio
import os
import threading
from osmosis_ai.rollout import RolloutAgentLoop

_lock = threading.Lock()
_now, _most = [0], [0]

class Counter(RolloutAgentLoop):
    name = "counter"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        with _lock:
            _now[0] += 1
            _most[0] = max(_most[0], _now[0])
        try:
            await asyncio.sleep(0.1)
        finally:
            with _lock:
                _now[0] -= 1
        with open(os.environ["OSMOSIS_TEST_MOST_FILE"], "a") as out:
            out.write(f"{_most[0]}\\n")
        reply = await ctx.chat(ctx.request.messages, **ctx.request.completion_params)
        return ctx.complete([*ctx.request.messages, reply.message])

agent = Counter()
"""


def test_a_worker_runs_batch_size_items_at_once_whatever_the_batches_it_holds(
    ray_head, scripted, tmp_path, monkeypatch, capsys
) -> None:
    # The driver keeps two batches on each actor; with isolated user code they share one session, so
    # --batch-size holds per worker as it does on one machine (it ran twice as many before).
    monkeypatch.chdir(tmp_path)
    most = tmp_path / "most.txt"
    monkeypatch.setenv("OSMOSIS_TEST_MOST_FILE", str(most))
    (tmp_path / "counting_agent.py").write_text(COUNTING_AGENT)
    (tmp_path / "plain_score.py").write_text(BLOCKING_SCORE.replace("{marker}", str(tmp_path / "unused")))
    write_rows(tmp_path / "data.jsonl", [(f"q-{i}", "x") for i in range(40)])
    server = scripted({"default": {"content": "ok"}})
    args = ["eval", "-m", "counting_agent:agent", "-d", "data.jsonl", "--eval-fn", "plain_score:score",
            "--model", "scripted", "--base-url", server.base_url, "--api-key", "sk-local", "--no-preflight",
            "--batch-size", "3", "--log", "ray.jsonl", "-o", "ray.json",
            "--backend", "ray", "--ray-workers", "1"]  # fmt: skip
    code, out = run_cli(capsys, *args)
    assert code == 0, out
    seen = [int(n) for n in most.read_text().split()]
    assert len(seen) == 40 and max(seen) == 3, seen
    assert len((tmp_path / "ray.jsonl").read_text().splitlines()) == 41
