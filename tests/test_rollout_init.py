"""`osmosis rollout init`: the scaffold validates, and `osmosis eval run` runs it against a local model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    assert osmosis(ws, "rollout", "init", "calc", "--force").returncode == 0
    assert not (ws / "rollouts/calc/extra.py").exists()
    assert "mine" in (ws / "data/calc.jsonl").read_text()  # sample data never replaces the user's
    bad = osmosis(ws, "rollout", "init", "Bad_Name")
    assert bad.returncode != 0 and "^[a-z][a-z0-9-]*$" in bad.stderr
    outside = osmosis(tmp_path, "rollout", "init", "calc")
    assert outside.returncode != 0 and "workspace" in outside.stderr
