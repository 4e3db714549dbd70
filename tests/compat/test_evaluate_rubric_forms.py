"""`evaluate_rubric` in its 0.2 form (model_info=, sync) and its 0.3 form (model=, awaited), one judge."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from osmosis_ai import RubricResult, evaluate_rubric

pytestmark = pytest.mark.usefixtures("judge_env")

PLAN = {"default": {"score": 0.75, "explanation": "mostly right"}}


def test_the_0_2_form_returns_a_float_or_the_details(scripted) -> None:
    server = scripted(PLAN)
    info = {"provider": "openai", "model": "judge-1", "api_key": "sk-test", "base_url": server.base_url}
    score = evaluate_rubric("Is it right?", "42", info, ground_truth="42")
    assert score == 0.75 and type(score) is float
    details = evaluate_rubric("Is it right?", "42", info, return_details=True)
    assert details["score"] == 0.75 and details["explanation"] == "mostly right"
    assert len(server.requests()) == 2


def test_the_0_3_form_is_awaited_and_returns_a_rubric_result(scripted, monkeypatch) -> None:
    server = scripted(PLAN)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    pending = evaluate_rubric(
        solution_str="42", rubric="Is it right?", model="openai/judge-1", ground_truth="42", api_key="sk-test"
    )
    assert inspect.isawaitable(pending)
    result = asyncio.run(pending)
    assert result == RubricResult(score=0.75, explanation="mostly right")
    (body,) = server.requests()
    # The same judge as the 0.2 form: the provider prefix is split off, the rubric and answer are sent.
    assert body["model"] == "judge-1"
    assert "Is it right?" in body["messages"][-1]["content"] and "42" in body["messages"][-1]["content"]


def test_the_0_3_form_keeps_its_default_range_and_system_prompt(scripted, monkeypatch) -> None:
    server = scripted({"default": {"score": 7, "explanation": "out of range"}})
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    result = asyncio.run(
        evaluate_rubric(solution_str="x", rubric="r", model="openai/judge-1", system_prompt="Be terse.")
    )
    assert result.score == 1.0  # clamped into the default [0.0, 1.0]
    assert server.requests()[0]["messages"][0]["content"].startswith("Be terse.")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "takes model_info= .* or model="),
        (
            {"model_info": {"provider": "openai", "model": "m"}, "model": "openai/m"},
            "both model_info= and model=",
        ),
        ({"model": "openai/m", "return_details": True}, "return_details= belongs to the 0.2 form"),
        ({"model_info": {"provider": "openai", "model": "m"}, "api_key": "k"}, "belong to the 0.3 form"),
    ],
)
def test_ambiguous_calls_say_which_form_to_use(kwargs, message) -> None:
    with pytest.raises(TypeError, match=message):
        evaluate_rubric(rubric="r", solution_str="s", **kwargs)


def test_a_model_without_provider_is_refused_when_awaited() -> None:
    with pytest.raises(ValueError, match="'provider/model'"):
        asyncio.run(evaluate_rubric(solution_str="s", rubric="r", model="gpt-5-mini"))
