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
    deadline = time.monotonic() + 20
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
        assert httpx.get(f"{url}/v1/rollout/completed/unknown").status_code == 404
        assert httpx.get(f"{url}/health").json() == {"status": "healthy"}
    finally:
        proc.close()
    with pytest.raises(TimeoutError, match="no completion callback for rollout 'never'"):
        tracker.wait_for("never", timeout=0.05)


def test_patched_httpx_reaches_the_mock_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def generator(messages: list[dict]) -> list[dict] | None:
        calls.append(len(messages))
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
    assert calls == [1]
    assert app.state.tracker.get("in-process")["status"] == "COMPLETED"
