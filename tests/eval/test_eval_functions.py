"""Loading eval functions by path, mode detection through the core, and scoring a conversation."""

import asyncio
import textwrap
from pathlib import Path

import pytest

from osmosis_ai.errors import EvalFnError
from osmosis_ai.eval.functions import final_assistant_text, load_eval_function, load_eval_functions

MODULE = """
from osmosis_ai import osmosis_reward

@osmosis_reward
def exact(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    return float(solution_str == ground_truth)

def by_turns(messages, ground_truth, metadata):
    return len(messages)

async def async_simple(solution_str, ground_truth, extra_info):
    return 0.5

def bad_signature(text, truth):
    return 1.0

def returns_text(solution_str, ground_truth, extra_info):
    return "yes"

def returns_nan(solution_str, ground_truth, extra_info):
    return float("nan")

def returns_true(solution_str, ground_truth, extra_info):
    return solution_str == ground_truth

def returns_none(solution_str, ground_truth, extra_info):
    return None

def returns_int(solution_str, ground_truth, extra_info):
    return int(solution_str == ground_truth)

@osmosis_reward
def decorated_int(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    return 1

def raises(solution_str, ground_truth, extra_info):
    raise KeyError("missing key")

NOT_CALLABLE = 3
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    package = tmp_path / "reward_fn_evalfixture"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "scoring.py").write_text(textwrap.dedent(MODULE))
    return tmp_path


ROW = {"ground_truth": "42", "user_prompt": "q", "system_prompt": "s", "topic": "math"}
MESSAGES = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
    {"role": "tool", "content": "result"},
    {"role": "assistant", "content": "42"},
]


def score(fn, messages=MESSAGES, row=ROW) -> float:
    return asyncio.run(fn.score(messages, row))


def test_simple_mode_through_the_reward_decorator(repo: Path) -> None:
    fn = load_eval_function("reward_fn_evalfixture.scoring:exact", root=repo)
    assert fn.mode == "simple"
    assert fn.name == "reward_fn_evalfixture.scoring:exact"
    assert score(fn) == 1.0


def test_full_mode_receives_the_messages(repo: Path) -> None:
    fn = load_eval_function("reward_fn_evalfixture.scoring:by_turns", root=repo)
    assert fn.mode == "full"
    assert score(fn) == 4.0


def test_async_functions_are_awaited(repo: Path) -> None:
    assert score(load_eval_function("reward_fn_evalfixture.scoring:async_simple", root=repo)) == 0.5


@pytest.mark.parametrize(
    "path,message",
    [
        ("no_colon", "Expected format: 'module.path:attribute_name'"),
        ("missing_module_xyz:f", "no module named 'missing_module_xyz'"),
        ("reward_fn_evalfixture.scoring:exat", "has no attribute 'exat'. Did you mean: exact?"),
        ("reward_fn_evalfixture.scoring:NOT_CALLABLE", "is not callable"),
        ("reward_fn_evalfixture.scoring:bad_signature", "First parameter must be named 'solution_str' or"),
    ],
)
def test_load_errors(repo: Path, path: str, message: str) -> None:
    with pytest.raises(EvalFnError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_eval_function(path, root=repo)


def test_duplicates_are_rejected(repo: Path) -> None:
    path = "reward_fn_evalfixture.scoring:exact"
    with pytest.raises(EvalFnError, match="Duplicate eval function path"):
        load_eval_functions([path, path], root=repo)


def test_root_is_not_left_on_sys_path(repo: Path) -> None:
    import sys

    load_eval_function("reward_fn_evalfixture.scoring:exact", root=repo)
    assert str(repo.resolve()) not in sys.path


@pytest.mark.parametrize(
    "name,message",
    [
        ("returns_text", r"must return a number \(int or float\), got str"),
        ("returns_nan", "returned nan, which is not a finite number"),
        # A bool is an answer, not a score: `True` must not count as 1.0.
        ("returns_true", r"must return a number \(int or float\), got bool \(True\)"),
        ("returns_none", r"must return a number \(int or float\), got NoneType \(None\)"),
        # The decorator's strict rule still applies when a decorated reward is used as an eval function.
        ("decorated_int", r"must return a float, got int \(1\)"),
        ("raises", "KeyError: 'missing key'"),
    ],
)
def test_scoring_failures_are_errors_not_zeros(repo: Path, name: str, message: str) -> None:
    fn = load_eval_function(f"reward_fn_evalfixture.scoring:{name}", root=repo)
    with pytest.raises(EvalFnError, match=message):
        score(fn)


def test_plain_int_is_a_score(repo: Path) -> None:
    fn = load_eval_function("reward_fn_evalfixture.scoring:returns_int", root=repo)
    result = score(fn)
    assert result == 1.0 and type(result) is float


def test_final_assistant_text_skips_tool_call_turns_and_joins_parts() -> None:
    assert final_assistant_text(MESSAGES) == "42"
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "4"}, {"type": "text", "text": "2"}]}]
    assert final_assistant_text(parts) == "42"
    assert final_assistant_text([{"role": "user", "content": "x"}]) == ""


def test_final_assistant_text_takes_the_last_assistant_content() -> None:
    from osmosis_ai.eval.functions import final_assistant_text

    parts = [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]
    conversation = [{"role": "assistant", "content": "first"}, {"role": "user", "content": "q"}]
    assert final_assistant_text([*conversation, {"role": "assistant", "content": None}]) == "first"
    assert final_assistant_text([*conversation, {"role": "assistant", "content": parts}]) == "ab"
    assert final_assistant_text([*conversation, {"role": "assistant", "content": 42}]) == "42"
    assert final_assistant_text([{"role": "user", "content": "q"}]) == ""
