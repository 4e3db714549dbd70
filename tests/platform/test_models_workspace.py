"""`osmosis model ...`, `rollout list` and `workspace list|current|switch` against the platform stand-in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import Run

BASE = {"id": "b1", "model_name": "Qwen/Qwen3-8B", "base_model": "Qwen/Qwen3-8B", "created_at": "2026-01-01"}
LORA = {
    "id": "l1",
    "model_name": "sums-lora",
    "base_model": "Qwen/Qwen3-8B",
    "training_run_name": "demo-train",
    "checkpoint_step": 40,
    "reward": 0.8,
    "deployment_status": "inactive",
    "created_at": "2026-02-01",
}


def test_model_list_info_deploy(workspace: Path, platform: Any, logged_in: str, osmosis: Run) -> None:
    platform.update(models_base=[BASE], models_lora=[LORA])
    code, out, err = osmosis("model", "list", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert set(result) >= {"schema_version", "base_models", "lora_models", "git", "workspace_directory"}
    assert result["lora_models"]["items"][0]["deployment_status"] == "inactive"
    assert result["max_active_deployments"] == 2
    code, out, err = osmosis("--plain", "model", "list", "--type", "lora")
    assert code == 0 and out.splitlines() == ["sums-lora\tQwen/Qwen3-8B\tdemo-train\t40\tinactive"]
    code, out, err = osmosis("model", "deploy", "sums-lora", "-y", "--json")
    assert code == 0, err
    assert json.loads(out)["resource"]["status"] == "active"
    code, out, err = osmosis("model", "info", "sums-lora")
    assert code == 0 and "active" in out
    code, out, err = osmosis("model", "undeploy", "sums-lora", "-y")
    assert code == 0 and "inactive" in out


def test_rollout_list(workspace: Path, platform: Any, logged_in: str, osmosis: Run) -> None:
    platform.update(
        rollouts=[{"id": "r1", "name": "demo", "is_active": True, "last_synced_commit_sha": "abc1234"}]
    )
    code, out, err = osmosis("rollout", "list", "--branch", "main", "--json")
    assert code == 0, err
    assert json.loads(out)["items"][0]["name"] == "demo"
    assert platform.requests("/api/cli/rollouts")[0]["query"]["branch"] == "main"


def test_workspace_current_list_switch(workspace: Path, platform: Any, logged_in: str, osmosis: Run) -> None:
    code, out, err = osmosis("workspace", "current")
    assert code == 0, err
    assert "Acme (owner)" in out and "acme/agents" in out
    code, out, err = osmosis("workspace", "list", "--plain")
    assert code == 0 and out.splitlines() == ["Acme\towner\tacme/agents"]
    code, out, err = osmosis("workspace", "switch", "Acme")
    assert code == 0 and "Already in workspace Acme" in out
    code, _, err = osmosis("workspace", "switch", "Nope")
    assert code == 1 and "Your workspaces: Acme" in err


def test_workspace_commands_outside_a_repository(
    home: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    code, _, err = osmosis("--json", "workspace", "current")
    assert code == 1 and json.loads(err)["error"]["code"] == "WORKSPACE_REQUIRED"
    code, out, err = osmosis("workspace", "switch", "Acme")
    assert code == 0 and "git clone git@github.com:acme/agents.git" in out
