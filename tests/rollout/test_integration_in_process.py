"""Agent frameworks under `osmosis eval run`: the OpenAI SDK client is answered by the rollout context in-process."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from openai import AsyncOpenAI, AuthenticationError

from osmosis_ai.llm.retry import Failure, ProviderCallError
from osmosis_ai.rollout.context import RolloutContext
from osmosis_ai.rollout.integrations.agents._in_process import in_process_http_client

REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
}


def _client(answer: Any) -> tuple[AsyncOpenAI, list[tuple[str, Any]]]:
    calls: list[tuple[str, Any]] = []

    async def in_process(rollout_id: str, body: Any) -> dict[str, Any]:
        calls.append((rollout_id, body))
        if isinstance(answer, Exception):
            raise answer
        return answer

    # Nothing listens at this URL: a call that left the process would fail.
    rollout = RolloutContext(
        chat_completions_url="http://127.0.0.1:9/v1", rollout_id="r1", in_process=in_process
    )
    client = AsyncOpenAI(
        base_url=rollout.chat_completions_url, api_key="k", http_client=in_process_http_client(rollout)
    )
    return client, calls


def test_the_openai_client_is_answered_in_process_streamed_or_not() -> None:
    client, calls = _client(REPLY)
    messages = [{"role": "user", "content": "2+2"}]

    async def main() -> tuple[Any, list[Any]]:
        whole = await client.chat.completions.create(model="m", messages=messages, temperature=0)
        stream = await client.chat.completions.create(
            model="m", messages=messages, stream=True, stream_options={"include_usage": True}
        )
        return whole, [chunk async for chunk in stream]

    whole, chunks = asyncio.run(main())
    assert (
        whole.choices[0].message.content == "4" and whole.usage is not None and whole.usage.total_tokens == 6
    )
    assert [c.choices[0].delta.content for c in chunks if c.choices] == ["4", None]
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 6
    assert [rollout_id for rollout_id, _ in calls] == ["r1", "r1"]
    assert calls[0][1]["temperature"] == 0 and calls[0][1]["messages"] == messages


def test_a_provider_failure_reaches_the_client_as_its_http_error() -> None:
    client, _ = _client(ProviderCallError("bad key", Failure("auth", "bad key", 401)))
    with pytest.raises(AuthenticationError, match="bad key"):
        asyncio.run(
            client.with_options(max_retries=0).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}]
            )
        )


def test_outside_eval_run_there_is_no_in_process_client() -> None:
    assert in_process_http_client(RolloutContext(chat_completions_url="http://127.0.0.1:9/v1")) is None


FRAMEWORK_RUN = """
import asyncio, importlib.util, sys

from osmosis_ai.rollout.context import RolloutContext

calls = []


async def in_process(rollout_id, body):
    calls.append(body)
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }


async def main(framework):
    # Nothing listens at this URL: only the in-process path can answer.
    with RolloutContext(chat_completions_url="http://127.0.0.1:9/v1", rollout_id="r1", in_process=in_process):
        if framework == "agents":
            from agents import Runner
            from osmosis_ai.rollout.integrations.agents.openai_agents import OsmosisAgent

            result = await Runner.run(OsmosisAgent(name="calc", instructions="Answer."), "2+2")
            return result.final_output
        from osmosis_ai.rollout.integrations.agents.strands import OsmosisStrandsAgent

        return str(await OsmosisStrandsAgent(system_prompt="Answer.", callback_handler=None).invoke_async("2+2"))


print(asyncio.run(main(sys.argv[1])).strip(), len(calls))
"""


@pytest.mark.parametrize("framework", ["agents", "strands"])
def test_the_framework_models_use_the_in_process_path(framework: str) -> None:
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"needs the {framework} package")
    # A subprocess: importing openai-agents here would put `agents` in sys.modules for the whole session.
    done = subprocess.run(
        [sys.executable, "-c", FRAMEWORK_RUN, framework], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["4", "1"]
