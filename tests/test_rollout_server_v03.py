"""`create_rollout_server`: the 0.3 rollout protocol, served by uvicorn in a real process, auth on."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from osmosis_ai.rollout.types import GraderCompleteRequest, RolloutCompleteRequest, RolloutStatusResponse

SERVER = """
import asyncio, os, sys, uvicorn
from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, LocalBackend
from osmosis_ai.rollout.server import create_rollout_server

class Echo(AgentWorkflow):
    async def run(self, ctx):
        if (ctx.metadata or {}).get("slow"):
            await asyncio.sleep(30)
        return AgentWorkflowOutput(messages=[*ctx.prompt, {"role": "assistant", "content": "4"}], metrics={"turns": 2.0})

class Exact(Grader):
    async def grade(self, ctx):
        ctx.set_reward(1.0 if ctx.sample.messages[-1]["content"] == ctx.label else 0.0)

backend = LocalBackend(workflow=Echo, grader=Exact, artifact_root=os.environ.get("ARTIFACTS") or False)
app = create_rollout_server(backend)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""
# A backend written against 0.3's ExecutionBackend: only execute() (health is not abstract), its status and
# cancel hooks plain (not async) methods returning 0.3's shapes.
CUSTOM_SERVER = """
import sys, uvicorn
from osmosis_ai.rollout import ExecutionBackend
from osmosis_ai.rollout.server import create_rollout_server
from osmosis_ai.rollout.types import ExecutionResult, RolloutSample, RolloutStatus

class OnlyExecute(ExecutionBackend):
    async def execute(self, request, on_workflow_complete, on_grader_complete=None):
        sample = RolloutSample(messages=[*request.prompt, {"role": "assistant", "content": "done"}])
        await on_workflow_complete(ExecutionResult(status=RolloutStatus.SUCCESS, sample=sample))

    def rollout_status(self, rollout_id):
        return {"status": "running"} if rollout_id == "elsewhere" else None

    def cancel_rollouts(self, ids=None, prefix=None, all=False):
        return {i: "cancelled_running" for i in ids or [] if i == "elsewhere"}

uvicorn.run(create_rollout_server(OnlyExecute()), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""
KEY = "test-server-key"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def callbacks() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()


@pytest.fixture
def rollout_server(tmp_path: Path) -> Iterator[str]:
    yield from _serve(SERVER, tmp_path)


@pytest.fixture
def custom_server(tmp_path: Path) -> Iterator[str]:
    yield from _serve(CUSTOM_SERVER, tmp_path)


def _serve(source: str, tmp_path: Path) -> Iterator[str]:
    script = tmp_path / "server.py"
    script.write_text(source)
    port = _free_port()
    env = {"OSMOSIS_ROLLOUT_API_KEY": KEY, "PATH": "/usr/bin:/bin", "ARTIFACTS": str(tmp_path / "trials")}
    proc = subprocess.Popen([sys.executable, str(script), str(port)], env=env, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health").status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(timeout=15)


def _wait_for(received: list[dict[str, Any]], count: int) -> None:
    deadline = time.monotonic() + 20
    while len(received) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def _graded_rollout(rollout_id: str, callback_url: str) -> dict[str, Any]:
    """A "2+2" rollout with label "4", both callbacks to ``callback_url`` and the controller key."""
    return {
        "rollout_id": rollout_id,
        "initial_messages": [{"role": "user", "content": "2+2"}],
        "label": "4",
        "chat_completions_url": "http://127.0.0.1:9/v1",
        "controller_api_key": "ctrl-key",
        "completion_callback_url": callback_url + "/completion",
        "grader_callback_url": callback_url + "/grader",
    }


def test_rollout_protocol_with_auth(rollout_server: str, callbacks: tuple[str, list[dict[str, Any]]]) -> None:
    callback_url, received = callbacks
    health = httpx.get(rollout_server + "/health").json()
    assert health["status"] == "ok" and health["concurrency"]["max_concurrent"] == 4
    body = _graded_rollout("r-1", callback_url)
    assert httpx.post(rollout_server + "/rollout", json=body).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert httpx.post(rollout_server + "/rollout", json=body, headers=wrong).status_code == 401
    auth = {"Authorization": f"Bearer {KEY}"}
    response = httpx.post(rollout_server + "/rollout", json=body, headers=auth)
    assert response.status_code == 202 and response.json() == {}
    _wait_for(received, 2)
    by_path = {r["path"]: r for r in received}
    # The callbacks are what 0.3's RolloutCompleteRequest / GraderCompleteRequest describe.
    assert RolloutCompleteRequest.model_validate(by_path["/completion"]["body"]).rollout_id == "r-1"
    assert GraderCompleteRequest.model_validate(by_path["/grader"]["body"]).sample.reward == 1.0  # type: ignore[union-attr]
    assert by_path["/completion"]["body"]["status"] == "success"
    assert by_path["/completion"]["auth"] == "Bearer ctrl-key"
    grader = by_path["/grader"]["body"]
    assert grader["status"] == "success" and grader["sample"]["reward"] == 1.0
    assert "trajectory_messages" not in grader["sample"]
    status = httpx.get(rollout_server + "/rollout/r-1/status", headers=auth).json()
    assert status == {"rollout_id": "r-1", "status": "success", "reward": 1.0}
    assert RolloutStatusResponse.model_validate(status).reward == 1.0
    assert httpx.get(rollout_server + "/rollout/nope/status", headers=auth).json()["status"] == "unknown"
    assert httpx.get(rollout_server + "/rollout/r-1/status").status_code == 401


def test_cancel_and_bad_requests(rollout_server: str, callbacks: tuple[str, list[dict[str, Any]]]) -> None:
    callback_url, _ = callbacks
    auth = {"Authorization": f"Bearer {KEY}"}
    body = {
        "rollout_id": "slow-1",
        "initial_messages": [{"role": "user", "content": "x"}],
        "metadata": {"slow": True},
        "chat_completions_url": "http://127.0.0.1:9/v1",
        "completion_callback_url": callback_url + "/completion",
    }
    assert httpx.post(rollout_server + "/rollout", json=body, headers=auth).status_code == 202
    assert (
        httpx.post(rollout_server + "/rollout", json={**body, "rollout_id": "a/b"}, headers=auth).status_code
        == 422
    )
    assert (
        httpx.post(rollout_server + "/rollout", json={**body, "llm_api_key": ""}, headers=auth).status_code
        == 422
    )
    assert httpx.post(rollout_server + "/rollout/cancel", json={}, headers=auth).status_code == 422
    time.sleep(0.2)
    response = httpx.post(rollout_server + "/rollout/cancel", json={"ids": ["slow-1", "ghost"]}, headers=auth)
    assert response.json() == {"dispositions": {"slow-1": "cancelled_running", "ghost": "not_found"}}
    status = httpx.get(rollout_server + "/rollout/slow-1/status", headers=auth).json()
    assert status["status"] == "cancelled"


def test_a_finished_rollout_is_archived_as_a_trajectory_file(
    rollout_server: str, callbacks: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    # §3.5: after the callbacks, <artifact root>/<id>/trajectory.json (an ATIF document) is written.
    callback_url, received = callbacks
    body = {**_graded_rollout("r-9", callback_url), "extra_fields": {"row_index": 3, "run_index": 1}}
    auth = {"Authorization": f"Bearer {KEY}"}
    assert httpx.post(rollout_server + "/rollout", json=body, headers=auth).status_code == 202
    _wait_for(received, 2)
    archive = tmp_path / "trials/r-9/trajectory.json"
    deadline = time.monotonic() + 20
    while not archive.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    document = json.loads(archive.read_text())
    assert document["session_id"] == "r-9" and document["trajectory_id"].split("/")[0] == "r-9"
    assert document["messages"] == [{"role": "user", "content": "2+2"}, {"role": "assistant", "content": "4"}]
    osmosis = document["extra"]["osmosis"]
    assert osmosis["rollout_id"] == "r-9" and osmosis["status"] == "success" and osmosis["reward"] == 1.0
    assert osmosis["request_extra_fields"] == {"row_index": 3, "run_index": 1}
    assert osmosis["label"] == "4" and osmosis["metrics"] == {"turns": 2.0}


def test_a_backend_that_implements_only_execute_is_served(
    custom_server: str, callbacks: tuple[str, list[dict[str, Any]]]
) -> None:
    callback_url, received = callbacks
    assert httpx.get(custom_server + "/health").json() == {"status": "ok"}
    auth = {"Authorization": f"Bearer {KEY}"}
    body = {**_graded_rollout("c-1", callback_url), "grader_callback_url": None}
    assert httpx.post(custom_server + "/rollout", json=body, headers=auth).status_code == 202
    _wait_for(received, 1)
    assert received[0]["path"] == "/completion" and received[0]["body"]["status"] == "success"
    # Rollouts the server does not run itself: the backend's own (plain, not async) hooks answer.
    elsewhere = httpx.get(custom_server + "/rollout/elsewhere/status", headers=auth).json()
    assert elsewhere == {"rollout_id": "elsewhere", "status": "running"}
    assert httpx.get(custom_server + "/rollout/ghost/status", headers=auth).json()["status"] == "unknown"
    cancel = httpx.post(custom_server + "/rollout/cancel", json={"ids": ["elsewhere", "ghost"]}, headers=auth)
    assert cancel.json() == {"dispositions": {"elsewhere": "cancelled_running", "ghost": "not_found"}}
