"""`osmosis benchmark list|info|submit` and `osmosis benchmark runs ...` against the platform stand-in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Run

TB = {
    "id": "b-1", "name": "Terminal Bench", "description": "shell tasks", "source_type": "github",
    "source_ref": "terminal-bench", "source_url": "https://example.test/tb", "task_count": 3,
    "category_count": 1, "task_sets": [{"name": "parity", "task_count": 2, "recommended": True}],
    "sync_status": "ready", "synced_task_count": 3, "runner_family": "harbor", "supports_harness": True,
    "requires_harness": False, "requires_judge_model": False, "judge_model_default": None,
    "pass_threshold": 1.0, "categories": [{"name": "shell", "task_count": 3}], "tasks": [],
    "leaderboard": [{"agent": "mini-swe-agent", "pass_at_1": 0.5}],
}  # fmt: skip
HLE = {**TB, "id": "b-2", "name": "HLE", "source_ref": "hle", "leaderboard": []}
RUN = {
    "id": "br-1", "name": "tb-run", "status": "running", "benchmark": {"id": "b-1", "name": "Terminal Bench"},
    "agent_count": 1, "best_pass_at_1": 0.5, "ingested_results": 1, "expected_results": 3,
    "created_at": "2026-11-25T12:00:00+00:00", "creator_name": "Ada Lovelace",
}  # fmt: skip
CONFIG = """[experiment]
benchmark = "terminal-bench"

[tasks]
task_set = "parity"

[[agents]]
harness = "mini-swe-agent"

[agents.model]
type = "provider"
model = "openai/gpt-5-mini"
api_key_secret = "OPENAI_API_KEY"

[secrets]
required = ["HF_TOKEN"]
"""


@pytest.fixture
def catalog(platform: Any) -> None:
    other = {**RUN, "id": "br-2", "name": "hle-run", "benchmark": {"id": "b-2", "name": "HLE"}}
    platform.update(benchmarks=[TB, HLE], benchmark_runs=[RUN, other])


def test_list_and_info(workspace: Path, platform: Any, logged_in: str, osmosis: Run, catalog: None) -> None:
    code, out, err = osmosis("benchmark", "list", "--json")
    assert code == 0, err
    items = json.loads(out)["items"]
    assert [(b["key"], b["task_count"]) for b in items] == [("terminal-bench", 3), ("hle", 3)]
    code, out, err = osmosis("benchmark", "info", "terminal-bench", "--json")
    assert code == 0, err
    data = json.loads(out)["data"]
    assert data["benchmark"]["runner_family"] == "harbor" and data["leaderboard"][0]["pass_at_1"] == 0.5
    assert [r["name"] for r in data["runs"]] == ["tb-run"]  # only this benchmark's runs
    assert platform.requests("/api/cli/benchmark-runs")[-1]["query"]["benchmark"] == "b-1"
    code, out, _ = osmosis("benchmark", "info", "terminal-bench")
    assert code == 0 and "Key:" in out and "parity (2)" in out and "#1 mini-swe-agent" in out
    code, _, err = osmosis("--json", "benchmark", "info", "nope")
    assert code == 1 and json.loads(err.strip().splitlines()[-1])["error"]["code"] == "NOT_FOUND"
    code, _, err = osmosis("benchmark", "list", "--all", "--limit", "5")
    assert code == 1 and "mutually exclusive" in err  # a VALIDATION error, as 0.3


def _config(workspace: Path, text: str = CONFIG) -> str:
    (workspace / "configs/benchmark").mkdir(exist_ok=True)
    (workspace / "configs/benchmark/tb.toml").write_text(text)
    return "configs/benchmark/tb.toml"


def test_submit_sends_the_config_and_the_secrets(
    workspace: Path,
    platform: Any,
    logged_in: str,
    osmosis: Run,
    catalog: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    platform.update(secrets=[{"id": "s-1", "name": "OPENAI_API_KEY", "scope": "user", "value": "sk-stored"}])
    path = _config(workspace)
    monkeypatch.setenv("HF_TOKEN", "hf-per-run")
    code, _, err = osmosis("--json", "benchmark", "submit", path)
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert code == 1 and error["code"] == "INTERACTIVE_REQUIRED"
    assert platform.requests("/api/cli/benchmark-runs") == []
    code, out, err = osmosis("benchmark", "submit", path, "-y", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["operation"] == "benchmark.submit" and result["resource"]["task_count"] == 3
    body = next(r for r in platform.requests("/api/cli/benchmark-runs") if r["method"] == "POST")["body"]
    assert body["experiment_config"] == {"benchmark": "terminal-bench"}
    assert body["tasks_config"] == {"task_set": "parity"}
    assert body["agents"][0]["model"] == {
        "type": "provider",
        "model": "openai/gpt-5-mini",
        "api_key_secret": "OPENAI_API_KEY",
    }
    assert body["secrets"] == {
        "required": ["OPENAI_API_KEY", "HF_TOKEN"],
        "provided": {"HF_TOKEN": "hf-per-run"},
    }
    assert "hf-per-run" not in out + err


def test_submit_checks_the_config_before_any_request(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    path = _config(workspace, CONFIG.replace('type = "provider"', 'type = "local"'))
    code, _, err = osmosis("benchmark", "submit", path, "-y")
    assert code == 1 and "tb.toml:11:8: agents[0].model.type" in err
    (workspace / "configs/eval/tb.toml").write_text(CONFIG)
    code, _, err = osmosis("benchmark", "submit", "configs/eval/tb.toml", "-y")
    assert code == 1 and "configs/benchmark/" in err
    path = _config(workspace, CONFIG + '[env]\nOPENAI_API_KEY = "x"\n')
    code, _, err = osmosis("benchmark", "submit", path, "-y")
    assert code == 1 and "the platform injects the secret under that name" in err
    assert platform.requests("/api/") == [r for r in platform.requests("/api/") if "verify" in r["path"]]


def test_runs_list_info_logs_stop_download(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, catalog: None
) -> None:
    files = {"summary.csv": "agent,pass\nx,0.5\n", "results.csv": "task,ok\n1,1\n", "logs.txt": "log\n"}
    platform.update(
        benchmark_files={"br-1": files}, logs={"tb-run": [{"message": f"m{i}"} for i in range(3)]}
    )
    code, out, err = osmosis("benchmark", "runs", "list", "--json")
    assert code == 0, err
    item = json.loads(out)["items"][0]
    assert {k for k in item if k != "progress"} == {
        "id", "name", "status", "benchmark_id", "benchmark_name", "agent_count", "best_pass_at_1",
        "ingested_results", "expected_results", "creator_name", "creator_email", "created_at", "started_at",
        "completed_at", "platform_url",
    }  # fmt: skip
    assert item["benchmark_name"] == "Terminal Bench" and item["progress"] == {
        "completed": 1,
        "total": 3,
        "unit": "results",
    }
    code, out, _ = osmosis("benchmark", "runs", "list")
    assert code == 0 and "1/3" in out
    code, out, err = osmosis("benchmark", "runs", "info", "tb-run", "--json")
    assert code == 0 and json.loads(out)["data"]["benchmark_run"]["benchmark_id"] == "b-1", err
    code, out, _ = osmosis("benchmark", "runs", "logs", "tb-run", "--limit", "2", "--json")
    assert code == 0 and json.loads(out)["next_cursor"] == "2"
    code, out, err = osmosis("benchmark", "runs", "download", "tb-run", "--json")
    assert code == 0, err
    root = workspace / ".osmosis/benchmarks/tb-run"
    assert (root / "summary.csv").read_text() == files["summary.csv"] and not (root / "logs.txt").exists()
    assert json.loads(out)["operation"] == "benchmark.download"
    code, _, err = osmosis("benchmark", "runs", "download", "tb-run", "--type", "bogus")
    assert code == 1 and "summary, results, artifacts, logs" in err
    code, out, err = osmosis("benchmark", "runs", "stop", "tb-run", "-y", "--json")
    assert code == 0 and json.loads(out)["operation"] == "benchmark.stop", err
    assert platform.state()["benchmark_runs"][0]["status"] == "stopped"
    platform.update(benchmark_runs=[{**RUN, "status": "queued"}])
    code, _, err = osmosis("--json", "benchmark", "runs", "download", "tb-run")
    assert code == 1 and json.loads(err.strip().splitlines()[-1])["error"]["code"] == "CONFLICT"
