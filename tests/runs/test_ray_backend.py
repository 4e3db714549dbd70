"""`--backend ray`: the same eval and rubric jobs on a local Ray head (2 CPUs) give the same summaries.

One Ray head serves the whole module (the ``ray_head`` fixture; starting one costs seconds). Every Ray
process stays on this machine; the models are scripted servers on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.cli.main import main

ray = pytest.importorskip("ray")

OSMOSIS = str(Path(sys.executable).parent / "osmosis")
ROWS = 40
RUNS = 2

AGENT = """
from osmosis_ai.rollout import RolloutAgentLoop

class Asker(RolloutAgentLoop):
    name = "asker"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        reply = await ctx.chat(ctx.request.messages, **ctx.request.completion_params)
        return ctx.complete([*ctx.request.messages, reply.message])

agent = Asker()
"""

# `exact` scores the reply; `die_once` kills the process it runs in the first time it sees the answer 3
# while a marker file exists (only the Ray test creates it), as a crashed worker would.
SCORES = """
import os

def exact(solution_str, ground_truth, extra_info=None):
    return 1.0 if solution_str.strip() == ground_truth else 0.0

def die_once(solution_str, ground_truth, extra_info=None):
    marker = os.environ.get("OSMOSIS_TEST_KILL_MARKER", "")
    if solution_str.strip() == "3" and marker and os.path.exists(marker):
        try:
            os.rename(marker, marker + ".used")  # exactly one caller wins
        except OSError:
            pass
        else:
            os._exit(1)
    return 1.0 if solution_str.strip() == ground_truth else 0.0
"""


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted: Any) -> dict[str, Any]:
    """A workspace with an agent, eval functions and a dataset, and a model answering per prompt."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ray_job_agent.py").write_text(AGENT)
    (tmp_path / "ray_job_scores.py").write_text(SCORES)
    with (tmp_path / "data.jsonl").open("w") as out:
        for i in range(ROWS):
            row = {"system_prompt": "Answer.", "user_prompt": f"q-{i}?", "ground_truth": str(i % 3)}
            out.write(json.dumps(row) + "\n")
    # Answers differ per row, so a lost or doubled run changes the statistics.
    plan = {"by_prompt": {f"q-{i}?": [{"content": str(i % 4), "delay": 0.01}] for i in range(ROWS)}}
    return {"dir": tmp_path, "server": scripted(plan)}


def eval_args(job: dict[str, Any], name: str, *extra: str, fn: str = "exact") -> list[str]:
    return [
        "eval", "-m", "ray_job_agent:agent", "-d", "data.jsonl", "--model", "scripted",
        "--base-url", job["server"].base_url, "--api-key", "sk-local", "--eval-fn", f"ray_job_scores:{fn}",
        "--n", str(RUNS), "--batch-size", "4", "--no-preflight", "--max-failure-rate", "1",
        "-o", f"{name}.json", *extra,
    ]  # fmt: skip


def summary_block(stdout: str) -> str:
    """The printed summary from 'Evaluation Results:' up to the log path, without the wall-clock line."""
    block = stdout[stdout.index("Evaluation Results:") : stdout.rindex("Results log:")]
    assert "Total runs:" in block and "Mean" in block, stdout
    return "\n".join(line for line in block.splitlines() if not line.strip().startswith("Duration:"))


def _rounded(value: Any) -> Any:
    # The streaming std merges rows in log order, so its last bit follows the order runs finished in
    # (two local runs with more than one run in flight differ there too); 12 digits are order-free.
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return [_rounded(v) for v in value] if isinstance(value, list) else value


def results_without_timing(path: Path) -> dict[str, Any]:
    """The results file without wall-clock fields; rows in row order (the file lists them as they
    finished, which differs between any two runs with more than one item in flight, local ones too)."""
    data = _rounded(json.loads(path.read_text()))
    data["summary"].pop("total_duration_ms")
    for row in data["rows"]:
        for run in row["runs"]:
            run.pop("duration_ms")
        row["runs"].sort(key=lambda run: run["run_index"])
    data["rows"].sort(key=lambda row: row["row_index"])
    return data


def logged_keys(log: Path) -> list[tuple[int, int]]:
    return [(r["row_index"], r["run_index"]) for r in map(json.loads, log.read_text().splitlines()[1:])]


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def test_eval_on_ray_gives_the_local_summary_byte_for_byte(ray_head, job, capsys) -> None:
    code, local = run_cli(capsys, *eval_args(job, "local", "--log", "local.jsonl"))
    assert code == 0, local
    code, remote = run_cli(
        capsys, *eval_args(job, "ray", "--log", "ray.jsonl", "--backend", "ray", "--ray-workers", "2")
    )
    assert code == 0, remote
    assert summary_block(remote) == summary_block(local)
    assert results_without_timing(job["dir"] / "ray.json") == results_without_timing(
        job["dir"] / "local.json"
    )
    line = next(x for x in remote.splitlines() if x.startswith("Backend ray: 2 workers"))
    spread = [int(n) for n in line.split("items per worker ")[1].split(",")[0].split("/")]
    assert len(spread) == 2 and min(spread) > 0 and sum(spread) == ROWS * RUNS
    assert sorted(logged_keys(job["dir"] / "ray.jsonl")) == sorted(logged_keys(job["dir"] / "local.jsonl"))


def test_a_worker_killed_mid_run_loses_nothing(ray_head, job, capsys, monkeypatch) -> None:
    code, local = run_cli(capsys, *eval_args(job, "local", "--log", "local.jsonl", fn="die_once"))
    assert code == 0, local
    marker = job["dir"] / "kill-marker"
    marker.write_text("")
    monkeypatch.setenv("OSMOSIS_TEST_KILL_MARKER", str(marker))
    args = eval_args(
        job, "ray", "--log", "ray.jsonl", "--backend", "ray", "--ray-workers", "2", fn="die_once"
    )
    code, remote = run_cli(capsys, *args)
    assert code == 0, remote
    assert not marker.exists() and (job["dir"] / "kill-marker.used").exists()  # a worker did die
    assert "worker(s) replaced" in remote and "retried after a lost worker" in remote
    keys = logged_keys(job["dir"] / "ray.jsonl")
    assert len(keys) == len(set(keys)) == ROWS * RUNS, remote
    assert summary_block(remote) == summary_block(local)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_resume_after_a_stopped_driver_continues_where_the_log_ends(ray_head, job, capsys, sig) -> None:
    code, local = run_cli(capsys, *eval_args(job, "local", "--log", "local.jsonl"))
    assert code == 0, local
    # The driver in its own process, on this test's Ray head; stopped mid-run.
    address = ray_head.get_runtime_context().gcs_address
    args = eval_args(job, "part", "--backend", "ray", "--ray-address", address, "--ray-workers", "1")
    log = job["dir"] / "ray.jsonl"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen([OSMOSIS, *args, "--log", str(log)], cwd=job["dir"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 11):
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    proc.send_signal(sig)
    stderr = proc.communicate(timeout=60)[1]
    if sig == signal.SIGINT:  # as on one machine: what finished is kept, and the hint says how to go on
        assert proc.returncode == 130, stderr
        assert f"--resume {log}" in stderr
    else:
        assert proc.returncode == -signal.SIGKILL, stderr
    before = len(logged_keys(log))
    assert 10 <= before < ROWS * RUNS

    resumed = eval_args(job, "resumed", "--backend", "ray", "--ray-workers", "2", "--resume", str(log))
    code, out = run_cli(capsys, *resumed)
    assert code == 0, out
    assert f"Resumed: {before} run(s) kept from the log" in out
    keys = logged_keys(log)
    assert len(keys) == len(set(keys)) == ROWS * RUNS  # nothing lost, nothing run twice
    strip = lambda text: "\n".join(x for x in summary_block(text).splitlines() if "Resumed:" not in x)  # noqa: E731
    assert strip(out) == strip(local)


def test_a_resume_with_nothing_left_starts_no_ray(ray_never_starts, job, capsys) -> None:
    code, first = run_cli(capsys, *eval_args(job, "first", "--log", "done.jsonl"))
    assert code == 0, first
    code, again = run_cli(capsys, *eval_args(job, "again", "--backend", "ray", "--resume", "done.jsonl"))
    assert code == 0, again
    assert f"({ROWS * RUNS} runs already done)" in again and "Backend ray" not in again
    assert len(logged_keys(job["dir"] / "done.jsonl")) == ROWS * RUNS


RUBRIC_CONFIG = """\
version: 1
rubrics:
  - id: polite
    rubric: Give 1.0 if the answer is polite.
    model_info: {provider: openai, model: judge-1, api_key: sk-test}
"""


def test_rubric_on_ray_gives_the_local_report_byte_for_byte(
    ray_head, tmp_path, monkeypatch, scripted, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_EVAL_RESULT_DIR", str(tmp_path / "cache"))
    (tmp_path / "rubric_configs.yaml").write_text(RUBRIC_CONFIG)
    with (tmp_path / "data.jsonl").open("w") as out:
        for i in range(30):
            out.write(json.dumps({"rubric_id": "polite", "solution_str": f"a{i}"}) + "\n")
    server = scripted({"by_prompt": {f"a{i}\n": [{"score": (i % 5) / 4}] for i in range(30)}})
    base = ["eval-rubric", "-r", "polite", "-d", "data.jsonl", "-n", "2", "--base-url", server.base_url]

    def report(text: str) -> list[str]:
        # The report and judge-health lines, without file paths and wall-clock durations.
        skip = ("Wrote ", "Results log:", "Backend ray", "duration:")
        return [x for x in text.splitlines() if not x.strip().startswith(skip)]

    code, local = run_cli(capsys, *base, "-o", "local.json", "--log", "local.jsonl")
    assert code == 0, local
    code, remote = run_cli(capsys, *base, "-o", "ray.json", "--log", "ray.jsonl", "--backend", "ray")
    assert code == 0, remote
    assert report(remote) == report(local)
    assert "Backend ray: 2 workers" in remote
    # Wall-clock fields, and the judge reply's own "created" timestamp.
    timing = ("started_at", "completed_at", "duration_seconds", "generated_at", "duration", "created")

    def without_timing(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: without_timing(v) for k, v in value.items() if k not in timing and "path" not in k}
        return [without_timing(v) for v in value] if isinstance(value, list) else value

    local_json = without_timing(json.loads((tmp_path / "local.json").read_text()))
    ray_json = without_timing(json.loads((tmp_path / "ray.json").read_text()))
    assert ray_json == local_json


def test_a_rubric_resume_with_nothing_left_starts_no_ray(
    ray_never_starts, tmp_path, monkeypatch, scripted, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_EVAL_RESULT_DIR", str(tmp_path / "cache"))
    (tmp_path / "rubric_configs.yaml").write_text(RUBRIC_CONFIG)
    (tmp_path / "data.jsonl").write_text(json.dumps({"rubric_id": "polite", "solution_str": "a"}) + "\n")
    server = scripted({"default": {"score": 1.0}})
    base = ["eval-rubric", "-r", "polite", "-d", "data.jsonl", "-n", "2", "--base-url", server.base_url]
    code, first = run_cli(capsys, *base, "--log", "done.jsonl")
    assert code == 0, first
    code, again = run_cli(capsys, *base, "--resume", "done.jsonl", "--backend", "ray")
    assert code == 0, again
    assert "(2 runs already done)" in again and "Backend ray" not in again


def test_rubric_with_an_unreachable_cluster_fails_before_its_results_log_exists(tmp_path) -> None:
    import socket

    (tmp_path / "rubric_configs.yaml").write_text(RUBRIC_CONFIG)
    (tmp_path / "data.jsonl").write_text(json.dumps({"rubric_id": "polite", "solution_str": "a"}) + "\n")
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(RAY_USAGE_STATS_ENABLED="0", OSMOSIS_EVAL_RESULT_DIR=str(tmp_path / "cache"))
    args = ["eval-rubric", "-r", "polite", "-d", "data.jsonl", "--log", "gone.jsonl", "-o", "out.json",
            "--backend", "ray", "--ray-address", address]  # fmt: skip
    # A guard against a hang, not a timing claim: ray.init alone retries an address for minutes.
    done = subprocess.run(
        [OSMOSIS, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    assert f"No Ray cluster at '{address}'" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "gone.jsonl").exists() and not (tmp_path / "out.json").exists()


RUBRIC_FN = """
from osmosis_ai import osmosis_rubric
from weights import weight  # a sibling of this file: it must travel with it

@osmosis_rubric
def judge(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
    return weight(int(solution_str[1:]))
"""


def test_a_rubric_function_named_by_file_travels_with_its_folder(
    ray_head, tmp_path, monkeypatch, capsys
) -> None:
    import osmosis_ai.runs.ray_backend as ray_backend

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_EVAL_RESULT_DIR", str(tmp_path / "cache"))
    (tmp_path / "rubric_configs.yaml").write_text(RUBRIC_CONFIG)
    folder = tmp_path / "judges"
    folder.mkdir()
    (folder / "fn.py").write_text(RUBRIC_FN)
    (folder / "weights.py").write_text("def weight(i):\n    return (i % 5) / 4\n")
    with (tmp_path / "data.jsonl").open("w") as out:
        for i in range(20):
            out.write(json.dumps({"rubric_id": "polite", "solution_str": f"a{i}"}) + "\n")
    base = ["eval-rubric", "-r", "polite", "-d", "data.jsonl", "-n", "2", "-f", "judges/fn.py:judge"]
    code, local = run_cli(capsys, *base, "-o", "local.json", "--log", "local.jsonl")
    assert code == 0, local

    # Once Ray has the folder, it leaves the driver's path: the workers must import their copy.
    real = ray_backend.runtime_env_for

    def upload_then_hide(modules: list[str], paths: list[str]) -> dict[str, Any]:
        assert paths == [str(folder)] and modules == []
        env = real(modules, paths)
        folder.rename(tmp_path / "hidden")
        return env

    monkeypatch.setattr(ray_backend, "runtime_env_for", upload_then_hide)
    code, remote = run_cli(capsys, *base, "-o", "ray.json", "--log", "ray.jsonl", "--backend", "ray")
    assert code == 0, remote
    assert not folder.exists() and "Backend ray: 2 workers" in remote
    skip = ("Wrote ", "Results log:", "Backend ray", "duration:")
    report = lambda text: [x for x in text.splitlines() if not x.strip().startswith(skip)]  # noqa: E731
    assert report(remote) == report(local)
    summary = lambda name: json.loads((tmp_path / name).read_text())["overall_statistics"]  # noqa: E731
    assert summary("ray.json") == summary("local.json")


def test_a_worker_that_cannot_import_the_agent_stops_with_a_clear_error(
    ray_head, job, capsys, tmp_path
) -> None:
    import asyncio

    from osmosis_ai.eval.remote import AgentExecutorSpec
    from osmosis_ai.runs.backends import BackendError, BackendOptions, start_backend

    spec = AgentExecutorSpec("not_shipped_agent:agent", None, ("ray_job_scores:exact",), {})

    async def start() -> None:
        async with start_backend(
            BackendOptions("ray", ray_workers=1), spec, concurrency=1, item_timeout=None
        ):
            pass

    with pytest.raises(BackendError) as caught:
        asyncio.run(start())
    message = str(caught.value)
    assert "cannot load the job's code" in message and "not_shipped_agent" in message


def test_backend_ray_without_ray_says_how_to_install_it(monkeypatch, capsys) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    code, out = run_cli(capsys, "eval-rubric", "-r", "x", "-d", "missing.jsonl", "--backend", "ray")
    assert code == 1
    assert "pip install 'osmosis-ai[ray]'" in out
