"""`osmosis rollout init`: the scaffold validates, and `osmosis eval run` runs it against a local model server."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from osmosis_ai.rollout.context import AgentWorkflowContext, RolloutContext
from osmosis_ai.scaffold import rollout_scaffold_files

OSMOSIS = str(Path(sys.executable).with_name("osmosis"))


def osmosis(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}
    return subprocess.run([OSMOSIS, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def workspace(tmp_path: Path) -> Path:
    for folder in ("rollouts", "configs/eval", "configs/training", "data"):
        (tmp_path / folder).mkdir(parents=True)
    return tmp_path


def test_rollout_init_validates_and_runs(tmp_path: Path, scripted: Any) -> None:
    ws = workspace(tmp_path / "ws")
    done = osmosis(ws, "--json", "rollout", "init", "calc")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["operation"] == "rollout.init"
    assert set(result["resource"]["files"]) == {
        "rollouts/calc/main.py", "rollouts/calc/pyproject.toml", "rollouts/calc/README.md",
        "configs/eval/calc.toml", "configs/training/calc.toml", "data/calc.jsonl",
    }  # fmt: skip
    checked = osmosis(ws, "config", "validate", "configs/eval/calc.toml", "configs/training/calc.toml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # The submit pre-flight imports the entrypoint in a child Python and finds the workflow and grader.
    dry = osmosis(ws, "eval", "submit", "configs/eval/calc.toml", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    server = scripted({"by_prompt": {"3 * 4": [{"content": "12"}]}, "default": {"content": "no idea"}})
    ran = osmosis(ws, "--json", "eval", "run", "configs/eval/calc.toml", "--dataset-file", "data/calc.jsonl",
                  "--name", "first", "-y", "--base-url", server.base_url)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    metrics = json.loads(ran.stdout)["resource"]["metrics"]
    assert (metrics["total_samples"], metrics["passed"], metrics["failed"]) == (5, 1, 0)


def test_rollout_init_conflicts_and_force(tmp_path: Path) -> None:
    ws = workspace(tmp_path / "ws")
    assert osmosis(ws, "rollout", "init", "calc").returncode == 0
    (ws / "rollouts/calc/extra.py").write_text("x = 1\n")
    (ws / "data/calc.jsonl").write_text('{"user_prompt": "mine", "ground_truth": "1"}\n')
    again = osmosis(ws, "rollout", "init", "calc")
    assert again.returncode != 0 and "rollouts/calc/" in again.stderr and "--force" in again.stderr
    as_json = osmosis(ws, "--json", "rollout", "init", "calc")
    assert json.loads(as_json.stderr)["error"]["code"] == "CONFLICT"  # as 0.3 reports it
    assert osmosis(ws, "rollout", "init", "calc", "--force").returncode == 0
    assert not (ws / "rollouts/calc/extra.py").exists()
    assert "mine" in (ws / "data/calc.jsonl").read_text()  # sample data never replaces the user's
    bad = osmosis(ws, "rollout", "init", "Bad_Name")
    assert bad.returncode != 0 and "^[a-z][a-z0-9-]*$" in bad.stderr
    outside = osmosis(tmp_path, "rollout", "init", "calc")
    assert outside.returncode != 0 and "workspace" in outside.stderr


def _scaffold_workflow(tmp_path: Path) -> Any:
    main = tmp_path / "calc_main.py"
    main.write_text(rollout_scaffold_files("calc")[Path("rollouts/calc/main.py")])
    spec = importlib.util.spec_from_file_location("calc_scaffold_main", main)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CalcWorkflow


def test_the_scaffold_workflow_calls_the_context_client(tmp_path: Path, scripted: Any) -> None:
    """The fast path under `eval run` (answered in-process, no URL, no HTTP), the URL on the platform."""
    workflow = _scaffold_workflow(tmp_path)
    assert "httpx" not in rollout_scaffold_files("calc")[Path("rollouts/calc/main.py")]
    prompt = [{"role": "user", "content": "What is 3 * 4?"}]
    calls: list[tuple[str, Any]] = []

    async def in_process(rollout_id: str, body: Any) -> dict[str, Any]:
        calls.append((rollout_id, body))
        return {"choices": [{"message": {"role": "assistant", "content": "12"}}]}

    async def run(context: RolloutContext) -> Any:
        with context:
            return await workflow().run(AgentWorkflowContext(prompt=prompt))

    local = asyncio.run(run(RolloutContext(rollout_id="r1", in_process=in_process)))
    assert calls == [("r1", {"model": "default", "messages": prompt})]
    assert local.messages[-1]["content"] == "12"
    server = scripted({"default": {"content": "12"}})
    remote = asyncio.run(
        run(RolloutContext(chat_completions_url=server.base_url, api_key="k", rollout_id="r2"))
    )
    assert remote.messages[-1]["content"] == "12"
    assert server.requests()[0]["messages"] == prompt
