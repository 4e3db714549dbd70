"""`osmosis_ai.rollout.testing`: the mock TrainGate, served for real and routed in-process."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from osmosis_ai.rollout import OsmosisLLMClient
from osmosis_ai.rollout.config import RolloutSettings
from osmosis_ai.rollout.testing import (
    RolloutCompletionTracker,
    create_mock_trainer_app,
    fake_prompt_token_ids,
    fake_token_ids,
    patch_httpx_for_mock_trainer,
)
from tests.fixtures.rollout_harness import ServerProcess


@pytest.fixture
def mock_trainer() -> Iterator[tuple[str, RolloutCompletionTracker]]:
    tracker = RolloutCompletionTracker()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(
        uvicorn.Config(
            create_mock_trainer_app(tracker), log_level="warning", access_log=False, lifespan="off"
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120  # a hang guard
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", tracker
    server.should_exit = True
    thread.join(timeout=15)


def test_fake_token_ids() -> None:
    assert fake_token_ids("hello") == [0, 1, 2, 3, 4]
    assert fake_token_ids("") == []
    assert fake_prompt_token_ids([]) == list(range(10))
    assert len(fake_prompt_token_ids([{}, {}])) == 20


def test_served_mock_trainer_drives_a_real_rollout_server(
    mock_trainer: tuple[str, RolloutCompletionTracker],
) -> None:
    url, tracker = mock_trainer
    proc = ServerProcess().start()
    try:
        rollout_id = f"mock-{uuid.uuid4().hex[:8]}"
        body = {
            "rollout_id": rollout_id,
            "server_url": url,
            "messages": [{"role": "user", "content": "Please calculate 5 + 3"}],
            "completion_params": {},
        }
        assert httpx.post(f"{proc.url}/v1/rollout/init", json=body, headers=proc.headers()).status_code == 202
        callback = tracker.wait_for(rollout_id)
        assert callback["status"] == "COMPLETED"
        assert [m["role"] for m in callback["final_messages"]] == ["user", "assistant", "tool", "assistant"]
        assert callback["final_messages"][-1]["content"] == "The calculation is complete."
        assert tracker.counts[rollout_id] == 1
        fetched = httpx.get(f"{url}/v1/rollout/completed/{rollout_id}")
        assert fetched.status_code == 200 and fetched.json()["rollout_id"] == rollout_id
        assert httpx.get(f"{url}/v1/rollout/completed/unknown").json() == {}  # 200 and {}, as established
        assert httpx.get(f"{url}/health").json() == {"status": "healthy", "service": "mock-trainer"}
    finally:
        proc.close()
    with pytest.raises(TimeoutError, match="no completion callback for rollout 'never'"):
        tracker.wait_for("never", timeout=0.05)


def test_patched_httpx_reaches_the_mock_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def generator(last_message: dict) -> list[dict] | None:
        calls.append(last_message["role"])
        return None

    app = create_mock_trainer_app(tool_call_generator=generator)
    patch_httpx_for_mock_trainer(app, monkeypatch)

    async def go() -> tuple[str | None, list[int]]:
        async with OsmosisLLMClient(
            "http://trainer.invalid", "in-process", settings=RolloutSettings()
        ) as llm:
            reply = await llm.chat_completions([{"role": "user", "content": "hello"}])
            await llm.complete_rollout("COMPLETED", [reply.message])
            return reply.content, reply.token_ids

    content, token_ids = asyncio.run(go())
    assert content == "OK." and token_ids == [0, 1, 2]
    assert calls == ["user"]
    assert app.state.tracker.get("in-process")["status"] == "COMPLETED"


def test_completion_ids_echo_the_rollout_id_and_tool_calls_are_stable() -> None:
    # Tests written for 0.2.x assert `data["id"] == "test-123"` and the scripted tool call.
    from starlette.testclient import TestClient

    client = TestClient(create_mock_trainer_app())
    hello = client.post("/v1/chat/completions", json={"rollout_id": "test-123", "messages": []}).json()
    assert hello["id"] == "test-123" and hello["choices"][0]["message"]["content"] == "OK."
    add = client.post(
        "/v1/chat/completions",
        json={"rollout_id": "r", "messages": [{"role": "user", "content": "Please add 5 and 3"}]},
    ).json()["choices"][0]["message"]
    assert add["tool_calls"][0]["id"] == "call_mock_add"
    assert add["tool_calls"][0]["function"] == {"name": "add", "arguments": '{"a": 5, "b": 3}'}


@pytest.fixture
def other_server() -> Iterator[str]:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"from": "the real server"}')

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join(timeout=15)


def test_patched_httpx_leaves_other_urls_alone(monkeypatch: pytest.MonkeyPatch, other_server: str) -> None:
    app = create_mock_trainer_app()
    patch_httpx_for_mock_trainer(app, monkeypatch)

    async def go() -> tuple[dict, str]:
        async with httpx.AsyncClient() as http:
            other = (await http.post(f"{other_server}/api/anything", json={})).json()
            mocked = (await http.post(f"{other_server}/v1/chat/completions", json={"rollout_id": "x"})).json()
        return other, mocked["id"]

    other, mocked_id = asyncio.run(go())
    assert other == {"from": "the real server"}
    assert mocked_id == "x"
