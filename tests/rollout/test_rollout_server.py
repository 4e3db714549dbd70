"""The rollout server end to end: `osmosis serve` in a subprocess, a fake TrainGate on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import pathlib
import signal
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.fixtures.rollout_harness import FakeTrainer, ServerProcess, rollout_body


@pytest.fixture(scope="module")
def trainer() -> Iterator[FakeTrainer]:
    fake = FakeTrainer().start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    yield proc
    proc.close()


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def init(
    server: ServerProcess, body: dict[str, Any], headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.post(
        f"{server.url}/v1/rollout/init", json=body, headers=server.headers() if headers is None else headers
    )


def settled_status(server: ServerProcess, rollout_id: str) -> dict[str, Any]:
    """The rollout's status once it has left the active states.

    The trainer holds the callback before the server has read the trainer's answer, so right after
    ``wait_for_callback`` the record may still say ``reporting`` for a moment.
    """
    url = f"{server.url}/v1/rollout/status/{rollout_id}"
    for _ in range(300):
        status = httpx.get(url, headers=server.headers()).json()
        if status["state"] not in ("queued", "running", "reporting"):
            return status
        asyncio.run(asyncio.sleep(0.05))
    return status


def test_full_rollout_with_a_tool_call(server: ServerProcess, trainer: FakeTrainer) -> None:
    rollout_id = new_id("full")
    response = init(server, rollout_body(trainer, rollout_id))
    assert response.status_code == 202
    init_body = response.json()
    assert init_body["rollout_id"] == rollout_id
    assert [t["function"]["name"] for t in init_body["tools"]] == ["add"]
    assert init_body["tools"][0]["function"]["parameters"]["required"] == ["a", "b"]

    callback = trainer.wait_for_callback(rollout_id)
    assert callback["status"] == "COMPLETED"
    assert callback["finish_reason"] == "stop"
    assert callback["reward"] == 1.0
    roles = [m["role"] for m in callback["final_messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert callback["final_messages"][3] == {"role": "tool", "content": "8", "tool_call_id": "call_1"}
    assert callback["final_messages"][4]["content"] == "The sum is 8."
    metrics = callback["metrics"]
    assert (metrics["num_llm_calls"], metrics["num_tool_calls"]) == (2, 1)
    assert (metrics["prompt_tokens"], metrics["response_tokens"]) == (20 + 40, 10)
    assert metrics["total_latency_ms"] >= metrics["llm_latency_ms"] > 0
    assert trainer.callback_auth[rollout_id] == ["Bearer trainer-secret"]

    completions = trainer.completions_for(rollout_id)
    assert len(completions) == 2
    # Full history every turn, the request's sampling parameters, and no tools field.
    assert [len(c["messages"]) for c in completions] == [2, 4]
    assert completions[0]["temperature"] == 0.0 and completions[0]["max_tokens"] == 64
    assert "tools" not in completions[0]


def test_health_is_open_and_reports_counts(server: ServerProcess) -> None:
    body = httpx.get(f"{server.url}/health").json()
    assert body["status"] == "healthy" and body["agent_loop"] == "scenario"
    assert {"active_rollouts", "completed_rollouts"} <= body.keys()


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-key"},
        {"Authorization": "wrong-key"},
        {"Authorization": "Basic test-key"},
    ],
    ids=["missing", "wrong", "wrong-raw-key", "other-scheme"],
)
def test_init_refuses_bad_credentials_before_reading_the_body(
    server: ServerProcess, trainer: FakeTrainer, headers: dict[str, str]
) -> None:
    rollout_id = new_id("auth")
    response = init(server, rollout_body(trainer, rollout_id), headers)
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid or missing API key"}
    assert response.headers["www-authenticate"] == "Bearer"
    garbage = httpx.post(f"{server.url}/v1/rollout/init", content=b"{not json", headers=headers)
    assert garbage.status_code == 401  # not 422: the schema is not revealed without a key
    assert trainer.completions_for(rollout_id) == []


def test_right_key_with_any_bearer_case_is_accepted(server: ServerProcess, trainer: FakeTrainer) -> None:
    rollout_id = new_id("case")
    response = init(server, rollout_body(trainer, rollout_id), {"Authorization": "bearer test-key"})
    assert response.status_code == 202
    trainer.wait_for_callback(rollout_id)


def test_the_bare_key_is_accepted_as_the_established_server_does(
    server: ServerProcess, trainer: FakeTrainer
) -> None:
    rollout_id = new_id("bare")
    response = init(server, rollout_body(trainer, rollout_id), {"Authorization": "test-key"})
    assert response.status_code == 202
    trainer.wait_for_callback(rollout_id)
    assert (
        httpx.get(f"{server.url}/platform/health", headers={"Authorization": "test-key"}).status_code == 200
    )


def test_invalid_body_with_a_key_gets_422_naming_the_field(
    server: ServerProcess, trainer: FakeTrainer
) -> None:
    body = rollout_body(trainer, "  ")
    response = init(server, body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail[0]["loc"] == ["rollout_id"] and "whitespace" in detail[0]["msg"]
    bad_json = httpx.post(f"{server.url}/v1/rollout/init", content=b"{oops", headers=server.headers())
    assert bad_json.status_code == 422


def test_platform_health_needs_the_key(server: ServerProcess) -> None:
    assert httpx.get(f"{server.url}/platform/health").status_code == 401
    ok = httpx.get(f"{server.url}/platform/health", headers=server.headers())
    assert ok.status_code == 200 and ok.json()["agent_loop"] == "scenario"


def test_repeated_init_runs_the_rollout_once(server: ServerProcess, trainer: FakeTrainer) -> None:
    rollout_id = new_id("idem")
    body = rollout_body(trainer, rollout_id, metadata={"sleep": 0.3})

    async def burst() -> list[httpx.Response]:
        async with httpx.AsyncClient(headers=server.headers()) as client:
            url = f"{server.url}/v1/rollout/init"
            return list(await asyncio.gather(*(client.post(url, json=body) for _ in range(8))))

    responses = asyncio.run(burst())
    assert {r.status_code for r in responses} == {202}
    assert len({r.content for r in responses}) == 1
    trainer.wait_for_callback(rollout_id)
    late = init(server, body)  # after completion, within the TTL
    assert late.status_code == 202 and late.content == responses[0].content
    status = settled_status(server, rollout_id)
    assert status["state"] == "completed" and status["status"] == "COMPLETED"
    # A later rollout finishing proves the server had time to (wrongly) run the duplicate.
    marker = new_id("marker")
    init(server, rollout_body(trainer, marker))
    trainer.wait_for_callback(marker)
    assert len(trainer.callbacks[rollout_id]) == 1
    assert trainer.callback_attempts[rollout_id] == 1
    assert len(trainer.completions_for(rollout_id)) == 2


def test_idempotency_key_overrides_the_rollout_id(server: ServerProcess, trainer: FakeTrainer) -> None:
    key = new_id("key")
    first, second = new_id("a"), new_id("b")
    assert init(server, rollout_body(trainer, first, idempotency_key=key)).status_code == 202
    repeat = init(server, rollout_body(trainer, second, idempotency_key=key))
    assert repeat.status_code == 202 and repeat.json()["rollout_id"] == first
    trainer.wait_for_callback(first)
    marker = new_id("marker")
    init(server, rollout_body(trainer, marker))
    trainer.wait_for_callback(marker)
    assert trainer.callbacks.get(second) is None


def test_callback_is_retried_on_5xx(server: ServerProcess, trainer: FakeTrainer) -> None:
    rollout_id = new_id("retry")
    trainer.callback_failures[rollout_id] = [503, 500]
    assert init(server, rollout_body(trainer, rollout_id, content="hello")).status_code == 202
    callback = trainer.wait_for_callback(rollout_id)
    assert callback["status"] == "COMPLETED"
    assert trainer.callback_attempts[rollout_id] == 3
    assert len(trainer.callbacks[rollout_id]) == 1


def test_result_trainer_never_accepts_is_kept_readable(server: ServerProcess, trainer: FakeTrainer) -> None:
    rollout_id = new_id("lost")
    trainer.callback_failures[rollout_id] = [503, 503, 503]  # default: 2 retries, so 3 attempts all fail
    assert init(server, rollout_body(trainer, rollout_id, content="hello")).status_code == 202
    url = f"{server.url}/v1/rollout/status/{rollout_id}"
    status = settled_status(server, rollout_id)
    assert status["state"] == "callback_failed"
    assert status["undelivered_result"]["status"] == "COMPLETED"
    assert status["undelivered_result"]["final_messages"][-1]["content"] == "OK."
    assert trainer.callback_attempts[rollout_id] == 3
    assert httpx.get(url).status_code == 401


def test_agent_that_raises_is_reported_as_error(server: ServerProcess, trainer: FakeTrainer) -> None:
    rollout_id = new_id("raise")
    assert (
        init(server, rollout_body(trainer, rollout_id, metadata={"raise": "agent exploded"})).status_code
        == 202
    )
    callback = trainer.wait_for_callback(rollout_id)
    assert callback["status"] == "ERROR"
    assert callback["finish_reason"] == "error"
    assert callback["error_message"] == "RuntimeError: agent exploded"
    assert callback["final_messages"] == []


def test_agent_returning_the_wrong_type_is_reported(server: ServerProcess, trainer: FakeTrainer) -> None:
    rollout_id = new_id("badret")
    init(server, rollout_body(trainer, rollout_id, metadata={"bad_return": True}))
    callback = trainer.wait_for_callback(rollout_id)
    assert callback["status"] == "ERROR"
    assert (
        "must return a RolloutResult" in callback["error_message"] and "got dict" in callback["error_message"]
    )


@pytest.mark.parametrize(
    ("flag", "fragment"),
    [("bad_status", "'done' is not a valid RolloutStatus"), ("unserialisable", "cannot be sent")],
)
def test_result_that_cannot_be_sent_is_reported_as_error(
    server: ServerProcess, trainer: FakeTrainer, flag: str, fragment: str
) -> None:
    rollout_id = new_id(flag)
    init(server, rollout_body(trainer, rollout_id, metadata={flag: True}))
    callback = trainer.wait_for_callback(rollout_id)
    assert callback["status"] == "ERROR" and fragment in callback["error_message"]


def test_get_tools_failure_is_500_and_not_remembered(server: ServerProcess, trainer: FakeTrainer) -> None:
    rollout_id = new_id("tools")
    body = rollout_body(trainer, rollout_id, metadata={"tools_fail": True})
    for _ in range(2):
        response = init(server, body)
        assert response.status_code == 500
        assert response.json()["detail"] == "get_tools failed: RuntimeError: tool registry offline"
    assert (
        httpx.get(f"{server.url}/v1/rollout/status/{rollout_id}", headers=server.headers()).status_code == 404
    )
    fixed = rollout_body(trainer, rollout_id)
    assert init(server, fixed).status_code == 202
    assert trainer.wait_for_callback(rollout_id)["status"] == "COMPLETED"


# --- shutdown --------------------------------------------------------------------------------------------


def test_shutdown_lets_in_flight_rollouts_finish(trainer: FakeTrainer) -> None:
    proc = ServerProcess(env={"OSMOSIS_ROLLOUT_SERVER_SHUTDOWN_GRACE_SECONDS": "120"}).start()
    trainer.hold = threading.Event()  # the rollouts stay in flight until released
    try:
        ids = [new_id("drain") for _ in range(3)]
        for rollout_id in ids:
            assert init(proc, rollout_body(trainer, rollout_id)).status_code == 202
        trainer.wait_for_completions(len(ids))
        assert proc.proc is not None
        proc.proc.send_signal(signal.SIGTERM)
        while httpx.get(f"{proc.url}/health", timeout=30).json()["status"] != "shutting_down":
            pass  # the signal is taken on the server's next tick
        # During the grace period the server still answers: a new init is told to come back.
        late = init(proc, rollout_body(trainer, new_id("late")))
        assert late.status_code == 503 and late.headers["retry-after"] == "5"
        trainer.hold.set()
        assert proc.stop(signal.SIGTERM) == 143  # 128 + SIGTERM, as every command
        # Nothing to wait for: the server exited only after reporting.
        for rollout_id in ids:
            assert trainer.callbacks[rollout_id][0]["status"] == "COMPLETED"
        assert "terminated" in proc.output()
    finally:
        trainer.hold.set()
        proc.close()


def test_shutdown_past_the_grace_period_reports_cancelled(trainer: FakeTrainer) -> None:
    proc = ServerProcess(env={"OSMOSIS_ROLLOUT_SERVER_SHUTDOWN_GRACE_SECONDS": "0.2"}).start()
    try:
        ids = [new_id("cancel") for _ in range(3)]
        for rollout_id in ids:
            assert init(proc, rollout_body(trainer, rollout_id, metadata={"sleep": 120})).status_code == 202
        assert proc.stop(signal.SIGINT) == 130
        for rollout_id in ids:
            callback = trainer.callbacks[rollout_id][0]
            assert callback["status"] == "ERROR"
            assert callback["finish_reason"] == "cancelled"
            assert "shut down before the rollout finished" in callback["error_message"]
    finally:
        proc.close()


# --- local mode -----------------------------------------------------------------------------------------


def test_local_mode_serves_without_auth(trainer: FakeTrainer) -> None:
    proc = ServerProcess(api_key=None, args=("--local",)).start()
    try:
        rollout_id = new_id("local")
        assert init(proc, rollout_body(trainer, rollout_id), headers={}).status_code == 202
        assert trainer.wait_for_callback(rollout_id)["status"] == "COMPLETED"
        assert httpx.get(f"{proc.url}/platform/health").status_code == 404
        assert "(disabled - local debug)" in proc.output()
    finally:
        proc.close()


def test_log_dir_collects_agent_events_per_rollout(trainer: FakeTrainer, tmp_path: pathlib.Path) -> None:
    proc = ServerProcess(args=("--skip-register", "--log", str(tmp_path))).start()
    try:
        rollout_id = new_id("logged")
        assert init(proc, rollout_body(trainer, rollout_id)).status_code == 202
        trainer.wait_for_callback(rollout_id)
    finally:
        proc.close()
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.isdigit()
    events = [json.loads(line) for line in (run_dir / f"{rollout_id}.jsonl").read_text().splitlines()]
    assert [(e["event"], e["turn"], e["finish_reason"]) for e in events] == [
        ("llm_reply", 0, "tool_calls"),
        ("llm_reply", 1, "stop"),
    ]
    assert all(e["rollout_id"] == rollout_id for e in events)


# --- record TTL -----------------------------------------------------------------------------------------


def test_finished_records_expire_after_the_ttl_and_running_ones_never() -> None:
    from osmosis_ai.rollout.config import RolloutSettings
    from osmosis_ai.rollout.server import AppState, RolloutRecord
    from tests.fixtures.rollout_agents import ScenarioAgent

    async def check() -> None:
        state = AppState(ScenarioAgent(), RolloutSettings(), record_ttl_seconds=10)
        loop = asyncio.get_running_loop()
        for key, finished in (("old", 100.0), ("fresh", 105.0), ("running", None)):
            record = RolloutRecord(key=key, rollout_id=key, init=loop.create_future())
            state.add(record)
            state.move(record, "running")
            if finished is not None:
                state.move(record, "completed")
                record.finished_at = finished
        assert state.counts() == {
            "queued": 0,
            "running": 1,
            "reporting": 0,
            "completed": 2,
            "callback_failed": 0,
            "cancelled": 0,
        }
        assert state.forget_expired(now=111.0) == 1
        assert sorted(state.records) == ["fresh", "running"]
        assert state.forget_expired(now=1e9) == 1
        assert list(state.records) == ["running"]
        assert state.counts()["running"] == 1 and state.counts()["completed"] == 0

    asyncio.run(check())


def test_reload_mode_serves_through_the_app_factory(trainer: FakeTrainer) -> None:
    # The established --reload always failed (an app object instead of an import string, quirk #28).
    proc = ServerProcess(args=("--skip-register", "--reload")).start()
    try:
        rollout_id = new_id("reload")
        assert init(proc, rollout_body(trainer, rollout_id)).status_code == 202
        assert trainer.wait_for_callback(rollout_id)["status"] == "COMPLETED"
        assert httpx.post(f"{proc.url}/v1/rollout/init", json={}).status_code == 401
        assert proc.stop(signal.SIGINT) == 0
        assert "StatReload" in proc.output() or "WatchFiles" in proc.output()
    finally:
        proc.close()
