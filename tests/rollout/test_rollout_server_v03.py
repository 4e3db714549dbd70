"""`create_rollout_server`: the 0.3 rollout protocol, served by uvicorn in a real process: open by default, as
0.3's (the platform's controller sends no key), a bearer key required when the server is given one."""

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
from tests.atif_check import assert_valid_atif

SERVER = """
import asyncio, os, sys, uvicorn
from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, LocalBackend
from osmosis_ai.rollout.server import ControllerAuth, create_rollout_server

class Echo(AgentWorkflow):
    async def run(self, ctx):
        if (ctx.metadata or {}).get("slow"):
            await asyncio.sleep(30)
        return AgentWorkflowOutput(messages=[*ctx.prompt, {"role": "assistant", "content": "4"}], metrics={"turns": 2.0})

class Exact(Grader):
    async def grade(self, ctx):
        if (ctx.metadata or {}).get("grader_raise"):
            raise ValueError("grader exploded")
        ctx.set_reward(1.0 if ctx.sample.messages[-1]["content"] == ctx.label else 0.0)

root = os.environ["ARTIFACTS"]  # "default": LocalBackend's own (~/.osmosis)
backend = LocalBackend(workflow=Echo, grader=Exact, artifact_root=None if root == "default" else root)
key = os.environ.get("REQUIRE_KEY")
app = create_rollout_server(backend, auth=ControllerAuth(api_key=key) if key else None)
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
# What the callback server answers, by path (default ``{}``): a controller's per-call report (anchor-0.3 §9).
_REPORT = {"model_name": "served-model", "samples": {"any": {"llm_call_metrics": [
    {"prompt_tokens": 12, "completion_tokens": 3, "cost_usd": 0.5, "model_name": "m-7"}]}}}  # fmt: skip
ANSWERS = {
    "/report/completion": {"status": "ok", "trajectory": _REPORT},
    "/report-two/completion": {
        "trajectory": {"samples": {"any": {"llm_call_metrics": [{"prompt_tokens": 1}] * 2}}}
    },
}


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
            answer = json.dumps(ANSWERS.get(self.path, {})).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

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
def keyed_server(tmp_path: Path) -> Iterator[str]:
    yield from _serve(SERVER, tmp_path, REQUIRE_KEY=KEY)


@pytest.fixture
def home_server(tmp_path: Path) -> Iterator[str]:
    yield from _serve(SERVER, tmp_path, ARTIFACTS="default")


@pytest.fixture
def custom_server(tmp_path: Path) -> Iterator[str]:
    yield from _serve(CUSTOM_SERVER, tmp_path)


def _serve(source: str, tmp_path: Path, **extra_env: str) -> Iterator[str]:
    script = tmp_path / "server.py"
    script.write_text(source)
    port = _free_port()
    # OSMOSIS_ROLLOUT_API_KEY is the 0.2 server's key, as a user moving to 0.3 may still have it set: it
    # must not close the 0.3 server to the platform's controller.
    env = {"OSMOSIS_ROLLOUT_API_KEY": "key-of-a-0.2-server", "PATH": "/usr/bin:/bin"}
    env.update({"ARTIFACTS": str(tmp_path / "trials"), "HOME": str(tmp_path / "home"), **extra_env})
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


def test_the_platforms_request_without_a_key_is_served(
    rollout_server: str, callbacks: tuple[str, list[dict[str, Any]]]
) -> None:
    # As 0.3's controller calls a user's server: no Authorization header; its key is in the body.
    callback_url, received = callbacks
    health = httpx.get(rollout_server + "/health").json()
    assert health["status"] == "ok" and health["concurrency"]["max_concurrent"] == 4
    response = httpx.post(rollout_server + "/rollout", json=_graded_rollout("r-1", callback_url))
    assert response.status_code == 202 and response.json() == {}
    _wait_for(received, 2)
    by_path = {r["path"]: r for r in received}
    # The callbacks are what 0.3's RolloutCompleteRequest / GraderCompleteRequest describe.
    assert RolloutCompleteRequest.model_validate(by_path["/completion"]["body"]).rollout_id == "r-1"
    assert GraderCompleteRequest.model_validate(by_path["/grader"]["body"]).sample.reward == 1.0  # type: ignore[union-attr]
    assert by_path["/completion"]["body"]["status"] == "success"
    assert by_path["/completion"]["auth"] == by_path["/grader"]["auth"] == "Bearer ctrl-key"
    grader = by_path["/grader"]["body"]
    assert grader["status"] == "success" and grader["sample"]["reward"] == 1.0
    assert "trajectory_messages" not in grader["sample"]
    status = httpx.get(rollout_server + "/rollout/r-1/status").json()
    assert status == {"rollout_id": "r-1", "status": "success", "reward": 1.0}
    assert RolloutStatusResponse.model_validate(status).reward == 1.0
    assert httpx.get(rollout_server + "/rollout/nope/status").json()["status"] == "unknown"


def test_a_server_given_a_key_refuses_callers_without_it(
    keyed_server: str, callbacks: tuple[str, list[dict[str, Any]]]
) -> None:
    callback_url, received = callbacks
    assert httpx.get(keyed_server + "/health").status_code == 200  # health stays open
    body = _graded_rollout("r-k", callback_url)
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Bearer key-of-a-0.2-server"}):
        refused = httpx.post(keyed_server + "/rollout", json=body, headers=headers)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert (
            httpx.post(keyed_server + "/rollout/cancel", json={"all": True}, headers=headers).status_code
            == 401
        )
    assert httpx.get(keyed_server + "/rollout/r-k/status").status_code == 401
    assert received == []  # nothing ran
    auth = {"Authorization": f"Bearer {KEY}"}
    assert httpx.post(keyed_server + "/rollout", json=body, headers=auth).status_code == 202
    _wait_for(received, 2)
    status = httpx.get(keyed_server + "/rollout/r-k/status", headers=auth).json()
    assert status == {"rollout_id": "r-k", "status": "success", "reward": 1.0}


def test_controller_auth_is_0_3s() -> None:
    from osmosis_ai.rollout.server.auth import ControllerAuth

    assert ControllerAuth().as_bearer_headers() is None and ControllerAuth().api_key is None
    keyed = ControllerAuth(api_key="s3cret")
    assert keyed.as_bearer_headers() == {"Authorization": "Bearer s3cret"}
    assert "s3cret" not in repr(keyed) and repr(ControllerAuth()) == "ControllerAuth(api_key=None)"
    assert keyed.allows("Bearer s3cret") and keyed.allows("bearer s3cret") and not keyed.allows(None)
    assert not keyed.allows("Bearer s3cre") and ControllerAuth().allows(None)


def test_cancel_and_bad_requests(rollout_server: str, callbacks: tuple[str, list[dict[str, Any]]]) -> None:
    callback_url, _ = callbacks
    body = {
        "rollout_id": "slow-1",
        "initial_messages": [{"role": "user", "content": "x"}],
        "metadata": {"slow": True},
        "chat_completions_url": "http://127.0.0.1:9/v1",
        "completion_callback_url": callback_url + "/completion",
    }
    assert httpx.post(rollout_server + "/rollout", json=body).status_code == 202
    assert httpx.post(rollout_server + "/rollout", json={**body, "rollout_id": "a/b"}).status_code == 422
    assert httpx.post(rollout_server + "/rollout", json={**body, "llm_api_key": ""}).status_code == 422
    assert httpx.post(rollout_server + "/rollout/cancel", json={}).status_code == 422
    _wait_for_status(rollout_server, "slow-1", "running")  # cancelled while it runs, not while queued
    response = httpx.post(rollout_server + "/rollout/cancel", json={"ids": ["slow-1", "ghost"]})
    assert response.json() == {"dispositions": {"slow-1": "cancelled_running", "ghost": "not_found"}}
    status = httpx.get(rollout_server + "/rollout/slow-1/status").json()
    assert status["status"] == "cancelled"


def _wait_for_status(server: str, rollout_id: str, wanted: str) -> None:
    deadline = time.monotonic() + 20
    while httpx.get(f"{server}/rollout/{rollout_id}/status").json()["status"] != wanted:
        assert time.monotonic() < deadline, f"{rollout_id} never became {wanted}"
        time.sleep(0.05)


def _archived(tmp_path: Path, rollout_id: str, root: str = "trials") -> dict[str, Any]:
    """The rollout's archived trajectory (written after the callbacks), checked twice."""
    archive = tmp_path / f"{root}/{rollout_id}/trajectory.json"
    deadline = time.monotonic() + 20
    while not archive.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    document = json.loads(archive.read_text())
    assert_valid_atif(document)
    return document


def test_a_finished_rollout_is_archived_as_a_trajectory_file(
    rollout_server: str, callbacks: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    # §3.5: after the callbacks, <artifact root>/<id>/trajectory.json (an ATIF document) is written.
    callback_url, received = callbacks
    body = {**_graded_rollout("r-9", callback_url), "extra_fields": {"row_index": 3, "run_index": 1}}
    assert httpx.post(rollout_server + "/rollout", json=body).status_code == 202
    _wait_for(received, 2)
    document = _archived(tmp_path, "r-9")
    assert (document["session_id"], document["trajectory_id"], document["schema_version"]) == (
        "r-9", "r-9", "ATIF-v1.7",
    )  # fmt: skip
    assert [(s["source"], s["message"]) for s in document["steps"]] == [("user", "2+2"), ("agent", "4")]
    assert document["final_metrics"] == {"total_steps": 2}
    assert document["extra"]["osmosis"] == {
        "rollout_id": "r-9", "label": "4", "reward": 1.0, "sample_metrics": {"turns": 2.0},
        "request_extra_fields": {"row_index": 3, "run_index": 1}, "status": "success",
    }  # fmt: skip


def test_by_default_the_archive_is_under_home_dot_osmosis(
    home_server: str, callbacks: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    # rollout-sdk.md (0.3): "ATIF document per rollout at ~/.osmosis/<rollout_id>/trajectory.json".
    callback_url, received = callbacks
    assert (
        httpx.post(home_server + "/rollout", json=_graded_rollout("r-home", callback_url)).status_code == 202
    )
    _wait_for(received, 2)
    document = _archived(tmp_path, "r-home", root="home/.osmosis")
    assert document["session_id"] == "r-home" and document["extra"]["osmosis"]["reward"] == 1.0


def test_a_callback_answers_report_puts_per_call_metrics_on_the_agent_steps(
    rollout_server: str, callbacks: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    callback_url, received = callbacks
    body = _graded_rollout("r-rep", callback_url + "/report")
    assert httpx.post(rollout_server + "/rollout", json=body).status_code == 202
    _wait_for(received, 2)
    document = _archived(tmp_path, "r-rep")
    agent = document["steps"][-1]
    assert agent["metrics"] == {"prompt_tokens": 12, "completion_tokens": 3, "cost_usd": 0.5}
    assert agent["model_name"] == "m-7" and agent["llm_call_count"] == 1
    assert document["agent"]["model_name"] == "served-model"
    assert document["final_metrics"] == {
        "total_prompt_tokens": 12, "total_completion_tokens": 3, "total_cost_usd": 0.5, "total_steps": 2,
    }  # fmt: skip
    # Two calls for one agent step cannot be attributed: kept aside, still counted in the totals.
    body = _graded_rollout("r-two", callback_url + "/report-two")
    assert httpx.post(rollout_server + "/rollout", json=body).status_code == 202
    _wait_for(received, 4)
    document = _archived(tmp_path, "r-two")
    assert "metrics" not in document["steps"][-1]
    assert document["extra"]["osmosis"]["unmatched_llm_call_metrics"] == [{"prompt_tokens": 1}] * 2
    assert document["final_metrics"] == {"total_prompt_tokens": 2, "total_steps": 2}


def test_a_failed_grade_is_archived_with_its_sample_and_failure(
    rollout_server: str, callbacks: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    callback_url, received = callbacks
    body = {**_graded_rollout("r-bad", callback_url), "metadata": {"grader_raise": True}}
    assert httpx.post(rollout_server + "/rollout", json=body).status_code == 202
    _wait_for(received, 2)
    grader = next(r["body"] for r in received if r["path"] == "/grader")
    assert grader["status"] == "failure"
    osmosis = _archived(tmp_path, "r-bad")["extra"]["osmosis"]
    assert osmosis["status"] == "failure" and osmosis["error_type"] == "validation_error"
    assert osmosis["request_metadata"] == {"grader_raise": True} and "reward" not in osmosis


def test_a_backend_that_implements_only_execute_is_served(
    custom_server: str, callbacks: tuple[str, list[dict[str, Any]]]
) -> None:
    callback_url, received = callbacks
    assert httpx.get(custom_server + "/health").json() == {"status": "ok"}
    body = {**_graded_rollout("c-1", callback_url), "grader_callback_url": None}
    assert httpx.post(custom_server + "/rollout", json=body).status_code == 202
    _wait_for(received, 1)
    assert received[0]["path"] == "/completion" and received[0]["body"]["status"] == "success"
    # Rollouts the server does not run itself: the backend's own (plain, not async) hooks answer.
    elsewhere = httpx.get(custom_server + "/rollout/elsewhere/status").json()
    assert elsewhere == {"rollout_id": "elsewhere", "status": "running"}
    assert httpx.get(custom_server + "/rollout/ghost/status").json()["status"] == "unknown"
    cancel = httpx.post(custom_server + "/rollout/cancel", json={"ids": ["elsewhere", "ghost"]})
    assert cancel.json() == {"dispositions": {"elsewhere": "cancelled_running", "ghost": "not_found"}}
