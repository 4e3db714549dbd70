"""@osmosis_reward: every decoration-time rule, call-time behaviour, async support and messages."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Optional, Union

import pytest

from osmosis_ai import SignatureError, osmosis_reward


def decorate_error(func) -> SignatureError:
    with pytest.raises(SignatureError) as info:
        osmosis_reward(func)
    assert isinstance(info.value, TypeError), "contract breaches must stay catchable as TypeError"
    return info.value


# --- accepted signatures ------------------------------------------------------------------------------------


def test_classic_signature_is_accepted_and_wraps_transparently() -> None:
    def exact(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
        """Docstring kept."""
        return float(solution_str == ground_truth)

    wrapped = osmosis_reward(exact)
    assert wrapped("a", "a") == 1.0
    assert wrapped.__name__ == "exact"
    assert wrapped.__doc__ == "Docstring kept."
    assert wrapped.__wrapped__ is exact
    assert list(inspect.signature(wrapped).parameters) == ["solution_str", "ground_truth", "extra_info"]
    assert wrapped.__osmosis_contract__ == "reward"


def test_any_default_on_extra_info_is_accepted() -> None:
    @osmosis_reward
    def with_empty_dict(solution_str: str, ground_truth: str, extra_info: dict = {}) -> float:  # noqa: B006
        return 0.5

    assert with_empty_dict("x", "y") == 0.5


def test_extra_parameters_beyond_the_third_are_allowed() -> None:
    @osmosis_reward
    def extended(solution_str: str, ground_truth: str, extra_info: dict = None, scale: float = 2.0, **kw):
        return scale

    assert extended("x", "y", None, scale=3.0) == 3.0


def test_postponed_annotations_are_resolved_in_this_module() -> None:
    # This module uses `from __future__ import annotations`: every annotation here is a string.
    def postponed(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
        return 1.0

    assert postponed.__annotations__["solution_str"] == "str"
    assert osmosis_reward(postponed)("a", "b") == 1.0


def test_unresolvable_string_annotations_still_read_simple_spellings() -> None:
    def forward(
        solution_str: str,
        ground_truth: str,
        extra_info: dict = None,
        other: NotDefinedAnywhere = None,  # noqa: F821
    ):
        return 1.0

    assert osmosis_reward(forward)("a", "b") == 1.0


def test_full_mode_signature_is_accepted() -> None:
    @osmosis_reward
    def conversation(messages: list, ground_truth: str, metadata: dict) -> float:
        return float(len(messages))

    assert conversation.__osmosis_contract__ == "eval_full"
    assert conversation(messages=[{"role": "user"}], ground_truth="x", metadata={}) == 1.0


# --- rejected signatures, with message content --------------------------------------------------------------


def test_too_few_parameters() -> None:
    def two(solution_str: str, ground_truth: str) -> float:
        return 0.0

    err = decorate_error(two)
    assert "two" in str(err)
    assert "must have at least 3 parameters, got 2" in str(err)
    assert err.function.endswith("two")


def test_a_function_without_parameters_is_accepted_unchecked() -> None:
    # 0.2.15+: only a first parameter named `solution_str` selects the classic contract.
    no_params = osmosis_reward(lambda: 0.5)
    assert no_params() == 0.5
    assert no_params.__osmosis_contract__ == "custom"


def test_any_other_first_parameter_is_accepted_unchecked() -> None:
    # The signature of public branches of the git-sync example.
    @osmosis_reward
    def engagement_reward(state: dict, action: dict, next_state: dict, metadata: dict = None) -> float:
        return 0.1 + len(next_state)

    assert engagement_reward({}, {}, {"a": 1}) == 1.1
    assert engagement_reward.__osmosis_contract__ == "custom"
    # The result rule still holds: the README's strict float rule covers every decorated function.
    with pytest.raises(SignatureError, match="must return a float"):
        osmosis_reward(lambda answer: 1)("x")


@pytest.mark.parametrize("index,name", [(1, "ground_truth"), (2, "extra_info")])
def test_second_and_third_parameter_names(index: int, name: str) -> None:
    params = ["solution_str: str", "ground_truth: str", "extra_info: dict = None"]
    params[index] = "wrong_name: str = None" if index == 2 else "wrong_name: str"
    namespace: dict[str, Any] = {}
    exec(f"def f({', '.join(params)}):\n    return 0.0", namespace)
    err = decorate_error(namespace["f"])
    ordinal = ["First", "Second", "Third"][index]
    assert f"{ordinal} parameter must be named '{name}', got 'wrong_name'" in str(err)


@pytest.mark.parametrize(
    "annotation,shown",
    [("int", "int"), ("Optional[str]", "str | None"), ("bytes", "bytes")],
)
def test_solution_str_annotation(annotation: str, shown: str) -> None:
    namespace: dict[str, Any] = {"Optional": Optional}
    exec(
        f"def f(solution_str: {annotation}, ground_truth: str, extra_info: dict = None):\n    return 0.0",
        namespace,
    )
    err = decorate_error(namespace["f"])
    assert f"First parameter 'solution_str' must be annotated as str, got {shown}" in str(err)
    assert err.parameter == "solution_str"
    assert err.expected == "str"


def test_missing_annotation_is_named_plainly() -> None:
    def bare(solution_str, ground_truth: str, extra_info: dict = None):
        return 0.0

    err = decorate_error(bare)
    assert "must be annotated as str, got no annotation" in str(err)


def test_ground_truth_must_be_plain_str() -> None:
    def optional_gt(solution_str: str, ground_truth: Optional[str], extra_info: dict = None):  # noqa: UP045
        return 0.0

    err = decorate_error(optional_gt)
    assert "Second parameter 'ground_truth' must be annotated as str, got str | None" in str(err)


def _reward_with_extra_info(annotation: str) -> Any:
    namespace: dict[str, Any] = {"Optional": Optional, "Union": Union, "Any": Any}
    exec(
        f"def f(solution_str: str, ground_truth: str, extra_info: {annotation} = None):\n    return 0.5",
        namespace,
    )
    return namespace["f"]


@pytest.mark.parametrize(
    "annotation", ["Optional[dict]", "dict | None", "Union[dict, None]", "'dict | None'"]
)
def test_extra_info_may_be_an_optional_dict(annotation: str) -> None:
    # The signature v0.2.17's docs and tests write.
    wrapped = osmosis_reward(_reward_with_extra_info(annotation))
    assert wrapped("a", "b") == 0.5
    assert wrapped.__osmosis_contract__ == "reward"


@pytest.mark.parametrize("annotation", ["dict[str, Any]", "str | None", "list"])
def test_extra_info_must_be_annotated_dict(annotation: str) -> None:
    err = decorate_error(_reward_with_extra_info(annotation))
    assert "Third parameter 'extra_info' must be annotated as dict" in str(err)
    assert err.parameter == "extra_info"


def test_extra_info_needs_a_default() -> None:
    def no_default(solution_str: str, ground_truth: str, extra_info: dict) -> float:
        return 0.0

    err = decorate_error(no_default)
    assert "Third parameter 'extra_info' must have a default value" in str(err)
    assert err.expected == "a default value"


def test_a_messages_function_that_is_no_full_mode_eval_function_is_custom() -> None:
    def partial(messages: list, ground_truth: str, extra: int) -> float:
        return 0.0

    assert osmosis_reward(partial).__osmosis_contract__ == "custom"


def test_non_callable_is_rejected() -> None:
    with pytest.raises(SignatureError, match="expects a function"):
        osmosis_reward(42)  # type: ignore[arg-type]


# --- call time ----------------------------------------------------------------------------------------------


@osmosis_reward
def returns(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    return extra_info["value"]


@pytest.mark.parametrize("value", [0.25, 0.0, 1.0, -3.5])
def test_float_results_come_back_unchanged(value: float) -> None:
    result = returns("a", "b", {"value": value})
    assert result == value
    assert type(result) is float


@pytest.mark.parametrize(
    "value,type_name",
    [(1, "int"), (0, "int"), (True, "bool"), ("1.0", "str"), (None, "NoneType"), ([1.0], "list")],
)
def test_anything_but_a_float_is_a_type_error_naming_function_value_and_fix(
    value: object, type_name: str
) -> None:
    # The training platform rejects these; a local call must fail the same way, not pass.
    with pytest.raises(TypeError) as info:
        returns("a", "b", {"value": value})
    assert isinstance(info.value, SignatureError)
    message = str(info.value)
    assert f"Function 'returns' must return a float, got {type_name} ({value!r})" in message
    assert "return float(" in message


def test_numpy_scalars_are_refused_too() -> None:
    np = pytest.importorskip("numpy")
    for value in (np.float64(0.5), np.float32(0.5), np.int64(1)):
        with pytest.raises(TypeError, match="must return a float, got "):
            returns("a", "b", {"value": value})


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_floats_are_refused(value: float) -> None:
    with pytest.raises(TypeError, match="not a finite number"):
        returns("a", "b", {"value": value})


def test_data_source_is_dropped_when_the_function_cannot_take_it() -> None:
    assert returns("a", "b", {"value": 0.5}, data_source="gsm8k") == 0.5


def test_data_source_is_kept_when_declared() -> None:
    @osmosis_reward
    def wants_source(solution_str: str, ground_truth: str, extra_info: dict = None, data_source: str = ""):
        return 1.0 if data_source == "gsm8k" else 0.0

    assert wants_source("a", "b", data_source="gsm8k") == 1.0


def test_data_source_is_kept_for_var_keyword() -> None:
    @osmosis_reward
    def takes_kwargs(solution_str: str, ground_truth: str, extra_info: dict = None, **kwargs: Any):
        return float(kwargs.get("data_source") == "math")

    assert takes_kwargs("a", "b", data_source="math") == 1.0


def test_call_time_argument_errors_stay_python_errors() -> None:
    with pytest.raises(TypeError):
        returns("a", "b", {"value": 1.0}, unexpected=True)


# --- async --------------------------------------------------------------------------------------------------


def test_async_reward_is_awaited_and_checked() -> None:
    @osmosis_reward
    async def slow(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
        await asyncio.sleep(0)
        return 1.0 if extra_info is None else extra_info["value"]

    assert inspect.iscoroutinefunction(slow)
    result = asyncio.run(slow("a", "a"))
    assert result == 1.0 and type(result) is float
    with pytest.raises(TypeError, match=r"must return a float, got int \(1\)"):
        asyncio.run(slow("a", "a", {"value": 1}))


def test_async_reward_bad_result_is_reported() -> None:
    @osmosis_reward
    async def bad(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
        return "nope"  # type: ignore[return-value]

    with pytest.raises(SignatureError, match="must return a float, got str"):
        asyncio.run(bad("a", "a"))


def test_async_reward_signature_is_checked_at_decoration() -> None:
    async def bad_sig(solution_str: str, ground_truth: str) -> float:
        return 1.0

    err = decorate_error(bad_sig)
    assert "at least 3 parameters, got 2" in str(err)


def _bad(solution_str: int, ground_truth: str, extra_info: dict = None) -> float:
    return 0.0


def _worse(solution_str: str) -> float:
    return 0.0


def _good(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    return 1.0


def test_collect_signature_errors_lists_every_breach_and_only_inside_the_block() -> None:
    from osmosis_ai import osmosis_rubric
    from osmosis_ai.rewards import collect_signature_errors

    with collect_signature_errors() as errors:
        assert osmosis_reward(_bad) is _bad
        assert osmosis_rubric(_worse) is _worse
        good = osmosis_reward(_good)
    assert [e.function for e in errors] == ["_bad", "_worse"]
    assert good.__osmosis_contract__ == "reward"
    assert not hasattr(_bad, "__osmosis_contract__")
    with pytest.raises(SignatureError):
        osmosis_reward(_bad)
