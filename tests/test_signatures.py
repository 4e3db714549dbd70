"""The shared signature check as the eval-function loader will use it, and the shape sent to the core."""

import json
from typing import Annotated

import pytest

from osmosis_ai import SignatureError, _core
from osmosis_ai.signatures import check_function, describe_function


def simple(solution_str, ground_truth, extra_info):
    return 1.0


def full(messages, ground_truth, metadata=None, **kwargs):
    return 1.0


def test_eval_modes_are_detected_by_the_first_parameter() -> None:
    assert check_function(simple, "eval") == "eval_simple"
    assert check_function(full, "eval") == "eval_full"


def test_eval_function_with_unknown_first_parameter() -> None:
    def other(text, ground_truth, extra_info):
        return 1.0

    with pytest.raises(SignatureError, match="'solution_str' or 'messages', got 'text'"):
        check_function(other, "eval")


def test_eval_function_with_an_unfillable_parameter() -> None:
    def needs_more(solution_str, ground_truth, extra_info, threshold):
        return 1.0

    with pytest.raises(SignatureError, match="parameter 'threshold' has no default"):
        check_function(needs_more, "eval")


def test_positional_only_parameters_cannot_receive_keywords() -> None:
    def positional(solution_str, ground_truth, extra_info, /):
        return 1.0

    with pytest.raises(SignatureError, match="positional-only"):
        check_function(positional, "eval")


def test_reward_decorated_functions_are_inspected_through_the_wrapper() -> None:
    from osmosis_ai import osmosis_reward

    @osmosis_reward
    def reward(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
        return 1.0

    assert check_function(reward, "eval") == "eval_simple"


def test_describe_function_produces_plain_data() -> None:
    def f(
        solution_str: Annotated[str, "meta"], ground_truth: "str | None", *args, extra_info: dict = None, **kw
    ):
        return 0.0

    shape = describe_function(f)
    json.dumps(shape)  # plain data only
    kinds = [p["kind"] for p in shape["params"]]
    assert kinds == [
        "positional_or_keyword",
        "positional_or_keyword",
        "var_positional",
        "keyword_only",
        "var_keyword",
    ]
    assert shape["params"][0]["annotation"]["name"] == "str"
    assert shape["params"][1]["annotation"]["kind"] == "union"
    assert shape["params"][3]["has_default"] is True


def test_uninspectable_callables_are_reported() -> None:
    with pytest.raises(SignatureError, match="cannot read its signature"):
        check_function(min, "eval")


def test_core_rejects_malformed_shapes_and_families() -> None:
    with pytest.raises(RuntimeError, match="unknown signature family"):
        _core.check_signature(json.dumps(describe_function(simple)), "nonsense")
    with pytest.raises(RuntimeError, match="function shape"):
        _core.check_signature("{}", "eval")
