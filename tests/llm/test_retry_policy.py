"""The one retry policy, against a real HTTP server on 127.0.0.1: the transports, eval, test and the judge.

Retried: 429 (honouring Retry-After), 5xx, timeouts, connection refused. Not retried: 400, 401, 404.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest

from osmosis_ai.errors import SystemicProviderError
from osmosis_ai.llm.openai_http import OpenAICompatTransport
from osmosis_ai.llm.providers import Endpoint, resolve_endpoint
from osmosis_ai.llm.retry import ProviderCallError, RetryPolicy, classify_status, retry_after_from_headers
from osmosis_ai.llm.usage import CallStats
from tests.cli.test_eval_cli import EXAMPLES, REWARD, osmosis, write_rows

FAST = RetryPolicy(max_retries=2, base_delay=0.01)
HI = [{"role": "user", "content": "hi"}]


def call(endpoint: Endpoint, policy: RetryPolicy = FAST) -> tuple[object, CallStats]:
    stats = CallStats()

    async def main() -> object:
        transport = OpenAICompatTransport(endpoint, policy=policy)
        try:
            return await transport.complete(HI, stats=stats)
        finally:
            await transport.aclose()

    try:
        return asyncio.run(main()), stats
    except ProviderCallError as exc:
        return exc, stats


def endpoint(server, timeout: float = 5.0) -> Endpoint:
    return resolve_endpoint("judge-1", base_url=server.base_url, api_key="sk-test", timeout=timeout)


def test_policy_units():
    assert RetryPolicy().delay(0, retry_after=7.0) == 7.0
    assert RetryPolicy(max_retry_after=5).delay(0, retry_after=60) == 5
    assert 0.25 <= RetryPolicy(base_delay=0.5).delay(0, None) <= 0.5
    assert retry_after_from_headers({"Retry-After-Ms": "1500"}) == 1.5
    assert retry_after_from_headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert classify_status(429, "slow down", {"Retry-After": "2"}).retry_after == 2.0
    assert [classify_status(s, "x").kind for s in (400, 401, 404, 500, 503)] == [
        "fatal",
        "auth",
        "not_found",
        "retryable",
        "retryable",
    ]


def test_rate_limit_waits_what_the_server_asked(scripted):
    server = scripted(
        {"responses": [{"status": 429, "headers": {"Retry-After": "1"}}], "default": {"score": 1}}
    )
    reply, stats = call(endpoint(server))
    assert not isinstance(reply, Exception)
    assert stats.attempts == 2 and stats.waits == [1.0] and len(server.requests()) == 2


def test_server_errors_are_retried_until_the_budget_is_spent(scripted):
    server = scripted({"responses": [{"status": 500}, {"status": 503}], "default": {"score": 1}})
    reply, stats = call(endpoint(server))
    assert not isinstance(reply, Exception) and stats.retries == 2
    server.set_plan({"default": {"status": 502, "message": "bad gateway"}})
    error, stats = call(endpoint(server))
    assert isinstance(error, ProviderCallError) and not isinstance(error, SystemicProviderError)
    assert "gave up after 3 attempts" in str(error) and len(server.requests()) == 3


def test_timeouts_are_retried(scripted):
    server = scripted({"default": {"delay": 2, "score": 1}})
    error, stats = call(endpoint(server, timeout=0.3), RetryPolicy(max_retries=1, base_delay=0.01))
    assert isinstance(error, ProviderCallError) and "timed out after 0.3s" in str(error)
    assert stats.attempts == 2


def test_connection_refused_is_retried_then_systemic():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the call: nothing listens there
    dead = resolve_endpoint("m", base_url=f"http://127.0.0.1:{port}/v1")
    error, stats = call(dead)
    assert isinstance(error, SystemicProviderError) and stats.attempts == 3


def test_a_call_without_stats_still_counts_its_first_attempt(scripted):
    """The first attempt is awaited outside the retry loop: a failure still counts it, and the final error
    is chained to the last attempt's, retried or not."""
    server = scripted({"default": {"status": 503, "message": "busy"}})

    async def main(target: Endpoint) -> None:
        transport = OpenAICompatTransport(target, policy=FAST)
        try:
            await transport.complete(HI)
        finally:
            await transport.aclose()

    with pytest.raises(ProviderCallError, match="gave up after 3 attempts") as retried:
        asyncio.run(main(endpoint(server)))
    assert len(server.requests()) == 3 and isinstance(retried.value.__cause__, ProviderCallError)
    server.set_plan({"default": {"status": 404, "message": "no such model"}})
    with pytest.raises(SystemicProviderError, match="no such model") as refused:
        asyncio.run(main(endpoint(server)))
    assert len(server.requests()) == 1 and "attempts" not in str(refused.value)
    cause = refused.value.__cause__
    assert isinstance(cause, ProviderCallError) and cause is not refused.value


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(scripted, status):
    server = scripted({"default": {"status": status, "message": f"nope {status}"}})
    error, stats = call(endpoint(server))
    assert isinstance(error, ProviderCallError) and f"nope {status}" in str(error)
    assert stats.attempts == 1 and len(server.requests()) == 1
    assert isinstance(error, SystemicProviderError) == (status != 400)


def test_litellm_transport_uses_the_same_policy(scripted):
    from osmosis_ai.llm.litellm_transport import LiteLLMTransport

    server = scripted(
        {"responses": [{"status": 429, "headers": {"Retry-After": "1"}}], "default": {"score": 1}}
    )
    # A provider LiteLLM translates for; this one speaks OpenAI's format to our scripted server.
    routed = Endpoint("hosted_vllm/judge-1", "hosted_vllm", "judge-1", None, "sk-test", 5.0, server.base_url)
    stats = CallStats()

    async def main() -> object:
        return await LiteLLMTransport(routed, policy=FAST).complete(HI, stats=stats)

    asyncio.run(main())
    assert stats.attempts == 2 and stats.waits == [1.0] and len(server.requests()) == 2


def test_eval_and_test_retry_through_the_same_layer(scripted, tmp_path: Path):
    dataset = write_rows(tmp_path / "data.jsonl", [("q-0", "1")])
    plan = {
        "by_prompt": {
            "q-0": [{"status": 429, "headers": {"Retry-After": "0"}}, {"status": 500}, {"content": "1"}]
        }
    }
    server = scripted(plan)
    args = ["--model", "m", "--base-url", server.base_url]
    result = osmosis("eval", "-m", "math_agent:agent_loop", "-d", str(dataset), *args, "--eval-fn", REWARD,
                     "--no-preflight", "-o", str(tmp_path / "out.json"), "--log", str(tmp_path / "log.jsonl"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["summary"]["failed_runs"] == 0 and len(server.requests()) == 3
    server.set_plan({"by_prompt": {"q-0": [{"status": 503}, {"content": "1"}]}})
    tested = osmosis("test", "-m", "math_agent:agent_loop", "-d", str(dataset), *args, cwd=EXAMPLES)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert len(server.requests()) == 2
    server.set_plan({"default": {"status": 400, "message": "bad request body"}})
    failed = osmosis("eval", "-m", "math_agent:agent_loop", "-d", str(dataset), *args, "--eval-fn", REWARD,
                     "--no-preflight", "--log", str(tmp_path / "log2.jsonl"))  # fmt: skip
    assert failed.returncode == 1 and len(server.requests()) == 1  # a 400 is not retried


def test_a_first_attempt_made_by_the_caller_is_retried_from_its_failure(scripted):
    """``first_failure``: the caller awaited the first attempt itself (the direct transport does, without
    the retry loop's frames); the loop classifies that failure and goes on with the retries."""
    from osmosis_ai.llm.retry import Failure, call_with_retries

    sent: list[int] = []

    async def send() -> str:
        sent.append(1)
        return "ok"

    busy = ProviderCallError("busy", Failure("retryable", "busy", 503))
    stats = CallStats(attempts=1)  # the caller's attempt, counted by the caller
    done = asyncio.run(call_with_retries(FAST, send, where="w", stats=stats, first_failure=busy))
    assert done == "ok" and sent == [1] and stats.attempts == 2 and stats.retries == 1
    refused = ProviderCallError("no", Failure("auth", "no", 401))
    with pytest.raises(SystemicProviderError, match="w answered HTTP 401: no") as final:
        asyncio.run(call_with_retries(FAST, send, where="w", first_failure=refused))
    assert sent == [1] and final.value.__cause__ is refused


def test_a_reply_message_is_a_copy_without_its_null_members() -> None:
    """The reply's message never shares its dict with the raw body, whether or not a member was null; a
    message that is not an object is a bad reply, as before."""
    import orjson

    transport = OpenAICompatTransport(resolve_endpoint("m", base_url="http://127.0.0.1:9/v1"))
    for message in (
        {"role": "assistant", "content": "4"},
        {"role": "assistant", "content": "4", "tool_calls": None},
    ):
        body = {"choices": [{"message": message, "finish_reason": None}], "usage": {"prompt_tokens": 2}}
        reply = transport._parse(orjson.dumps(body))
        assert reply.message == {"role": "assistant", "content": "4"} and reply.finish_reason == "stop"
        assert reply.message is not reply.raw["choices"][0]["message"]
        assert reply.usage == {"prompt_tokens": 2, "completion_tokens": 0}
    with pytest.raises(
        ProviderCallError,
        match=r"not a chat completion \(AttributeError: 'list' object has no attribute 'items'\)",
    ):
        transport._parse(b'{"choices": [{"message": ["x"]}]}')
