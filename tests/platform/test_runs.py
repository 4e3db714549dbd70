"""`osmosis eval|train submit` for real, and `list|info|logs|stop|download`, against the platform stand-in."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import Run

EVAL_RUN = {
    "id": "eval-77",
    "name": "demo-eval-77",
    "status": "finished",
    "created_at": "2026-11-20T10:00:00+00:00",
    "model": {"id": "m", "model_name": "openai/gpt-5-mini"},
    "dataset": {"id": "d", "file_name": "demo"},
    "rollout": {"id": "r", "name": "demo"},
    "results": {"score": 0.5, "pass_rate": 0.5},
    "metrics": {
        "overview": {"total_samples": 8, "completed_samples": 8, "pass_rate": 0.5},
        "reward_stats": {"mean": 0.5},
        "pass_at_k": [{"k": 1, "value": 0.5}, {"k": 4, "value": 0.9375}],
    },
}


def test_eval_submit_sends_exactly_the_spec_body_and_never_a_secret_in_output(
    workspace: Path,
    platform: Any,
    logged_in: str,
    osmosis: Run,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = workspace / "configs/eval/demo.toml"
    config.write_text(
        config.read_text().replace('["OPENAI_API_KEY"]', '["OPENAI_API_KEY", "HF_TOKEN", "STORED_KEY"]')
    )
    platform.update(
        secrets=[{"id": "s1", "name": "STORED_KEY", "scope": "workspace", "value": "stored-value"}]
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-value-123")
    secrets_file = tmp_path / "run.env"
    secrets_file.write_text("HF_TOKEN='hf-file-value-456'\n")

    code, out, err = osmosis(
        "eval", "submit", "configs/eval/demo.toml", "--yes", "--secrets-file", str(secrets_file), "--json"
    )
    assert code == 0, err
    for secret in ("sk-env-value-123", "hf-file-value-456", logged_in):
        assert secret not in out + err
    result = json.loads(out)
    assert result["status"] == "success" and result["operation"] == "eval.submit"
    resource = result["resource"]
    assert resource["name"].startswith("demo-eval-") and resource["status"] == "pending"
    assert resource["git"]["identity"] == "acme/agents" and resource["workspace_directory"] == str(workspace)
    assert set(result) == {
        "schema_version",
        "status",
        "operation",
        "resource",
        "message",
        "next_steps_structured",
    }
    assert [s["action"] for s in result["next_steps_structured"]] == ["eval_info", "eval_list", "open_url"]

    sent = platform.requests("/api/cli/eval-runs")[-1]
    assert sent["method"] == "POST"
    assert sent["headers"]["x-osmosis-git"] == "acme/agents"
    assert sent["headers"]["authorization"] == f"Bearer {logged_in}"
    assert sent["body"] == {
        "experiment_config": {
            "rollout": "demo",
            "entrypoint": "main.py",
            "model_path": "openai/gpt-5-mini",
            "dataset": "demo",
        },
        "evaluation_config": {
            "n": 1,
            "pass_threshold": 1.0,
            "agent_workflow_timeout_s": 450,
            "grader_timeout_s": 150,
        },
        "secrets": {
            "required": ["OPENAI_API_KEY", "HF_TOKEN", "STORED_KEY"],
            "provided": {"OPENAI_API_KEY": "sk-env-value-123", "HF_TOKEN": "hf-file-value-456"},
        },
    }
    # The evaluation section is the dry run's, key for key: one mapping from config to request.
    code, dry, err = osmosis("eval", "submit", "configs/eval/demo.toml", "--dry-run")
    assert code == 0, err
    assert json.loads(dry)["request"]["json"]["evaluation_config"] == sent["body"]["evaluation_config"]


def test_submit_stops_on_missing_secrets_and_without_yes(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err = osmosis("train", "submit", "configs/training/demo.toml", "--yes")
    assert code == 0, err  # the training config needs no secrets
    assert "Training run submitted" in out

    code, out, err = osmosis("--json", "eval", "submit", "configs/eval/demo.toml", "--yes")
    assert code == 1 and out == ""
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert error["code"] == "INTERACTIVE_REQUIRED" and error["details"]["missing"] == ["OPENAI_API_KEY"]

    monkeypatch.setenv("OPENAI_API_KEY", "sk-x-secret")
    code, out, err = osmosis("eval", "submit", "configs/eval/demo.toml")  # not a terminal, no --yes
    assert code == 1 and "--yes" in err and "sk-x-secret" not in out + err
    assert len(platform.requests("/api/cli/eval-runs")) == 0


def test_submit_not_logged_in_names_both_ways_forward(workspace: Path, osmosis: Run) -> None:
    code, _out, err = osmosis("train", "submit", "configs/training/demo.toml", "--yes")
    assert code == 1 and "osmosis auth login" in err and "OSMOSIS_TOKEN" in err


def test_submit_422_issues_are_listed(workspace: Path, platform: Any, logged_in: str, osmosis: Run) -> None:
    body = {
        "error": "Invalid training config",
        "issues": [
            {"key": "training.lr", "message": "unknown key", "key_correction": "training.learning_rate"}
        ],
    }
    platform.fail("/api/cli/training-runs", 422, method="POST", body=body)
    code, _out, err = osmosis("train", "submit", "configs/training/demo.toml", "-y")
    assert code == 1
    assert (
        "Invalid training config:\n  - training.lr: unknown key (did you mean 'training.learning_rate'?)"
        in err
    )
    # A POST is never retried: one attempt only.
    assert len([r for r in platform.requests("/api/cli/training-runs") if r["method"] == "POST"]) == 1


def test_list_info_logs_stop(workspace: Path, platform: Any, logged_in: str, osmosis: Run) -> None:
    runs = [dict(EVAL_RUN, id=f"eval-{i}", name=f"run-{i}") for i in range(60)]
    runs[0] = EVAL_RUN
    platform.update(
        eval_runs=runs,
        logs={"demo-eval-77": [{"timestamp": "t", "level": "info", "step": 1, "message": "hello"}]},
    )

    code, out, err = osmosis("eval", "list", "--json")
    assert code == 0, err
    page = json.loads(out)
    assert set(page) == {
        "schema_version",
        "items",
        "total_count",
        "has_more",
        "next_offset",
        "git",
        "workspace_directory",
    }
    assert len(page["items"]) == 50 and page["has_more"] is True and page["next_offset"] == 50
    assert (
        page["items"][0]["model"] == "openai/gpt-5-mini" and page["items"][0]["summary"]["avg_reward"] == 0.5
    )

    code, out, err = osmosis("--json", "eval", "list", "--all")
    assert code == 0, err
    page = json.loads(out)
    assert len(page["items"]) == 60 and page["has_more"] is False and page["next_offset"] is None

    code, out, err = osmosis("eval", "list", "--all", "--limit", "5")
    assert code == 1 and "Error: --all and --limit are mutually exclusive." in err  # 0.3: a VALIDATION error
    for command in (("dataset", "list"), ("model", "list"), ("rollout", "list"), ("secret", "list")):
        code, out, err = osmosis("--json", *command, "--all", "--limit", "5")
        assert code == 1 and json.loads(err)["error"]["code"] == "VALIDATION", command
    code, out, err = osmosis("eval", "list", "--limit", "51")
    assert code == 2

    code, out, err = osmosis("--plain", "eval", "list", "--limit", "2")
    assert code == 0 and out.splitlines()[0].split("\t")[:2] == ["demo-eval-77", "finished"]

    code, out, err = osmosis("eval", "info", "demo-eval-77")
    assert code == 0, err
    assert "pass@4" in out and "0.9375" in out
    code, out, err = osmosis("eval", "info", "demo-eval-77", "--json")
    assert set(json.loads(out)) == {"schema_version", "data"}
    data = json.loads(out)["data"]
    assert data["metrics_available"] is True and data["metrics"]["pass_at_k"][1]["k"] == 4

    platform.update(eval_files={"eval-77": {"metrics.json": '{"from": "platform"}'}})
    code, out, err = osmosis("eval", "info", "demo-eval-77", "-o", str(workspace / "m"))
    assert code == 0, err
    assert json.loads((workspace / "m" / "metrics.json").read_text()) == {"from": "platform"}

    code, out, err = osmosis("eval", "logs", "demo-eval-77", "--json")
    assert code == 0 and json.loads(out)["items"][0]["message"] == "hello"

    code, out, err = osmosis("--json", "eval", "info", "nope")
    assert code == 1 and json.loads(err)["error"]["code"] == "NOT_FOUND"

    code, out, err = osmosis("eval", "stop", "demo-eval-77", "--json")
    assert code == 1 and json.loads(err)["error"]["code"] == "INTERACTIVE_REQUIRED"
    code, out, err = osmosis("eval", "stop", "demo-eval-77", "--json", "-y")
    assert code == 0 and json.loads(out)["operation"] == "eval.stop"
    assert platform.state()["eval_runs"][0]["status"] == "stopped"


def test_train_list_and_info(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, tmp_path: Path
) -> None:
    run = {
        "id": "train-1",
        "name": "demo-train",
        "status": "running",
        "model": {"id": "m1", "model_name": "Qwen/Qwen3-8B"},
        "dataset": {"id": "d1", "file_name": "demo"},
        "rollout": {"id": "r1", "name": "demo"},
        "current_step": 3,
        "total_steps": 10,
        "reward": 0.25,
        "metrics": {
            "overview": {
                "latest_step": 3,
                "total_steps": 10,
                "metric_summaries": [{"key": "reward", "title": "Reward", "latest": 0.25}],
            }
        },
    }
    platform.update(training_runs=[run])
    code, out, err = osmosis("train", "info", "demo-train", "--json")
    assert code == 0, err
    assert json.loads(out)["data"]["checkpoints"] is None  # running: no checkpoint lookup
    finished = {
        **run,
        "status": "finished",
        "checkpoints": [{"id": "c1", "checkpoint_name": "step-10", "checkpoint_step": 10, "status": "saved"}],
    }
    platform.update(training_runs=[finished])
    code, out, err = osmosis("train", "info", "demo-train")
    assert code == 0 and "Checkpoint 10: step-10 (saved)" in out
    code, out, err = osmosis("train", "list", "--json")
    assert code == 0, err
    item = json.loads(out)["items"][0]
    assert item["model_name"] == "Qwen/Qwen3-8B" and item["dataset_name"] == "demo"
    assert item["summary"]["progress"] == {"completed": 3, "total": 10, "unit": "steps"}
    code, out, err = osmosis("train", "info", "demo-train", "-o", str(tmp_path / "out") + "/")
    assert code == 0, err
    assert re.search(r"^Reward:\s+0\.25$", out, re.MULTILINE), out
    saved = list((tmp_path / "out").glob("demo-train_*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["overview"]["latest_step"] == 3


def test_retries_429_and_5xx_on_reads_with_retry_after(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    platform.fail(
        "/api/cli/eval-runs", 429, method="GET", headers={"Retry-After": "0"}, body={"error": "slow down"}
    )
    platform.fail("/api/cli/eval-runs", 503, method="GET", headers={"Retry-After": "0"})
    code, _, err = osmosis("eval", "list", "--json")
    assert code == 0, err
    assert len(platform.requests("/api/cli/eval-runs")) == 3

    platform.fail(
        "/api/cli/eval-runs",
        429,
        method="GET",
        times=10,
        headers={"Retry-After": "0"},
        body={"error": "Too many"},
    )
    code, _out, err = osmosis("--json", "eval", "list")
    assert code == 1
    error = json.loads(err)["error"]
    assert error["code"] == "RATE_LIMITED" and error["details"]["status_code"] == 429


def test_error_codes_for_statuses(workspace: Path, platform: Any, logged_in: str, osmosis: Run) -> None:
    cases = [
        (426, {"status": "unsupported", "message": "osmosis-ai 0.1 is too old."}, "UPGRADE_REQUIRED"),
        (
            403,
            {"error": "An active subscription is required", "code": "SUBSCRIPTION_REQUIRED"},
            "SUBSCRIPTION_REQUIRED",
        ),
        (403, {"error": "Billing", "code": "BILLING_REQUIRED"}, "BILLING_REQUIRED"),
        (409, {"error": "exists"}, "CONFLICT"),
        (400, {"error": "bad", "field": "limit"}, "VALIDATION"),
        (404, {"error": "x", "code": "GIT_REPOSITORY_NOT_CONNECTED"}, "NOT_FOUND"),
        (401, {"error": "expired", "code": "TOKEN_EXPIRED"}, "AUTH_REQUIRED"),
    ]
    for status, body, code_name in cases:
        platform.fail("/api/cli/training-runs", status, method="GET", body=body)
        code, _, err = osmosis("--json", "train", "list")
        envelope = json.loads(err)
        assert code == 1 and envelope["error"]["code"] == code_name, (status, err)
        assert set(envelope) == {"schema_version", "command", "cli_version", "error"}
        assert envelope["command"] == "train list"
    code, _, err = osmosis("train", "list")  # the 401 above did not log us out
    assert code == 0, err
    platform.fail(
        "/api/cli/training-runs",
        404,
        method="GET",
        body={"error": "x", "code": "GIT_REPOSITORY_NOT_CONNECTED"},
    )
    code, _out, err = osmosis("train", "list")
    assert "not connected to an Osmosis workspace" in err


def test_eval_download_is_resumable_and_size_checked(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    files = {
        "metrics.json": '{"pass_rate": 0.5}',
        "trajectories/row-0.json": "x" * 5000,
        "logs/run.txt": "log",
    }
    platform.update(eval_runs=[EVAL_RUN], eval_files={"eval-77": files})
    platform.fail("/_storage/evals/eval-77/trajectories", drop=True, status=0)
    code, out, err = osmosis("eval", "download", "demo-eval-77", "--type", "all", "--json")
    assert code == 0, err
    root = workspace / ".osmosis/evals/demo-eval-77"
    assert (root / "trajectories/row-0.json").read_text() == "x" * 5000
    assert not list(root.rglob("*.partial"))
    result = json.loads(out)
    assert sorted(result["resource"]["downloaded"]) == sorted(files)
    code, out, err = osmosis("eval", "download", "demo-eval-77", "--type", "all", "--json")
    assert code == 0 and sorted(json.loads(out)["resource"]["skipped"]) == sorted(files)

    # An interrupted download resumes its .partial file with a Range request.
    target = root / "trajectories/row-0.json"
    target.unlink()
    target.with_name("row-0.json.partial").write_text("x" * 1200)
    code, out, err = osmosis("eval", "download", "demo-eval-77", "--type", "trajectories")
    assert code == 0, err
    assert target.read_text() == "x" * 5000
    assert platform.requests("/_storage/evals/eval-77/trajectories")[-1]["headers"]["range"] == "bytes=1200-"

    code, out, err = osmosis("eval", "download", "demo-eval-77", "--type", "bogus")
    assert code == 1 and "Unknown output type" in err
    code, out, err = osmosis("eval", "download", "demo-eval-77", "--rows", "5-2")
    assert code == 1 and "start is after the end" in err


def test_platform_side_missing_secrets_get_a_way_forward(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # The secrets lookup fails, so the names are left to the platform, which does not have them.
    platform.fail("/api/cli/environment-secrets", 403, method="GET", body={"error": "no access"})
    code, _, err = osmosis("--json", "eval", "submit", "configs/eval/demo.toml", "-y")
    assert code == 1
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert error["code"] == "NOT_FOUND" and error["details"]["missing"] == ["OPENAI_API_KEY"]
    assert "osmosis secret set OPENAI_API_KEY" in error["message"]
