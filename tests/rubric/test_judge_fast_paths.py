"""The judge's fast paths give what the plain ones give: JudgeTemplate builds the request (or error) prepare
builds, the reply parse reads what the json module reads, the preview collapses a head of the text as the
whole, a run's stamp is datetime's isoformat, and the document's record names read without the rows are the
records' labels."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osmosis_ai.errors import DatasetParseError, MissingAPIKeyError
from osmosis_ai.rubric.engine import PREVIEW_LIMIT, preview_text, utc_stamp
from osmosis_ai.rubric.judge_request import JudgeTemplate, prepare
from osmosis_ai.rubric.records import RecordSource

BASE = {"provider": "openai", "model": "judge-1", "api_key": "sk-test", "base_url": "http://127.0.0.1:9/v1"}

MODEL_INFOS: list[dict[str, Any]] = [
    BASE,
    {**BASE, "system_prompt": "Be strict.", "temperature": 0.3, "seed": 7, "max_tokens": 64},
    {**BASE, "score_min": -1, "score_max": 5, "original_input": "the question", "response_format": "none"},
    {**BASE, "timeout": 12, "max_retries": 0, "max_parse_retries": 1, "retry_base_delay": 0.1},
    {"provider": "openai", "model": "gpt-5-mini", "api_key": "sk-test"},
]
CALLS: list[dict[str, Any]] = [
    {},
    {"ground_truth": "42", "original_input": "What is 6 x 7?", "metadata": {"topic": "maths", "n": 1}},
    {"score_min": -0.0, "score_max": 10},
    {"score_min": 0, "score_max": 1, "original_input": "   "},
]


@pytest.mark.parametrize("model_info", MODEL_INFOS)
@pytest.mark.parametrize("call", CALLS)
def test_template_builds_what_prepare_builds(model_info: dict[str, Any], call: dict[str, Any]) -> None:
    template = JudgeTemplate(model_info, {})
    for solution in ("The answer is 42.", "```json\n{}\n``` said the model"):
        expected = prepare("Is it right?", solution, model_info, **call)
        assert template.prepare("Is it right?", solution, **call) == expected


@pytest.mark.parametrize("model_info", MODEL_INFOS)
def test_one_template_builds_what_prepare_builds_call_after_call(model_info: dict[str, Any]) -> None:
    # The template keeps the last range: the same bounds again, other bounds, and -0.0 after 0.0 (equal,
    # written apart) must each give prepare's request.
    template = JudgeTemplate(model_info, {})
    low, zero, negative_zero = 0.0, 0.0, -0.0
    calls = [*CALLS, *CALLS, {"score_min": zero}, {"score_min": negative_zero}, {"score_min": low}, {}]
    for call in calls:
        assert template.prepare("Is it right?", "42", **call) == prepare(
            "Is it right?", "42", model_info, **call
        )


ERRORS: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    ({**BASE, "timeout": -1}, {}, "'timeout' must be a positive number"),
    ({**BASE, "response_format": "xml"}, {}, "'response_format' must be one of"),
    ({**BASE, "max_retries": -2}, {}, "'max_retries' must be a non-negative integer"),
    ({"provider": "openai"}, {}, "'model_info' must include a 'model' string"),
    (BASE, {"score_min": 2, "score_max": 1}, "'score_max' must be greater than 'score_min'"),
    # A record's bad range is named before a bad option, as prepare names it.
    ({**BASE, "timeout": -1}, {"score_min": 2, "score_max": 1}, "'score_max' must be greater"),
]


@pytest.mark.parametrize(("model_info", "call", "message"), ERRORS)
def test_template_fails_as_prepare_fails(
    model_info: dict[str, Any], call: dict[str, Any], message: str
) -> None:
    template = JudgeTemplate(model_info, {})
    for solution in ("42", "  "):  # a blank candidate is named after a bad model_info, before the rest
        with pytest.raises((TypeError, ValueError)) as expected:
            prepare("Is it right?", solution, model_info, **call)
        with pytest.raises(type(expected.value)) as got:
            template.prepare("Is it right?", solution, **call)
        assert str(got.value) == str(expected.value)
        assert message in str(got.value) if solution == "42" else "must" in str(got.value)


def test_template_without_a_key_fails_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    template = JudgeTemplate({"provider": "openai", "model": "judge-1"}, {})
    with pytest.raises(MissingAPIKeyError):
        template.prepare("Is it right?", "42")


REPLIES = [
    '{"score": 0.5, "explanation": "fine"}',
    '  ```json\n{"score": 2, "explanation": "fenced"}\n```  ',
    '<think>hmm</think>{"score": 1, "explanation": "thought"}',
    '<THINK>a\nb</THINK>\n```\n{"score": 0, "explanation": "both"}```',
    '{"score": 1e400, "explanation": "huge"}',
    '{"score": NaN, "explanation": "nan"}',
    '{"score": 123456789012345678901234567890, "explanation": "big"}',
    '{"score": 0.5, "explanation": "lone \\ud800"}',
    '{"score": 0.5, "score": 0.7, "explanation": "twice"}',
    '{"score": 0.5, "explanation": "x"} trailing',
    "[0.5]",
    '{"score": true, "explanation": "bool"}',
    "",
]


@pytest.mark.parametrize("content", REPLIES)
def test_reply_parse_matches_the_standard_reader(content: str) -> None:
    """The parse reads with orjson where it can: every reply scores (or fails) as the json module reads it."""
    from osmosis_ai.rubric.parse import ReplyProblem, _sanitise, parse_reply

    def reference(text: str) -> tuple[Any, ...]:
        # The established rules: strip a think block and fences, then json.loads.
        text = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL | re.IGNORECASE).strip()
        text = re.sub(r"\s*```$", "", re.sub(r"^```(?:json)?\s*", "", text, flags=re.IGNORECASE)).strip()
        return (text,)

    assert (_sanitise(content),) == reference(content)
    try:
        expected: Any = json.loads(reference(content)[0])
    except json.JSONDecodeError:
        expected = "invalid"
    try:
        reply = parse_reply(content, 0.0, 1.0)
    except ReplyProblem as problem:
        # Not JSON exactly where json says so; otherwise a reason past the parse (no score, not an object).
        assert (problem.reason == "invalid_json") == (expected == "invalid"), problem.reason
        return
    assert isinstance(expected, dict) and reply.raw_score == float(expected["score"])
    assert reply.explanation == expected["explanation"].strip()


BOUNDS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 10.0, 5e-324, -5e-324, 1e308])


@settings(max_examples=300, deadline=None)
@given(score=st.one_of(BOUNDS, st.floats(allow_nan=False, allow_infinity=False)), low=BOUNDS, high=BOUNDS)
def test_reply_clamp_is_the_builtin_clamp_to_the_float(score: float, low: float, high: float) -> None:
    """The score is ``max(low, min(high, raw))`` to the very float (a tie keeps the bound's sign: -0.0 at a
    bound of 0.0 is written 0.0), as the results document writes it."""
    from osmosis_ai.rubric.parse import parse_reply

    reply = parse_reply(json.dumps({"score": score, "explanation": "x"}), low, high)
    assert repr(reply.score) == repr(max(low, min(high, float(score))))
    assert reply.raw_score == score and reply.clamped == (reply.score != reply.raw_score)


def _whole_preview(text: str) -> str:
    collapsed = " ".join(text.split())
    return collapsed if len(collapsed) <= PREVIEW_LIMIT else collapsed[: PREVIEW_LIMIT - 3].rstrip() + "..."


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["a", "bc", "é", "字", " ", "  ", "\n", "\r\n", "\t", "\u3000", "\u00a0", "\x1c", "\x85"]
        ),
        max_size=220,
    ).map("".join)
)
def test_the_preview_of_a_head_is_the_preview_of_the_whole(text: str) -> None:
    assert preview_text(text) == _whole_preview(text)


# Lines whose names the Rust field reader reads, lines it leaves to the full reader (NaN, an integer past
# 64 bits, a lone surrogate), and every kind of id and conversation_id.
LABEL_LINES = [
    '{"id": "a", "messages": [{"role": "assistant", "content": "x"}]}',
    '{"conversation_id": " c1 ", "solution_str": "s"}',
    '{"id": null, "conversation_id": "c2", "solution_str": "s"}',
    '{"id": 7, "solution_str": "s"}',
    '{"id": 1.50, "solution_str": "s", "score": NaN}',
    '{"id": 123456789012345678901234567890, "solution_str": "s"}',
    '{"id": "   ", "conversation_id": "c3", "solution_str": "s"}',
    '{"id": {"k": [1, true]}, "solution_str": "s"}',
    '{"id": "\\ud800 lone", "solution_str": "s"}',
    '{"id": "dup", "id": "later", "solution_str": "s"}',
    '{"id": false, "solution_str": "é ✓ 字"}',
    '{"solution_str": "no name"}',
    "   ",
    '{"conversation_id": 2.5e3, "solution_str": "s"}',
]


@pytest.mark.parametrize("newline_at_end", [True, False])
def test_record_names_read_without_the_rows_are_the_records_labels(tmp_path, newline_at_end: bool) -> None:
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join(LABEL_LINES) + ("\n" if newline_at_end else ""), encoding="utf-8")
    source = RecordSource(path)
    expected = [record.label for record in source]
    assert list(source.chat_labels()) == expected
    assert expected[3:5] == ["7", "1.5"] and expected[-2:] == ["record[12]", "2500.0"]


def test_record_names_name_a_line_that_is_not_an_object(tmp_path) -> None:
    path = tmp_path / "chats.jsonl"
    path.write_text('{"id": "a", "solution_str": "s"}\n\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(DatasetParseError, match="line 3 of") as caught:
        list(RecordSource(path).chat_labels())
    assert caught.value.line == 3
    with pytest.raises(ValueError, match="chat records"):
        next(RecordSource(path, "helpful").chat_labels())


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=0, max_value=4_102_444_800 * 10**9), st.booleans())
def test_a_run_stamp_is_datetimes_isoformat(ns: int, whole_second: bool) -> None:
    ns -= ns % 10**9 if whole_second else 0
    seconds, micros = divmod(ns // 1000, 1_000_000)
    expected = dt.datetime.fromtimestamp(seconds, dt.timezone.utc).replace(microsecond=micros).isoformat()
    assert utc_stamp(ns) == expected
    assert dt.datetime.fromisoformat(utc_stamp()).utcoffset() == dt.timedelta(0)


def test_a_negative_zero_name_is_labelled_as_the_record_reader_labels_it(tmp_path) -> None:
    path = tmp_path / "chats.jsonl"
    path.write_text('{"id": -0, "solution_str": "s"}\n{"conversation_id": -0.0, "solution_str": "s"}\n')
    source = RecordSource(path)
    assert list(source.chat_labels()) == [record.label for record in source] == ["0", "-0.0"]
