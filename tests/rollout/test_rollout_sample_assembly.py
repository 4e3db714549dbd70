"""The samples and requests a local run assembles without pydantic's machinery are the validated ones."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from osmosis_ai.rollout.context import GraderContext
from osmosis_ai.rollout.sample import (
    ExecutionRequest,
    ExecutionResult,
    RolloutSample,
    RolloutStatus,
    execution_request,
    sample_from_output,
    success_result,
)


def _same(assembled: Any, validated: Any) -> None:
    assert type(assembled) is type(validated)
    assert assembled == validated and repr(assembled) == repr(validated)
    assert assembled.model_fields_set == validated.model_fields_set
    assert assembled.model_dump() == validated.model_dump()
    assert assembled.model_dump_json() == validated.model_dump_json()
    assert pickle.loads(pickle.dumps(assembled)) == validated
    assert copy.deepcopy(assembled) == validated and assembled.model_copy() == validated


class _Text(str):
    """A str subclass: kept as it is, as validation keeps it."""


class _Message(dict):
    """A dict subclass: validated the usual way."""


MESSAGES = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": [{"type": "text", "text": "2+2?"}]},
    {"role": "assistant", "content": "4", "tool_calls": [{"id": "c1", "function": {"name": "f"}}]},
]


@pytest.mark.parametrize(
    ("messages", "label", "metrics"),
    [
        (MESSAGES, "4", {"turns": 1.0}),
        # Scalars only (the core copies them): every scalar type, then a str subclass and a dict subclass,
        # which the core leaves to Python.
        (
            [MESSAGES[0], {"role": "user", "content": "2+2?", "name": None, "n": 1, "x": 0.5, "b": True}],
            "4",
            {},
        ),
        ([{"role": "user", "content": _Text("2+2?")}], "4", {}),
        ([_Message(role="user", content="2+2?")], "4", {}),
        ([], None, {}),
        ((MESSAGES[0],), "4", {}),  # a tuple: validated the usual way
        ([{1: "x"}], "4", {}),  # a key that is not text: the usual ValidationError
        ([MESSAGES[0], "not a message"], "4", {}),
        (MESSAGES, 4, {}),  # a label that is not text
        (MESSAGES, "4", {1: 2.0}),
    ],
)
def test_a_sample_from_an_output_is_the_validated_sample(messages: Any, label: Any, metrics: Any) -> None:
    try:
        validated = RolloutSample(messages=messages, label=label, metrics=metrics)
    except ValueError as exc:
        with pytest.raises(type(exc)):
            sample_from_output(messages, label, metrics)
        return
    sample = sample_from_output(messages, label, metrics)
    _same(sample, validated)
    # Copies, as validation makes them: the workflow's output and the sample share no message or metrics
    # dict, and the trajectory is a deep copy.
    for copies in (sample.messages, sample.trajectory_messages):
        assert all(a is not b for a, b in zip(copies, messages, strict=True))
    assert all(a is not b for a, b in zip(sample.messages, sample.trajectory_messages, strict=True))
    for kept, given in zip(sample.trajectory_messages, messages, strict=True):
        if isinstance(given["content"], list):
            assert kept["content"] == given["content"] and kept["content"] is not given["content"]
    assert sample.metrics is not metrics
    sample.reward = 0.5  # still validated on assignment
    with pytest.raises(ValueError):
        sample.reward = float("nan")


@pytest.mark.parametrize(
    "values",
    [
        ("r1", [{"role": "user", "content": "hi"}], "4", {"k": [1]}, 30.0, 5.0),
        ("r1", [], None, None, None, None),
        ("r1", [{"role": "user", "content": "hi"}], "4", None, 30, 5),  # integers become floats
        ("a/b", [], None, None, None, None),  # not one path segment
        ("..", [], None, None, None, None),
        ("r1", [], None, None, float("inf"), None),
        ("r1", [], 4, None, None, None),
        ("r1", [], None, {1: "x"}, None, None),
        ("r1", ({"role": "user"},), None, None, None, None),
    ],
)
def test_an_execution_request_is_the_validated_request(values: tuple[Any, ...]) -> None:
    names = ("id", "prompt", "label", "metadata", "agent_timeout_sec", "grader_timeout_sec")
    try:
        validated = ExecutionRequest(**dict(zip(names, values, strict=True)))
    except ValueError as exc:
        with pytest.raises(type(exc)):
            execution_request(*values)
        return
    request = execution_request(*values)
    _same(request, validated)
    if values[3] is not None:
        assert request.metadata is not values[3]  # a grader changing it changes no other run of the row
    if values[1]:
        assert request.prompt[0] is not values[1][0]


def test_a_request_of_a_fresh_prompt_keeps_it_and_is_the_validated_request() -> None:
    prompt = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    validated = ExecutionRequest(
        id="r1", prompt=prompt, label="4", metadata=None, agent_timeout_sec=60.0, grader_timeout_sec=None
    )
    request = execution_request("r1", prompt, "4", None, 60.0, None, fresh_prompt=True)
    _same(request, validated)
    assert request.prompt is prompt  # made for this request: not copied again
    with pytest.raises(ValueError):  # the other fields are still checked
        execution_request("a/b", prompt, fresh_prompt=True)


def test_a_success_result_is_the_validated_result() -> None:
    sample = sample_from_output(MESSAGES, "4", {"turns": 1.0})
    for given in (sample, None, _OwnSample(messages=[])):
        validated = ExecutionResult(status=RolloutStatus.SUCCESS, sample=given)
        result = success_result(given)
        assert type(result) is ExecutionResult and result.sample is given
        assert result == validated and repr(result) == repr(validated)
        assert result.model_fields_set == validated.model_fields_set
        assert result.model_dump() == validated.model_dump()
        assert pickle.loads(pickle.dumps(result)) == validated


class _OwnSample(RolloutSample):
    """A subclass: its assignment goes through pydantic, as before."""


class _Float(float):
    """A float subclass (as numpy's float64 is): kept as a plain float, as validation keeps it."""


REWARDS = [1, 0.25, 0, -3, True, float("nan"), float("inf"), -float("inf"), _Float(0.5), _Float("nan"), "1"]


@pytest.mark.parametrize("reward", [*REWARDS, None, 10**400])
def test_set_reward_checks_as_assignment_does(reward: Any) -> None:
    def outcome(sample: RolloutSample) -> Any:
        ctx = GraderContext(label="4", sample=sample)
        try:
            ctx.set_reward(reward)
        except (ValueError, OverflowError) as exc:
            return type(exc), str(exc)
        return sample.reward, type(sample.reward), sorted(sample.model_fields_set)

    fast, usual = outcome(RolloutSample(messages=[])), outcome(_OwnSample(messages=[]))
    assert fast == usual
