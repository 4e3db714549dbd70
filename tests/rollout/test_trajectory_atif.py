"""The one ATIF builder (osmosis_ai.rollout.trajectory) and the strict check (osmosis_ai.atif, Rust core).

Every document built here is checked twice: by the package's check and by the independent one of
tests/atif_check.py (a JSON Schema from the public ATIF RFC, jsonschema, and the RFC's cross-field rules).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osmosis_ai.atif import check_trajectory, check_trajectory_files
from osmosis_ai.rollout.trajectory import build_trajectory, read_call_report, trajectory_json
from tests.atif_check import assert_invalid_atif, assert_valid_atif, independent_problems

TOOLS = [
    {"role": "system", "content": "You add numbers."},
    {"role": "user", "content": "2+2?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'}},
            {"id": "c2", "type": "function", "function": {"name": "check", "arguments": "{}"}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "4"},
    {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "ok"}]},
    {"role": "assistant", "content": "4"},
]


def build(messages: list[Any], **options: Any) -> dict[str, Any]:
    document = build_trajectory(messages, rollout_id="r1", producer_version="0.0-test", **options)
    assert document is not None
    assert_valid_atif(document)
    return document


def test_tool_calls_become_agent_tool_calls_and_their_results_its_observation() -> None:
    document = build(TOOLS, context={"request_extra_fields": {"row_index": 0, "run_index": 2}})
    assert document["schema_version"] == "ATIF-v1.7"
    assert (document["session_id"], document["trajectory_id"]) == ("r1", "r1")
    assert document["agent"] == {"name": "osmosis-rollout-sdk", "version": "0.0-test"}
    system, user, call, answer = document["steps"]
    assert [s["step_id"] for s in document["steps"]] == [1, 2, 3, 4]
    assert (system["source"], system["message"]) == ("system", "You add numbers.")
    assert (user["source"], user["message"]) == ("user", "2+2?")
    assert call["source"] == "agent" and call["message"] == ""
    assert call["tool_calls"] == [
        {"tool_call_id": "c1", "function_name": "add", "arguments": {"a": 2, "b": 2}},
        {"tool_call_id": "c2", "function_name": "check", "arguments": {}},
    ]
    assert call["observation"] == {
        "results": [{"source_call_id": "c1", "content": "4"}, {"source_call_id": "c2", "content": "ok"}]
    }
    assert (answer["source"], answer["message"]) == ("agent", "4")
    assert document["final_metrics"] == {"total_steps": 4}
    assert document["extra"] == {
        "osmosis": {"rollout_id": "r1", "request_extra_fields": {"row_index": 0, "run_index": 2}}
    }


def test_a_conversation_of_several_turns_keeps_its_order() -> None:
    messages = []
    for turn in range(3):
        messages += [{"role": "user", "content": f"q{turn}"}, {"role": "assistant", "content": f"a{turn}"}]
    steps = build(messages)["steps"]
    assert [(s["source"], s["message"]) for s in steps] == [
        ("user", "q0"), ("agent", "a0"), ("user", "q1"), ("agent", "a1"), ("user", "q2"), ("agent", "a2"),
    ]  # fmt: skip


def test_per_call_metrics_matched_to_agent_steps() -> None:
    calls = [
        {"prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.001, "model_name": "m-1"},
        {"prompt_tokens": 20, "completion_tokens": 1, "cached_tokens": 8, "logprobs": [-0.25]},
    ]
    document = build(TOOLS, llm_calls=calls, model_name="openai/m")
    call, answer = document["steps"][2:]
    assert call["metrics"] == {"prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.001}
    assert call["model_name"] == "m-1" and call["llm_call_count"] == 1
    assert answer["metrics"] == {
        "prompt_tokens": 20,
        "completion_tokens": 1,
        "cached_tokens": 8,
        "logprobs": [-0.25],
    }
    assert "model_name" not in answer and document["agent"]["model_name"] == "openai/m"
    assert document["final_metrics"] == {
        "total_prompt_tokens": 30, "total_completion_tokens": 6, "total_cached_tokens": 8,
        "total_cost_usd": 0.001, "total_steps": 4,
    }  # fmt: skip
    assert "unmatched_llm_call_metrics" not in document["extra"]["osmosis"]


def test_per_call_metrics_that_do_not_match_the_agent_steps_are_kept_aside() -> None:
    calls = [{"prompt_tokens": 1, "completion_tokens": 1}] * 3  # three calls, two agent steps
    document = build(TOOLS, llm_calls=calls)
    assert all("metrics" not in step for step in document["steps"])
    assert document["extra"]["osmosis"]["unmatched_llm_call_metrics"] == calls
    assert document["final_metrics"] == {
        "total_prompt_tokens": 3,
        "total_completion_tokens": 3,
        "total_steps": 4,
    }


def test_inline_usage_is_the_steps_metrics_and_a_report_overrides_it_field_by_field() -> None:
    answer = {
        "role": "assistant", "content": "4", "model": "gpt-x", "created_at": 1_700_000_000,
        "usage": {"input_tokens": 7, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 3}},
    }  # fmt: skip
    step = build([{"role": "user", "content": "q"}, answer])["steps"][1]
    assert step["metrics"] == {
        "prompt_tokens": 7, "completion_tokens": 2, "cached_tokens": 3,
        "extra": {"input_tokens_details": {"cached_tokens": 3}},
    }  # fmt: skip
    assert step["model_name"] == "gpt-x" and step["llm_call_count"] == 1
    assert step["timestamp"] == "2023-11-14T22:13:20+00:00"
    reported = build([{"role": "user", "content": "q"}, answer], llm_calls=[{"completion_tokens": 9}])
    assert reported["steps"][1]["metrics"]["completion_tokens"] == 9
    assert reported["steps"][1]["metrics"]["prompt_tokens"] == 7


def test_reported_totals_win_unless_malformed_and_the_step_count_is_always_the_documents() -> None:
    calls = [{"prompt_tokens": 1}, {"prompt_tokens": 1}]
    totals = {"total_prompt_tokens": 100, "total_steps": 99}
    assert build(TOOLS, llm_calls=calls, final_metrics=totals)["final_metrics"] == {
        "total_prompt_tokens": 100, "total_steps": 4,
    }  # fmt: skip
    for bad in ({"total_prompt_tokens": "many"}, {"total_tokens": 5}, {"total_cost_usd": math.inf}):
        assert build(TOOLS, llm_calls=calls, final_metrics=bad)["final_metrics"] == {
            "total_prompt_tokens": 2, "total_steps": 4,
        }  # fmt: skip


def test_what_does_not_fit_a_field_goes_to_extra() -> None:
    messages = [
        {"role": "tool", "tool_call_id": "early", "content": "before any agent turn"},
        {"role": "critic", "content": "hmm"},
        {"role": "user", "content": "q", "tool_calls": [{"id": "u1", "function": {"name": "f"}}],
         "reasoning_content": {"plan": 1}},
        {"role": "developer", "content": [{"type": "image_url", "image_url": {"url": "http://x/a.png"}}]},
        {"role": "assistant", "content": "a", "reasoning_content": {"why": ["x"]},
         "tool_calls": [{"function": {"name": "g", "arguments": "not json"}}, "junk",
                        {"id": "n", "function": {"arguments": '{"x": NaN}'}}]},
        {"role": "tool", "tool_call_id": "elsewhere", "content": None},
        "not a message",
        {"role": "assistant", "content": "b", "timestamp": "garbage", "usage": {"prompt_tokens": "9"}},
    ]  # fmt: skip
    steps = build(messages)["steps"]
    assert steps[0] == {
        "step_id": 1, "source": "system", "message": "",
        "observation": {"results": [{"content": "before any agent turn", "extra": {"tool_call_id": "early"}}]},
        "extra": {"original_role": "tool"},
    }  # fmt: skip
    assert steps[1]["source"] == "user" and steps[1]["extra"] == {"original_role": "critic"}
    assert "tool_calls" not in steps[2] and steps[2]["extra"]["tool_calls"][0]["function_name"] == "f"
    assert steps[2]["extra"]["reasoning_content"] == '{"plan":1}'
    assert steps[3]["source"] == "system" and json.loads(steps[3]["message"])[0]["type"] == "image_url"
    agent = steps[4]
    assert agent["reasoning_content"] == '{"why":["x"]}'
    assert [c["arguments"] for c in agent["tool_calls"]] == [{"_raw": "not json"}, {"_raw": '{"x": NaN}'}]
    assert (
        agent["tool_calls"][0]["tool_call_id"] == "call_0"
        and agent["tool_calls"][1]["function_name"] == "unknown"
    )
    assert agent["observation"]["results"] == [{"content": "", "extra": {"tool_call_id": "elsewhere"}}]
    assert "timestamp" not in steps[5] and "metrics" not in steps[5]  # a wrong type is left out, not guessed


def test_no_conversation_no_document() -> None:
    assert build_trajectory([], rollout_id="r1") is None
    assert build_trajectory(["x", 3], rollout_id="r1") is None


def test_the_call_report_of_a_callback_answer() -> None:
    body = {
        "status": "ok",
        "trajectory": {
            "model_name": "top",
            "samples": {"any": {"llm_call_metrics": [{"prompt_tokens": 5}, "junk"], "final_metrics": {"total_prompt_tokens": 5}}},
        },
    }  # fmt: skip
    report = read_call_report(body)
    assert report is not None and report.model_name == "top"
    assert report.llm_calls == ({"prompt_tokens": 5},) and report.final_metrics == {"total_prompt_tokens": 5}
    several = read_call_report({"trajectory": {"samples": {"a": {}, "b": {}}}})
    assert several is not None and several.llm_calls == () and several.unmatched_samples == {"a": {}, "b": {}}
    for nothing in (
        None,
        [],
        {"status": "ok"},
        {"trajectory": {"samples": []}},
        {"trajectory": {"samples": {"a": 1}}},
    ):
        assert read_call_report(nothing) is None


# --- the check itself ------------------------------------------------------------------------------------


def _valid() -> dict[str, Any]:
    return build(TOOLS, llm_calls=[{"prompt_tokens": 1}, {"prompt_tokens": 2}])


@pytest.mark.parametrize(
    "edit,field",
    [
        (lambda d: d.update(messages=[]), "messages"),  # an older file of ours: not ATIF
        (lambda d: d["steps"][1].update(source="assistant"), "steps[1].source"),
        (lambda d: d["steps"][2].update(step_id=7), "steps[2].step_id"),
        (lambda d: d["steps"][2]["metrics"].update(prompt_tokens=1.5), "steps[2].metrics.prompt_tokens"),
        (lambda d: d["steps"][1].update(metrics={"prompt_tokens": 1}), "steps[1].metrics"),
        (lambda d: d["steps"][2]["tool_calls"][0].update(arguments="{}"), "steps[2].tool_calls[0].arguments"),
        (lambda d: d["steps"][2]["observation"]["results"][0].update(source_call_id="c9"),
         "steps[2].observation.results[0].source_call_id"),
        (lambda d: d["agent"].pop("version"), "agent.version"),
        (lambda d: d.update(steps=[]), "steps"),
        (lambda d: d["final_metrics"].update(total_steps=-1), "final_metrics.total_steps"),
        (lambda d: d.update(schema_version="ATIF-v2"), "schema_version"),
        (lambda d: d["steps"][0].update(message=None), "steps[0].message"),
    ],
)  # fmt: skip
def test_broken_documents_fail_both_checks_and_ours_names_the_field(edit: Any, field: str) -> None:
    document = _valid()
    edit(document)
    assert_invalid_atif(document, field)


def test_files_are_checked_in_order_and_a_missing_one_says_so(tmp_path: Any) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({**_valid(), "extra": {"osmosis": {"rollout_id": "r9"}}}))
    bad.write_text("{not json")
    checks = check_trajectory_files([good, bad, tmp_path / "missing.json"])
    assert checks[0].valid and checks[0].rollout_id == "r9"
    assert not checks[1].valid and checks[1].describe().startswith("is not valid JSON")
    assert checks[2].missing and not checks[2].valid
    assert not check_trajectory({**_valid(), "notes": math.nan}).valid  # NaN is not JSON


# --- properties ------------------------------------------------------------------------------------------

_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=8))
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_content = st.one_of(
    st.none(), st.text(max_size=10), _json,
    st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url"]), "text": st.text(max_size=5)}), max_size=3),
)  # fmt: skip
_tool_call = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"id": st.one_of(st.none(), st.sampled_from(["c1", "c2", ""]), st.integers())},
        optional={
            "function": st.one_of(
                _json,
                st.fixed_dictionaries({}, optional={
                    "name": st.one_of(st.text(max_size=5), st.none(), st.integers()),
                    "arguments": st.one_of(st.sampled_from(["{}", '{"a": 1}', "[1]", "{bad", '{"x": NaN}']), _json),
                }),
            )
        },
    ),
)  # fmt: skip
_usage = st.one_of(
    _json,
    st.fixed_dictionaries({}, optional={
        k: st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.booleans(), st.none())
        for k in ("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens", "cached_tokens", "cost_usd")
    }),
)  # fmt: skip
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "critic", ""])},
    optional={
        "content": _content,
        "tool_calls": st.one_of(st.lists(_tool_call, max_size=3), _json),
        "tool_call_id": st.one_of(st.sampled_from(["c1", "c2", "zz"]), _json),
        "reasoning_content": _json,
        "usage": _usage,
        "model": _json,
        "created_at": st.one_of(st.floats(), st.integers(), st.text(max_size=12), st.sampled_from(["2025-10-16T14:30:00Z"])),
    },
)  # fmt: skip
_call = st.fixed_dictionaries({}, optional={
    "prompt_tokens": _scalars, "completion_tokens": _scalars, "cost_usd": _scalars, "model_name": _scalars,
    "logprobs": st.lists(st.floats(), max_size=2), "prompt_token_ids": st.lists(_scalars, max_size=2), "extra": _json,
})  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    messages=st.lists(st.one_of(_message, _json), max_size=8),
    calls=st.lists(_call, max_size=4),
    totals=st.one_of(st.none(), st.dictionaries(st.sampled_from(["total_prompt_tokens", "total_cost_usd", "x"]), _scalars)),
)  # fmt: skip
def test_whatever_the_conversation_holds_the_document_is_valid_atif(
    messages: list[Any], calls: list[dict[str, Any]], totals: dict[str, Any] | None
) -> None:
    document = build_trajectory(messages, rollout_id="r1", llm_calls=calls, final_metrics=totals)
    if document is None:
        assert not any(isinstance(m, dict) for m in messages)
        return
    stored = json.loads(trajectory_json(document))  # what every writer stores
    ours = check_trajectory(stored)
    assert ours.valid, ours.describe()
    assert independent_problems(stored) == []


_stamps = st.one_of(
    st.builds(
        lambda d, sep, t, tz: f"{d}{sep}{t}{tz}",
        st.sampled_from(["2025-10-16", "20251016", "2024-02-29", "2025-02-29", "2025-W42-4", "2026-W53", "2025-13-01"]),
        st.sampled_from(["T", " ", "t", "x"]),
        st.sampled_from(["14", "14:30", "1430", "14:30:00", "143000", "14:30:00.5", "14:30:00,123456789", "24:00", "14:3"]),
        st.sampled_from(["", "Z", "+05", "+05:30", "-0530", "+05:30:15.5", "+24:00", "ZZ", "+"]),
    ),
    st.sampled_from(["2025-10-16", "2025-W42", "2025-289", ""]),
    st.text(max_size=12),
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(stamp=_stamps)
def test_timestamps_are_iso_8601_as_python_reads_them(stamp: str) -> None:
    # The established package reads a step timestamp with datetime.fromisoformat (Python 3.11+) after
    # turning "Z" into "+00:00": the core's check accepts exactly what that accepts.
    try:
        dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        python_accepts = True
    except ValueError:
        python_accepts = False
    document = {
        "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "", "timestamp": stamp}],
    }
    assert check_trajectory(document).valid == python_accepts, stamp
