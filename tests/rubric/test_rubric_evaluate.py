"""evaluate_rubric / aevaluate_rubric: prompt, parsing, validation, and real HTTP behaviour."""

from __future__ import annotations

import asyncio
import math

import pytest

from osmosis_ai import MissingAPIKeyError, ModelNotFoundError, ProviderRequestError, evaluate_rubric
from osmosis_ai.rubric import JudgeUnscoredError, aevaluate_rubric, ensure_api_key_available
from osmosis_ai.rubric.parse import ReplyProblem, parse_reply
from osmosis_ai.rubric.prompt import build_messages

pytestmark = pytest.mark.usefixtures("judge_env")


def info(server, **extra):
    return {
        "provider": "openai",
        "model": "judge-1",
        "api_key": "sk-test",
        "base_url": server.base_url,
        "retry_base_delay": 0.01,
        **extra,
    }


# --- prompt and parsing -----------------------------------------------------------------------------------


def test_prompt_has_sentinel_blocks_in_order_and_escapes_backticks():
    system, user = build_messages(
        rubric="  Be exact.  ",
        solution_str="print(1) ```code```",
        score_min=0,
        score_max=10,
        system_prompt="Custom first.",
        original_input="What is 1?",
        ground_truth="1",
        metadata={"b": 2, "a": 1},
    )
    assert system["content"].startswith("Custom first.\n\nYou are an impartial reward judge.")
    assert "between 0.0 and 10.0 inclusive" in system["content"]
    text = user["content"]
    assert text.startswith("Rubric:\nBe exact.\n\nScore range: 0.0 to 10.0.")
    order = [
        text.index(f"<<<BEGIN_{label}>>>") for label in ("ORIGINAL_INPUT", "CANDIDATE_OUTPUT", "GROUND_TRUTH")
    ]
    assert order == sorted(order)
    assert "\\`\\`\\`code\\`\\`\\`" in text and "```" not in text.split("Respond with JSON")[0]
    assert '{\n  "a": 1,\n  "b": 2\n}' in text


def test_prompt_omits_blank_optional_blocks():
    _, user = build_messages(rubric="r", solution_str="s", score_min=0, score_max=1, ground_truth="  ")
    assert "GROUND_TRUTH" not in user["content"] and "METADATA" not in user["content"]


def test_parse_strips_think_and_fences_and_clamps():
    reply = parse_reply('<think>hmm</think>\n```json\n{"score": -3, "explanation": " low "}\n```', 0.0, 1.0)
    assert (reply.raw_score, reply.score, reply.explanation, reply.clamped) == (-3.0, 0.0, "low", True)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json", "invalid_json"),
        ("[1, 2]", "not_an_object"),
        ('{"score": true, "explanation": "x"}', "missing_score"),
        ('{"score": "0.5", "explanation": "x"}', "missing_score"),
        ('{"score": NaN, "explanation": "x"}', "non_finite_score"),
        ('{"score": 0.5, "explanation": "  "}', "missing_explanation"),
    ],
)
def test_parse_failures_name_their_reason(content, reason):
    with pytest.raises(ReplyProblem) as caught:
        parse_reply(content, 0.0, 1.0)
    assert caught.value.reason == reason


def test_truncated_reply_is_reported_as_truncated():
    with pytest.raises(ReplyProblem) as caught:
        parse_reply('{"score": 0.5, "expla', 0.0, 1.0, finish_reason="length")
    assert caught.value.reason == "truncated"


# --- validation -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_info", "match"),
    [
        ({"model": "m", "api_key": "k"}, "'provider'"),
        ({"provider": " ", "model": "m", "api_key": "k"}, "'provider'"),
        ({"provider": "openai", "api_key": "k"}, "'model'"),
    ],
)
def test_model_info_requires_provider_and_model(model_info, match):
    with pytest.raises(TypeError, match=match):
        evaluate_rubric("r", "s", model_info)


def test_arguments_are_checked_before_the_api_key():
    # The established package reported the missing key first and hid the real mistake.
    with pytest.raises(TypeError, match="'rubric' must be a non-empty string"):
        evaluate_rubric(" ", "s", {"provider": "openai", "model": "m"})
    with pytest.raises(TypeError, match="'solution_str'"):
        evaluate_rubric("r", "", {"provider": "openai", "model": "m"})
    with pytest.raises(ValueError, match="'score_max' must be greater than 'score_min'"):
        evaluate_rubric("r", "s", {"provider": "openai", "model": "m"}, score_min=1, score_max=1)
    with pytest.raises(ValueError, match="positive number of seconds"):
        evaluate_rubric("r", "s", {"provider": "openai", "model": "m", "timeout": 0})


def test_missing_key_names_the_variable(monkeypatch):
    with pytest.raises(MissingAPIKeyError, match="'OPENAI_API_KEY' is not set") as caught:
        evaluate_rubric("r", "s", {"provider": "openai", "model": "m"})
    assert 'export OPENAI_API_KEY="..."' in str(caught.value)
    with pytest.raises(MissingAPIKeyError, match="'MY_JUDGE_KEY'"):
        ensure_api_key_available({"provider": "openai", "api_key_env": "MY_JUDGE_KEY"})
    with pytest.raises(MissingAPIKeyError, match="no default variable") as caught:
        ensure_api_key_available({"provider": "acme"})
    assert str(caught.value).count("GEMINI_API_KEY") == 1
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-env")
    ensure_api_key_available({"provider": "openai", "api_key_env": "MY_JUDGE_KEY"})


# --- against the scripted server ---------------------------------------------------------------------------


def test_details_keep_raw_and_clamped_scores_and_pass_temperature_seed(scripted):
    server = scripted({"default": {"score": 7.5, "explanation": "too generous"}})
    result = evaluate_rubric(
        "r", "s", info(server, seed=11, temperature=0.2), score_min=0, score_max=5, return_details=True
    )
    assert result["score"] == 5.0 and result["raw_score"] == 7.5 and result["clamped"] is True
    assert result["explanation"] == "too generous"
    assert result["raw"]["choices"][0]["message"]["content"]
    assert result["usage"] == {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    (sent,) = server.requests()
    assert sent["seed"] == 11 and sent["temperature"] == 0.2
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["score", "explanation"]
    assert sent["model"] == "judge-1"
    assert evaluate_rubric("r", "s", info(server), score_min=0, score_max=10) == 7.5


def test_rate_limit_is_retried_honouring_retry_after(scripted):
    server = scripted(
        {"responses": [{"status": 429, "headers": {"Retry-After": "1"}}], "default": {"score": 0.4}}
    )
    result = evaluate_rubric("r", "s", info(server), return_details=True)
    assert result["score"] == 0.4
    assert result["retries"] == 1 and result["retry_waits"] == [1.0] and result["attempts"] == 2
    assert len(server.requests()) == 2


def test_server_errors_are_retried_then_reported(scripted):
    server = scripted({"responses": [{"status": 500}, {"status": 503}], "default": {"score": 0.9}})
    assert evaluate_rubric("r", "s", info(server)) == 0.9
    server = scripted({"default": {"status": 500, "message": "boom"}})
    with pytest.raises(ProviderRequestError, match="boom") as caught:
        evaluate_rubric("r", "s", info(server, max_retries=2))
    assert "gave up after 3 attempts" in str(caught.value)
    assert caught.value.provider == "openai" and caught.value.model == "judge-1"
    assert len(server.requests()) == 3


def test_timeouts_are_retried_then_reported(scripted):
    server = scripted({"default": {"delay": 3, "score": 0.5}})
    with pytest.raises(ProviderRequestError) as caught:
        evaluate_rubric("r", "s", info(server, max_retries=1, timeout=0.3))
    assert not isinstance(caught.value, ModelNotFoundError)
    assert "gave up after 2 attempts" in str(caught.value)


def test_invalid_json_is_retried_then_unscored_never_zero(scripted):
    server = scripted({"default": {"content": "I think it deserves a 7"}})
    with pytest.raises(JudgeUnscoredError) as caught:
        evaluate_rubric("r", "s", info(server))
    assert caught.value.reason == "invalid_json" and caught.value.attempts == 3
    assert isinstance(caught.value, ProviderRequestError)
    assert len(server.requests()) == 3


def test_invalid_json_then_valid_reply_succeeds(scripted):
    server = scripted({"responses": [{"content": "{oops"}], "default": {"score": 0.6}})
    result = evaluate_rubric("r", "s", info(server), return_details=True)
    assert result["score"] == 0.6 and result["parse_failures"] == 1 and result["attempts"] == 2
    first, second = server.requests()
    assert len(first["messages"]) == 2
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert second["messages"][2]["content"] == "{oops"
    assert "could not be used: The judge reply is not valid JSON" in second["messages"][3]["content"]


def test_unknown_model_raises_model_not_found_without_retry(scripted):
    server = scripted({"by_model": {"ghost": {"status": 404, "message": "The model ghost does not exist"}}})
    with pytest.raises(ModelNotFoundError, match="ghost"):
        evaluate_rubric("r", "s", info(server, model="ghost"))
    assert len(server.requests()) == 1


def test_auth_failure_is_not_retried_and_the_key_is_redacted(scripted):
    server = scripted({"default": {"status": 401, "message": "bad key sk-test-secret-123 for this org"}})
    with pytest.raises(ProviderRequestError, match="bad key") as caught:
        evaluate_rubric("r", "s", info(server, api_key="sk-test-secret-123"))
    assert "sk-test-secret-123" not in str(caught.value) and "bad key *** for this org" in str(caught.value)
    assert len(server.requests()) == 1


def test_rejected_response_format_says_how_to_fix_it(scripted):
    server = scripted({"default": {"status": 400, "message": "response_format json_schema is not supported"}})
    with pytest.raises(ProviderRequestError, match="set model_info\\['response_format'\\] to 'json_object'"):
        evaluate_rubric("r", "s", info(server))
    server.set_plan({"default": {"score": 0.2}})
    assert evaluate_rubric("r", "s", info(server, response_format="json_object")) == 0.2
    assert server.requests()[0]["response_format"] == {"type": "json_object"}


def test_base_url_and_key_from_environment(scripted, monkeypatch):
    server = scripted({"default": {"score": 0.3}})
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert evaluate_rubric("r", "s", {"provider": "openai", "model": "judge-1"}) == 0.3


def test_async_form_runs_concurrently(scripted):
    server = scripted({"default": {"score": 0.8, "delay": 0.2}})

    async def main():
        calls = [aevaluate_rubric("r", f"answer {i}", info(server)) for i in range(6)]
        return await asyncio.gather(*calls)

    assert asyncio.run(main()) == [0.8] * 6
    answers = sorted(candidate(r) for r in server.requests())
    assert answers == [f"answer {i}" for i in range(6)]


def candidate(request: dict) -> str:
    return request["messages"][1]["content"].split("<<<BEGIN_CANDIDATE_OUTPUT>>>\n")[1].split("\n")[0]


# --- against the real local model -------------------------------------------------------------------------


def test_real_local_model_answers_in_schema(local_model):
    result = evaluate_rubric(
        "Give 1.0 if the answer says Paris, else 0.0.",
        "The capital of France is Paris.",
        {
            "provider": "openai",
            "model": local_model.model,
            "api_key": "sk-local",
            "base_url": local_model.base_url,
            "max_tokens": 128,
            "seed": 1,
        },
        original_input="What is the capital of France?",
        return_details=True,
    )
    assert 0.0 <= result["score"] <= 1.0 and math.isfinite(result["raw_score"])
    assert result["explanation"]
    assert result["response_format"] == "json_schema"
    assert result["usage"]["prompt_tokens"] > 0 and result["usage"]["completion_tokens"] > 0


def test_request_routing_per_provider(monkeypatch):
    from osmosis_ai.rubric.judge import prepare

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/anthropic")
    request = prepare(
        "r",
        "s",
        {
            "provider": " Anthropic ",
            "model": "claude-x",
            "reasoning_effort": "low",
            "response_format": "json_object",
        },
    )
    endpoint = request.endpoint
    # Anthropic needs translation: LiteLLM, with the base URL override passed as api_base.
    assert not endpoint.direct and endpoint.litellm_model == "anthropic/claude-x"
    assert endpoint.litellm_base == "http://127.0.0.1:9/anthropic" and endpoint.api_key == "sk-ant"
    assert request.params["reasoning_effort"] == "low" and request.params["temperature"] == 0.0
    assert endpoint.timeout == 30.0
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai")
    gpt5 = prepare("r", "s", {"provider": "openai", "model": "gpt-5-mini"})
    # OpenAI speaks its own wire format: the direct transport, no LiteLLM.
    assert gpt5.endpoint.base_url == "https://api.openai.com/v1" and gpt5.endpoint.wire_model == "gpt-5-mini"
    assert "temperature" not in gpt5.params and gpt5.endpoint.timeout == 45.0
    monkeypatch.setenv("XAI_API_KEY", "sk-xai")
    grok = prepare("r", "s", {"provider": "xai", "model": "grok-4"})
    assert grok.endpoint.timeout == 60.0 and grok.endpoint.base_url == "https://api.x.ai/v1"
    custom = prepare(
        "r", "s", {"provider": "openai", "model": "org/model", "base_url": "http://127.0.0.1:9/v1"}
    )
    assert custom.endpoint.wire_model == "org/model" and custom.endpoint.base_url == "http://127.0.0.1:9/v1"
    assert custom.response_mode == "json_schema"
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("LITELLM_API_KEY", raising=False)
    # A local judge needs no key (the established package demanded OPENAI_API_KEY here).
    assert custom.endpoint.api_key is None or custom.endpoint.api_key == "sk-oai"
    keyless = prepare("r", "s", {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"})
    assert keyless.endpoint.api_key is None


def test_provider_models_do_not_import_litellm():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from osmosis_ai.rubric.judge import prepare\n"
        "prepare('r', 's', {'provider': 'openai', 'model': 'gpt-4o-mini', 'api_key': 'k'})\n"
        "prepare('r', 's', {'provider': 'xai', 'model': 'grok-4', 'api_key': 'k'})\n"
        "print('litellm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
