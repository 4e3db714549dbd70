"""Projects shaped like the documented examples, run with the documented commands against a real local model.

`projects/remote_rollout` has the layout, import lines and `server:agent_loop` attribute of the remote-rollout
example users clone; `projects/git_sync` the `mcp/`, `reward_fn/`, `reward_rubric/` layout of the git-sync
example (both our own code). Each test copies it to a temporary directory and runs the real `osmosis`
command there, against the embedded SmolLM2 server. The 135M model's answers are not asserted, only the
plumbing: every run completes, is scored, and lands where the command says.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse

from tests.fixtures.rollout_harness import FakeTrainer, ServerProcess

PROJECTS = Path(__file__).parent / "projects"
PROJECT = PROJECTS / "remote_rollout"
OSMOSIS = str(Path(sys.executable).parent / "osmosis")
REWARD = "rewards:compute_reward"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "osmosis-remote-rollout-example"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture
def git_sync_project(tmp_path: Path) -> Path:
    root = tmp_path / "osmosis-git-sync-example"
    shutil.copytree(PROJECTS / "git_sync", root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def osmosis(project: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return subprocess.run(
        [OSMOSIS, *args], cwd=project, capture_output=True, text=True, timeout=timeout, env=env
    )


def test_validate(project: Path) -> None:
    result = osmosis(project, "validate", "-m", "server:agent_loop", "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Agent loop 'calculator' validated successfully." in result.stdout
    assert "Tools: 3" in result.stdout


def test_eval_with_base_url(project: Path, local_model: Any) -> None:
    result = osmosis(
        project,
        "eval", "-m", "server:agent_loop", "-d", "test_data.jsonl", "--eval-fn", REWARD,
        "--model", local_model.model, "--base-url", local_model.base_url, "--max-tokens", "16",
        "-o", "results.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    out = json.loads((project / "results.json").read_text())
    runs = [run for row in out["rows"] for run in row["runs"]]
    assert len(runs) == 2 and all(run["success"] for run in runs)
    assert all(set(run["scores"]) == {REWARD} and run["scores"][REWARD] in (0.0, 1.0) for run in runs)


def test_test_mode(project: Path, local_model: Any) -> None:
    result = osmosis(
        project,
        "test", "-m", "server:agent_loop", "-d", "test_data.jsonl",
        "--model", local_model.model, "--base-url", local_model.base_url, "--max-tokens", "16",
        "-o", "test_results.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Row 0: OK" in result.stdout and "Row 1: OK" in result.stdout
    summary = json.loads((project / "test_results.json").read_text())["summary"]
    assert summary["total"] == 2 and summary["passed"] == 2


class LocalModelTrainer(FakeTrainer):
    """A TrainGate stand-in whose completions come from the local model; callbacks are recorded."""

    def __init__(self, model_url: str) -> None:
        super().__init__()
        self.model_url = model_url

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        with self.cond:
            self.completions.append(body)
        keep = ("messages", "temperature", "max_tokens", "stop", "tools")
        forwarded = {key: body[key] for key in keep if body.get(key) is not None}
        async with httpx.AsyncClient(timeout=120) as client:
            reply = await client.post(f"{self.model_url}/chat/completions", json=forwarded)
        return JSONResponse(reply.json(), status_code=reply.status_code)


def test_serve_answers_a_rollout(project: Path, local_model: Any) -> None:
    trainer = LocalModelTrainer(local_model.base_url).start()
    server = ServerProcess("server:agent_loop", api_key="compat-key", cwd=project)
    try:
        server.start()
        health = httpx.get(f"{server.url}/health", timeout=10).json()
        assert health["status"] == "healthy" and health["agent_loop"] == "calculator"
        body = {
            "rollout_id": "compat-rollout-1",
            "server_url": trainer.url,
            "messages": [
                {"role": "system", "content": "You are a calculator. Answer with the number only."},
                {"role": "user", "content": "What is 2 + 2?"},
            ],
            "completion_params": {"temperature": 0.0, "max_tokens": 16},
            "metadata": {"ground_truth": "4"},
        }
        response = httpx.post(
            f"{server.url}/v1/rollout/init", json=body, headers=server.headers(), timeout=30
        )
        assert response.status_code == 202, response.text
        assert [tool["function"]["name"] for tool in response.json()["tools"]] == [
            "add",
            "subtract",
            "multiply",
        ]
        callback = trainer.wait_for_callback("compat-rollout-1", timeout=120)
        assert callback["status"] == "COMPLETED", callback
        assert callback["final_messages"][-1]["role"] == "assistant"
        assert callback["reward"] in (0.0, 1.0)  # computed by the project's @osmosis_reward function
        assert trainer.completions_for("compat-rollout-1")
    finally:
        server.close()
        trainer.stop()


def test_tools_module_runs_calls_through_the_established_helpers() -> None:
    spec = importlib.util.spec_from_file_location("compat_example_tools", PROJECT / "tools.py")
    assert spec is not None and spec.loader is not None
    tools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools)
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'}},
        {"id": "c2", "type": "function", "function": {"name": "multiply", "arguments": '{"a": 3, "b": 4}'}},
        {"id": "c3", "type": "function", "function": {"name": "add", "arguments": "not json"}},
    ]
    results, latency_ms = asyncio.run(tools.run_tool_calls(calls))
    assert [r["tool_call_id"] for r in results] == ["c1", "c2", "c3"]
    assert [r["content"] for r in results[:2]] == ["4.0", "12.0"]
    assert results[2]["content"].startswith("Error: ") and latency_ms >= 0


def test_git_sync_eval_with_an_mcp_folder(git_sync_project: Path, local_model: Any) -> None:
    reward = "reward_fn.compute_reward:numbers_match_reward"
    result = osmosis(
        git_sync_project,
        "eval", "--mcp", "./mcp", "-d", "test_data.jsonl", "--eval-fn", reward,
        "--model", local_model.model, "--base-url", local_model.base_url, "--max-tokens", "16",
        "-o", "results.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    out = json.loads((git_sync_project / "results.json").read_text())
    runs = [run for row in out["rows"] for run in row["runs"]]
    assert len(runs) == 2 and all(run["success"] and set(run["scores"]) == {reward} for run in runs)


@pytest.mark.usefixtures("judge_env")
def test_git_sync_rubric_reward_calls_the_judge(scripted: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    judge = scripted({"default": {"score": 1.0, "explanation": "matches"}})
    monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-compat")
    path = PROJECTS / "git_sync" / "reward_rubric" / "reward_rubric_openai.py"
    spec = importlib.util.spec_from_file_location("compat_reward_rubric_openai", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    score = module.compute_rubric_score_openai("#### 42", "42", {"metadata": {"id": 1}})
    assert score == 1.0 and type(score) is float
    (request,) = judge.requests()
    assert request["model"] == "judge-model"


@pytest.mark.usefixtures("judge_env")
def test_git_sync_rubric_suite_script_through_cli_services(
    scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = scripted({"default": {"score": 0.9, "explanation": "offers a next step"}})
    monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-compat")
    path = PROJECTS / "git_sync" / "reward_rubric" / "reward_rubric.py"
    spec = importlib.util.spec_from_file_location("compat_reward_rubric_suite", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.run_example() == 0.9
    (request,) = judge.requests()
    prompt = request["messages"][-1]["content"]
    assert "concrete next step" in prompt and "reset your password" in prompt and "email" in prompt
