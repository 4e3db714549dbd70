"""`OsmosisLLMClient` against a real fake TrainGate on 127.0.0.1: retries, errors, metrics, settings."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from osmosis_ai.errors import ConfigError, OsmosisServerError, OsmosisTransportError, OsmosisValidationError
from osmosis_ai.rollout import OsmosisLLMClient, RolloutMetrics
from osmosis_ai.rollout.config import (
    RolloutClientSettings,
    RolloutServerSettings,
    RolloutSettings,
    configure,
    get_settings,
    reset_settings,
)
from tests.fixtures.rollout_harness import FakeTrainer, free_port

FAST = RolloutSettings(client=RolloutClientSettings(retry_base_delay=0.01, retry_max_delay=0.02))


@pytest.fixture(scope="module")
def trainer() -> Iterator[FakeTrainer]:
    fake = FakeTrainer().start()
    yield fake
    fake.stop()


def client_for(trainer: FakeTrainer, **kwargs: object) -> OsmosisLLMClient:
    return OsmosisLLMClient(trainer.url + "/", f"c-{uuid.uuid4().hex[:8]}", settings=FAST, **kwargs)


def test_chat_completions_sends_fields_and_counts(trainer: FakeTrainer) -> None:
    async def go() -> tuple[object, RolloutMetrics, str]:
        async with client_for(trainer, api_key="tg-key") as llm:
            reply = await llm.chat_completions(
                [{"role": "user", "content": "add please"}], temperature=0.2, stop="###", tools=[{"x": 1}]
            )
            return reply, llm.get_metrics(), llm.rollout_id

    reply, metrics, rollout_id = asyncio.run(go())
    assert reply.has_tool_calls and reply.finish_reason == "tool_calls"
    assert reply.usage["prompt_tokens"] == 10
    sent = trainer.completions_for(rollout_id)[0]
    assert sent["stop"] == ["###"] and sent["temperature"] == 0.2 and "tools" not in sent
    assert trainer.completion_auth[-1] == "Bearer tg-key"
    assert (metrics.num_llm_calls, metrics.prompt_tokens, metrics.response_tokens) == (1, 10, 5)


def test_4xx_is_not_retried_5xx_is(trainer: FakeTrainer) -> None:
    async def call() -> None:
        async with client_for(trainer) as llm:
            await llm.chat_completions([{"role": "user", "content": "hi"}])

    before = len(trainer.completions)
    trainer.completion_failures[:] = [400]
    with pytest.raises(OsmosisValidationError, match="HTTP 400") as caught:
        asyncio.run(call())
    assert caught.value.status_code == 400 and len(trainer.completions) == before + 1

    trainer.completion_failures[:] = [503, 502]
    asyncio.run(call())  # two failures, then success on the third attempt
    assert len(trainer.completions) == before + 4

    trainer.completion_failures[:] = [500] * 4  # max_retries=3: four attempts, all fail
    with pytest.raises(OsmosisServerError, match="HTTP 500"):
        asyncio.run(call())
    assert trainer.completion_failures == []


def test_any_2xx_callback_is_success(trainer: FakeTrainer) -> None:
    # Quirk #25: the established client retried 201/204 and ended in "No attempts made".
    trainer.accept_status = 201
    try:
        llm = client_for(trainer)
        asyncio.run(llm.complete_rollout("COMPLETED", [{"role": "assistant", "content": "x"}], reward=0.5))
        assert trainer.callback_attempts[llm.rollout_id] == 1
        sent = trainer.callbacks[llm.rollout_id][0]
        assert sent["reward"] == 0.5 and sent["metrics"]["num_llm_calls"] == 0
    finally:
        trainer.accept_status = 200


def test_callback_4xx_is_final_and_bad_status_is_value_error(trainer: FakeTrainer) -> None:
    llm = client_for(trainer)
    trainer.callback_failures[llm.rollout_id] = [422]
    with pytest.raises(OsmosisValidationError, match="HTTP 422"):
        asyncio.run(llm.complete_rollout("ERROR", [], error_message="x"))
    assert trainer.callback_attempts[llm.rollout_id] == 1
    with pytest.raises(ValueError):
        asyncio.run(llm.complete_rollout("DONE", []))


def test_unreachable_trainer_is_a_transport_error_after_retries() -> None:
    llm = OsmosisLLMClient(f"http://127.0.0.1:{free_port()}", "r", settings=FAST, max_retries=1)
    with pytest.raises(OsmosisTransportError, match="failed: ConnectError"):
        asyncio.run(llm.chat_completions([{"role": "user", "content": "hi"}]))


def test_settings_from_environment_and_configure(monkeypatch: pytest.MonkeyPatch) -> None:
    from osmosis_ai.rollout import schemas

    monkeypatch.setattr(schemas, "_metadata_limit_override", None)
    monkeypatch.setenv("OSMOSIS_ROLLOUT_SERVER_MAX_CONCURRENT_ROLLOUTS", "7")
    monkeypatch.setenv("OSMOSIS_ROLLOUT_CLIENT_MAX_RETRIES", "1")
    reset_settings()
    try:
        settings = get_settings()
        assert settings.server.max_concurrent_rollouts == 7 and settings.client.max_retries == 1
        assert RolloutServerSettings(max_concurrent_rollouts=3).max_concurrent_rollouts == 3  # code wins
        monkeypatch.setenv("OSMOSIS_ROLLOUT_CLIENT_MAX_RETRIES", "99")
        with pytest.raises(
            ValueError, match="OSMOSIS_ROLLOUT_CLIENT_MAX_RETRIES='99': Input should be less than"
        ):
            RolloutClientSettings()
        reset_settings()
        with pytest.raises(
            ConfigError, match="invalid rollout settings: environment variable OSMOSIS_ROLLOUT_CLIENT"
        ):
            get_settings()
        monkeypatch.delenv("OSMOSIS_ROLLOUT_CLIENT_MAX_RETRIES")
        configure(RolloutSettings(max_metadata_size_bytes=4096))  # quirk #26: the setting is wired
        assert schemas.get_max_metadata_size_bytes() == 4096
    finally:
        reset_settings()
