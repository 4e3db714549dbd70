"""`osmosis template list|apply`: bundled recipes that validate and run under `osmosis eval run`."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

OSMOSIS = str(Path(sys.executable).with_name("osmosis"))


def osmosis(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}
    return subprocess.run([OSMOSIS, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def workspace(tmp_path: Path) -> Path:
    for folder in ("rollouts", "configs/eval", "configs/training", "data"):
        (tmp_path / folder).mkdir(parents=True)
    return tmp_path


def test_list_names_the_recipes(tmp_path: Path) -> None:
    listed = osmosis(tmp_path, "--json", "template", "list")
    assert listed.returncode == 0, listed.stderr
    names = [item["name"] for item in json.loads(listed.stdout)["items"]]
    assert names == ["multiply-local-openai", "multiply-local-strands"]
    plain = osmosis(tmp_path, "--plain", "template", "list")
    assert plain.stdout.splitlines() == names  # one name per line, as the established CLI prints


@pytest.mark.parametrize(
    ("recipe", "module"), [("multiply-local-openai", "agents"), ("multiply-local-strands", "strands")]
)
def test_apply_validates_and_runs(tmp_path: Path, scripted: Any, recipe: str, module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs the {module} extra")
    ws = workspace(tmp_path / "ws")
    applied = osmosis(ws, "template", "apply", recipe)
    assert applied.returncode == 0, applied.stderr
    checked = osmosis(
        ws, "config", "validate", f"configs/eval/{recipe}.toml", f"configs/training/{recipe}.toml"
    )
    assert checked.returncode == 0, checked.stdout
    server = scripted({"by_prompt": {"3 * 4": [{"content": "12"}]}, "default": {"content": "I am not sure."}})
    ran = osmosis(ws, "--json", "eval", "run", f"configs/eval/{recipe}.toml", "--dataset-file", "data/multiply.jsonl",
                  "--name", "t", "-y", "--base-url", server.base_url)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    metrics = json.loads(ran.stdout)["resource"]["metrics"]
    assert (metrics["total_samples"], metrics["passed"], metrics["failed"]) == (8, 1, 0)
    assert server.requests()[0]["tools"][0]["function"]["name"] == "multiply"


def test_apply_conflicts_unknown_and_shared_data(tmp_path: Path) -> None:
    ws = workspace(tmp_path / "ws")
    assert osmosis(ws, "template", "apply", "multiply-local-openai").returncode == 0
    # The shared data file is identical, so a second recipe applies over it without --force.
    assert osmosis(ws, "template", "apply", "multiply-local-strands").returncode == 0
    again = osmosis(ws, "template", "apply", "multiply-local-openai")
    assert again.returncode != 0 and "rollouts/multiply-local-openai/" in again.stderr
    assert osmosis(ws, "template", "apply", "multiply-local-openai", "--force").returncode == 0
    unknown = osmosis(ws, "template", "apply", "../etc")
    assert unknown.returncode != 0 and "Available templates" in unknown.stderr
