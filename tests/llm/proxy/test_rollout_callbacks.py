"""The rollout server's callbacks: through the proxy the environment names, retried with the package's one
policy (503 with Retry-After, then delivered), on the one client setup."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from servers import ForwardProxy

from .conftest import clean_environment

SERVER = """
import socket, sys, uvicorn
from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, LocalBackend
from osmosis_ai.rollout.server import create_rollout_server

class Echo(AgentWorkflow):
    async def run(self, ctx):
        return AgentWorkflowOutput(messages=[*ctx.prompt, {"role": "assistant", "content": "4"}])

class Exact(Grader):
    async def grade(self, ctx):
        ctx.set_reward(1.0 if ctx.sample.messages[-1]["content"] == ctx.label else 0.0)

app = create_rollout_server(LocalBackend(workflow=Echo, grader=Exact, artifact_root=False))
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(64)  # connections wait in the backlog until uvicorn accepts them
print("READY", sock.getsockname()[1], flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
"""
CALLBACK_HOST = "trainer.proxytest"
KEY = "rollout-key-1"


class _Callbacks:
    """Answers 503 + ``Retry-After: 0`` to the first two posts, 200 afterwards; sets ``done`` at two 200s."""

    def __init__(self) -> None:
        self.received: list[tuple[str, int]] = []
        self.done = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status = 503 if len(outer.received) < 2 else 200
                outer.received.append((self.path, status))
                self.send_response(status)
                if status == 503:
                    self.send_header("Retry-After", "0")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
                if sum(1 for _, s in outer.received if s == 200) == 2:
                    outer.done.set()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def callbacks() -> Iterator[_Callbacks]:
    server = _Callbacks()
    yield server
    server.server.shutdown()


def test_callbacks_go_through_the_proxy_and_are_retried_by_the_one_policy(
    proxy: ForwardProxy, callbacks: _Callbacks, tmp_path: Path
) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    env = clean_environment(HTTP_PROXY=proxy.url, OSMOSIS_ROLLOUT_API_KEY=KEY)
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[1])
        base = f"http://{CALLBACK_HOST}:{callbacks.port}"
        body = {
            "rollout_id": "r-1", "initial_messages": [{"role": "user", "content": "2+2?"}], "label": "4",
            "chat_completions_url": "http://127.0.0.1:9/v1", "controller_api_key": "ctl",
            "completion_callback_url": base + "/completion", "grader_callback_url": base + "/grader",
        }  # fmt: skip
        with httpx.Client(trust_env=False) as client:
            answer = client.post(
                f"http://127.0.0.1:{port}/rollout", json=body, headers={"Authorization": f"Bearer {KEY}"}
            )
        assert answer.status_code == 202, answer.text
        assert callbacks.done.wait(60), callbacks.received
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert [status for _, status in callbacks.received] == [503, 503, 200, 200]
    assert {path for path, status in callbacks.received if status == 200} == {"/completion", "/grader"}
    assert [(e["method"], e["host"]) for e in proxy.log()] == [("POST", CALLBACK_HOST)] * 4
