"""@osmosis_rubric: decoration-time rules, call-time argument checks, async and postponed annotations."""

import asyncio
from typing import Any, Optional, Union

import pytest

from osmosis_ai import SignatureError, osmosis_rubric


def decorate_error(func) -> SignatureError:
    with pytest.raises(SignatureError) as info:
        osmosis_rubric(func)
    assert isinstance(info.value, TypeError)
    return info.value


class Label(str):
    """A str subclass: accepted by the rubric contract."""


@pytest.mark.parametrize(
    "solution_annotation,ground_truth_annotation",
    [
        (str, str),
        (str, Optional[str]),  # noqa: UP045
        (str, Union[str, None]),  # noqa: UP007
        (str, str | None),
        (Label, None | str),
        ("str", "Optional[str]"),
        ("builtins.str", "str"),
    ],
)
def test_accepted_annotations(solution_annotation: Any, ground_truth_annotation: Any) -> None:
    def judge(solution_str, ground_truth, extra_info):
        return 0.5

    judge.__annotations__ = {"solution_str": solution_annotation, "ground_truth": ground_truth_annotation}
    wrapped = osmosis_rubric(judge)
    assert wrapped("text", None, {}) == 0.5
    assert wrapped.__osmosis_contract__ == "rubric"


@pytest.mark.parametrize("extra_annotation", [dict, dict[str, Any], Optional[dict], Any, None])  # noqa: UP045
def test_extra_info_may_be_unannotated_or_a_mapping(extra_annotation: Any) -> None:
    def judge(solution_str: str, ground_truth: str, extra_info=None) -> float:
        return 1.0

    if extra_annotation is not None:
        judge.__annotations__["extra_info"] = extra_annotation
    assert osmosis_rubric(judge)("a", "b") == 1.0


def test_extra_info_annotation_is_not_checked() -> None:
    # v0.2.17 checks only the name of the third parameter.
    @osmosis_rubric
    def judge(solution_str: str, ground_truth: str, extra_info: str) -> float:
        return 1.0

    assert judge("a", "b", "c") == 1.0
    assert judge.__osmosis_contract__ == "rubric"


def test_any_other_signature_is_accepted_without_argument_checks() -> None:
    @osmosis_rubric
    def custom(messages: list, context: dict) -> float:
        return float(len(messages))

    assert custom([1, 2], {}) == 2.0
    assert custom.__osmosis_contract__ == "custom"
    assert osmosis_rubric(lambda: 0.5)() == 0.5


@pytest.mark.parametrize(
    "annotation,shown",
    [(int, "int"), (Union[str, int], "str | int"), (None, "no annotation")],  # noqa: UP007
)
def test_ground_truth_annotation_rejected(annotation: Any, shown: str) -> None:
    def judge(solution_str: str, ground_truth, extra_info) -> float:
        return 1.0

    if annotation is not None:
        judge.__annotations__["ground_truth"] = annotation
    err = decorate_error(judge)
    assert f"Second parameter 'ground_truth' must be annotated as str or Optional[str], got {shown}" in str(
        err
    )


def test_solution_str_must_not_have_a_default() -> None:
    def judge(solution_str: str = "", ground_truth: str = "", extra_info=None) -> float:
        return 1.0

    err = decorate_error(judge)
    assert "First parameter 'solution_str' cannot have a default value" in str(err)


def test_ground_truth_must_not_have_a_default() -> None:
    def judge(solution_str: str, ground_truth: str = "", extra_info=None) -> float:
        return 1.0

    err = decorate_error(judge)
    assert "Second parameter 'ground_truth' cannot have a default value" in str(err)


def test_parameter_count_and_names() -> None:
    def two(solution_str: str, ground_truth: str) -> float:
        return 1.0

    assert "at least 3 parameters, got 2" in str(decorate_error(two))

    def misnamed(solution_str: str, ground_truth: str, info: dict) -> float:
        return 1.0

    assert "Third parameter must be named 'extra_info', got 'info'" in str(decorate_error(misnamed))


@osmosis_rubric
def echo(solution_str: str, ground_truth: Optional[str], extra_info: dict) -> float:  # noqa: UP045
    return float(extra_info.get("score", 0.0)) if extra_info else 0.0


def test_call_time_checks_solution_str_type() -> None:
    with pytest.raises(SignatureError, match="'solution_str' must be a string, got int"):
        echo(5, "gt", {})


def test_call_time_checks_ground_truth_type() -> None:
    assert echo("a", None, {"score": 1}) == 1.0
    with pytest.raises(SignatureError, match="'ground_truth' must be a string or None, got list"):
        echo("a", ["gt"], {})


def test_call_time_requires_each_argument() -> None:
    with pytest.raises(SignatureError, match="'solution_str' argument is required"):
        echo(ground_truth="g", extra_info={})
    with pytest.raises(SignatureError, match="'ground_truth' argument is required"):
        echo("a", extra_info={})
    with pytest.raises(SignatureError, match="'extra_info' argument is required"):
        echo("a", "g")


def test_extra_info_value_is_not_inspected() -> None:
    assert echo("a", "g", None) == 0.0
    assert echo("a", "g", {}) == 0.0


def test_binding_errors_name_the_function() -> None:
    with pytest.raises(SignatureError, match="echo"):
        echo("a", "g", {}, "too many")


def test_data_source_keyword_is_dropped() -> None:
    assert echo("a", "g", {"score": 0.5}, data_source="x") == 0.5


def test_result_must_be_a_number() -> None:
    @osmosis_rubric
    def wordy(solution_str: str, ground_truth: str, extra_info: dict) -> float:
        return "great"  # type: ignore[return-value]

    with pytest.raises(SignatureError, match="must return a float, got str"):
        wordy("a", "b", {})


def test_async_rubric_checks_arguments_and_result() -> None:
    @osmosis_rubric
    async def judge(solution_str: str, ground_truth: str, extra_info: dict) -> float:
        return 3.0 if extra_info.get("as_float", True) else 3

    assert asyncio.run(judge("a", "b", {})) == 3.0
    with pytest.raises(SignatureError, match="'solution_str' must be a string"):
        asyncio.run(judge(1, "b", {}))
    with pytest.raises(TypeError, match=r"must return a float, got int \(3\)"):
        asyncio.run(judge("a", "b", {"as_float": False}))


def test_postponed_annotations_module() -> None:
    from tests.fixtures import postponed_rewards

    assert postponed_rewards.reward("a", "a") == 1.0
    assert postponed_rewards.rubric("a", None, {}) == 0.5
