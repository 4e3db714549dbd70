"""`osmosis dev server up|down|list|logs` (hidden) against the platform stand-in."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import GIT_ENV, Run


def _commit(root: Path) -> str:
    env = {**os.environ, **GIT_ENV}
    git = ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
    subprocess.run([*git, "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "rollout"], cwd=root, check=True, env=env)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, check=True, env=env, capture_output=True, text=True
    ).stdout.strip()


def test_up_list_logs_down(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = osmosis("dev", "server", "up", "-y")
    assert code == 1 and "has no main.py" in err  # the workspace root is not a rollout folder
    head = _commit(workspace)
    monkeypatch.chdir(workspace / "rollouts/demo")
    code, out, err = osmosis("dev", "server", "up", "--ttl-hours", "3", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["operation"] == "dev.server.up" and result["resource"]["url"] == "https://dev.test/dev-1"
    sent = platform.requests("/api/cli/dev-rollout-server")[0]["body"]
    assert sent == {
        "rollout_name": "demo",
        "commit_sha": head,
        "repository_path": "rollouts/demo",
        "entrypoint": "main.py",
        "ttl_hours": 3,
    }
    (workspace / "rollouts/demo/main.py").write_text("# edited\n")
    code, _, err = osmosis("--json", "dev", "server", "up", "--no-ttl")
    assert code == 1 and json.loads(err.strip().splitlines()[-1])["error"]["code"] == "INTERACTIVE_REQUIRED"
    code, out, err = osmosis("dev", "server", "up", "--no-ttl", "-y", "--json")
    assert code == 0 and platform.requests("/api/cli/dev-rollout-server")[-1]["body"]["ttl_hours"] is None, (
        err
    )
    code, out, _ = osmosis("dev", "server", "list", "--json")
    assert code == 0 and [s["id"] for s in json.loads(out)["items"]] == ["dev-1", "dev-2"]
    platform.update(logs={"dev-1": [{"timestamp": f"t{i}", "message": f"line {i}"} for i in range(5)]})
    code, out, _ = osmosis("dev", "server", "logs", "dev-1", "-n", "2", "--json")  # --json: NDJSON, no follow
    assert code == 0 and [json.loads(line)["message"] for line in out.splitlines()] == ["line 3", "line 4"]
    code, out, err = osmosis("dev", "server", "logs", "dev-1", "-n", "3")  # default mode: the stream
    assert code == 0, err
    assert out.splitlines() == [
        "t2  line 2",
        "t3  line 3",
        "t4  line 4",
    ]  # heartbeat and broken event skipped
    assert (
        platform.requests("/api/cli/dev-rollout-server/dev-1/logs/stream")[0]["headers"]["accept"]
        == "text/event-stream"
    )
    code, out, err = osmosis("dev", "server", "down", "dev-1", "--json")
    assert code == 0 and json.loads(out)["operation"] == "dev.server.down", err
    assert platform.state()["dev_servers"][0]["status"] == "stopping"
    code, _, err = osmosis("--json", "dev", "server", "logs", "nope")
    assert code == 1 and json.loads(err.strip().splitlines()[-1])["error"]["code"] == "NOT_FOUND"


def test_sigterm_while_following_logs_says_terminated(workspace: Path, platform: Any, logged_in: str) -> None:
    # A platform wait off the run engine: before, SIGTERM ended it without a word (exit -15).
    import signal
    import sys

    server = {"id": "dev-9", "name": "demo", "url": "https://dev.test/dev-9", "status": "running"}
    platform.update(
        dev_servers=[{**server, "expires_at": None, "started_at": "2026-11-26T09:00:00+00:00"}],
        logs={"dev-9": [{"timestamp": "t0", "message": "line 0"}]},
        streams_stay_open=True,
    )
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("osmosis")), "dev", "server", "logs", "dev-9", "--follow"],
        cwd=workspace, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:  # the entry is printed: the command now waits on the open stream
        if "line 0" in line:
            break
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=120)  # a hang guard
    assert proc.returncode == 143, err
    assert err.strip().endswith("Terminated (SIGTERM).") and "Traceback" not in err
