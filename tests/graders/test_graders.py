"""OpenAI grader configs run locally: every grader type against scores computed by hand."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from osmosis_ai.errors import ConfigError, EvalFnError
from osmosis_ai.graders import Grader, ModelSettings, load_grader
from osmosis_ai.graders.session import grade
from osmosis_ai.graders.template import make_sample, render
from osmosis_ai.graders.text import lcs_length, similarity, string_check


def run(grader: Grader, output: str, item: dict[str, Any]) -> float:
    return asyncio.run(grader.grade(output, item)).score


def text_grader(metric: str) -> Grader:
    return Grader(
        {
            "type": "text_similarity",
            "name": metric,
            "input": "{{sample.output_text}}",
            "reference": "{{item.reference}}",
            "evaluation_metric": metric,
        }
    )


@pytest.mark.parametrize(
    ("operation", "value", "reference", "expected"),
    [
        ("eq", "Paris", "Paris", 1.0),
        ("eq", "paris", "Paris", 0.0),
        ("ne", "Lyon", "Paris", 1.0),
        ("like", "It is Paris.", "Paris", 1.0),
        ("like", "It is paris.", "Paris", 0.0),
        ("ilike", "It is PARIS.", "paris", 1.0),
        ("ilike", "Lyon", "paris", 0.0),
    ],
)
def test_string_check(operation: str, value: str, reference: str, expected: float) -> None:
    assert string_check(value, reference, operation) == expected
    grader = Grader(
        {
            "type": "string_check",
            "name": "s",
            "input": "{{sample.output_text}}",
            "reference": "{{item.answer}}",
            "operation": operation,
        }
    )
    assert run(grader, value, {"answer": reference}) == expected


def _lcs_reference(a: str, b: str) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


@given(st.text(alphabet="abcd", max_size=40), st.text(alphabet="abcd", max_size=40))
def test_bit_parallel_lcs_matches_the_dynamic_programme(a: str, b: str) -> None:
    assert lcs_length(a, b) == _lcs_reference(a, b)


def test_text_similarity_by_hand() -> None:
    # kitten / sitting: LCS "ittn" = 4 characters; 2 * 4 / (6 + 7).
    assert run(text_grader("fuzzy_match"), "kitten", {"reference": "sitting"}) == pytest.approx(8 / 13)
    # "the cat sat" vs "the cat sat down": p1 = 3/3, p2 = 2/2, p3 = 1/1 and no 4-gram in the input (the
    # order is left out, not counted as a match); brevity penalty exp(1 - 4/3).
    assert similarity("bleu", "the cat sat", "the cat sat down") == pytest.approx(math.exp(-1 / 3))
    assert similarity("bleu", "the cat sat on the mat.", "the cat sat on the mat .") == pytest.approx(1.0)
    # BLEU keeps case (sacreBLEU's default): "The" does not match "the"; p1 = 5/6, then 4/5, 3/4, 2/3.
    assert similarity("bleu", "The cat sat on the mat", "the cat sat on the mat") == pytest.approx(
        (5 / 6 * 4 / 5 * 3 / 4 * 2 / 3) ** 0.25
    )
    assert similarity("bleu", "dog", "the cat") == 0.0
    # the cat sat / the cat ran: unigrams 2 of 3 each, bigrams 1 of 2 each, trigrams 0 of 1.
    assert similarity("rouge_1", "the cat sat", "the cat ran") == pytest.approx(2 / 3)
    assert similarity("rouge_2", "the cat sat", "the cat ran") == pytest.approx(0.5)
    assert similarity("rouge_3", "the cat sat", "the cat ran") == 0.0
    assert similarity("rouge_l", "the cat sat", "a cat sat the") == pytest.approx(
        2 * (2 / 3) * 0.5 / (2 / 3 + 0.5)
    )
    # GLEU: matched 2 + 1 + 0 n-grams of 3 + 2 + 1 on each side.
    assert similarity("gleu", "the cat sat", "the cat ran") == pytest.approx(0.5)


def test_templates() -> None:
    sample = make_sample('{"answer": 4}')
    item = {"q": {"parts": ["a", "b"]}, "n": 3}
    assert render("{{ sample.output_json.answer }}|{{item.q.parts.1}}|{{item.n}}", sample, item) == "4|b|3"
    with pytest.raises(EvalFnError, match="names nothing"):
        render("{{item.missing}}", sample, item)


def test_python_grader_runs_in_a_subprocess_with_a_time_limit() -> None:
    source = (
        "def grade(sample, item):\n    print('noise')\n    return len(sample['output_text']) / item['n']\n"
    )
    assert run(Grader({"type": "python", "name": "p", "source": source}), "abcd", {"n": 8}) == 0.5
    slow = Grader(
        {"type": "python", "name": "slow", "source": "def grade(s, i):\n    while True: pass\n"},
        time_limit=0.5,
    )
    with pytest.raises(EvalFnError, match="time limit"):
        run(slow, "x", {})
    failing = Grader({"type": "python", "name": "f", "source": "def grade(s, i):\n    return 1 / 0\n"})
    with pytest.raises(EvalFnError, match="ZeroDivisionError"):
        run(failing, "x", {})
    boolean = Grader({"type": "python", "name": "b", "source": "def grade(s, i):\n    return True\n"})
    with pytest.raises(EvalFnError, match="bool"):
        run(boolean, "x", {})


def test_multi_grader_formula() -> None:
    config = {
        "type": "multi",
        "name": "combo",
        "calculate_output": "0.5 * exact + 0.5 * fuzzy ^ 2",
        "graders": {
            "exact": {
                "type": "string_check",
                "name": "e",
                "input": "{{sample.output_text}}",
                "reference": "{{item.reference}}",
                "operation": "eq",
            },
            "fuzzy": {
                "type": "text_similarity",
                "name": "f",
                "input": "{{sample.output_text}}",
                "reference": "{{item.reference}}",
                "evaluation_metric": "fuzzy_match",
            },
        },
    }
    result = asyncio.run(Grader(config).grade("kitten", {"reference": "sitting"}))
    assert result.sub_scores == {"exact": 0.0, "fuzzy": pytest.approx(8 / 13)}
    assert result.score == pytest.approx(0.5 * (8 / 13) ** 2)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"type": "regex"}, "unknown grader type"),
        ({"type": "string_check", "input": "", "reference": ""}, "lacks operation"),
        ({"type": "string_check", "input": "", "reference": "", "operation": "contains"}, "not one of"),
        (
            {"type": "text_similarity", "input": "", "reference": "", "evaluation_metric": "meteor"},
            "not supported",
        ),
        ({"type": "python", "source": "def grade(:"}, "does not compile"),
        (
            {"type": "label_model", "input": [], "model": "m", "labels": ["a"], "passing_labels": ["b"]},
            "subset",
        ),
        (
            {
                "type": "multi",
                "graders": {"a": {"type": "python", "source": "x=1"}},
                "calculate_output": "a + b",
            },
            "not a sub-grader",
        ),
        (
            {
                "type": "multi",
                "graders": {"a": {"type": "python", "source": "x=1"}},
                "calculate_output": "__import__('os')",
            },
            "not allowed",
        ),
    ],
)
def test_bad_configs_are_refused_when_loaded(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_grader(config)


def test_score_and_label_models_through_the_llm_layer(scripted: Any, judge_env: None) -> None:
    server = scripted(
        {
            "by_prompt": {
                "SCORE-A": [{"content": '{"result": 0.8}'}],
                "SCORE-B": [{"content": '{"result": 7}'}],
                "LABEL-A": [{"content": '{"result": "correct"}'}],
                "LABEL-B": [{"content": '{"result": "wrong"}'}],
                "LABEL-C": [{"content": '{"result": "maybe"}'}],
            },
        }
    )
    settings = ModelSettings(base_url=server.base_url)
    score = Grader(
        {
            "type": "score_model",
            "name": "s",
            "model": "judge",
            "range": [0, 5],
            "sampling_params": {"seed": 3, "max_completions_tokens": 50, "reasoning_effort": "low"},
            "input": [
                {"role": "developer", "content": "Grade 0-5."},
                {"role": "user", "content": "{{item.tag}}: {{sample.output_text}}"},
            ],
        },
        settings=settings,
    )
    assert run(score, "Paris", {"tag": "SCORE-A"}) == 0.8
    clamped = asyncio.run(score.grade("Paris", {"tag": "SCORE-B"}))
    assert clamped.score == 5.0 and clamped.detail == {"raw_result": 7, "clamped": True}
    body = server.requests()[0]
    assert body["messages"] == [
        {"role": "system", "content": "Grade 0-5."},
        {"role": "user", "content": "SCORE-A: Paris"},
    ]
    assert body["seed"] == 3 and body["max_tokens"] == 50 and body["temperature"] == 0
    # A documented sampling parameter is sent, never dropped without a word.
    assert body["reasoning_effort"] == "low"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["result"] == {"type": "number"}
    label = Grader(
        {
            "type": "label_model",
            "name": "l",
            "model": "judge",
            "labels": ["correct", "wrong"],
            "passing_labels": ["correct"],
            "input": [{"role": "user", "content": "{{item.tag}}"}],
        },
        settings=settings,
    )
    assert run(label, "x", {"tag": "LABEL-A"}) == 1.0
    assert run(label, "x", {"tag": "LABEL-B"}) == 0.0
    with pytest.raises(EvalFnError, match="not one of"):
        run(label, "x", {"tag": "LABEL-C"})


def test_cosine_similarity_with_scripted_embeddings(scripted: Any, judge_env: None) -> None:
    server = scripted({"embeddings": {"yes": [1.0, 0.0], "yeah": [1.0, 1.0], "no": [0.0, 2.0]}})
    settings = ModelSettings(base_url=server.base_url, embedding_model="embedder")
    grader = text_grader("cosine")
    grader.settings = settings
    assert run(grader, "yes", {"reference": "yeah"}) == pytest.approx(1 / math.sqrt(2))
    assert run(grader, "yes", {"reference": "no"}) == pytest.approx(0.0)
    assert server.requests()[0] == {"model": "embedder", "input": ["yes", "yeah"]}
    with pytest.raises(EvalFnError, match="embedding call failed"):
        run(grader, "unknown text", {"reference": "yes"})


def test_cosine_uses_the_documented_embedding_model_by_default(scripted: Any, judge_env: None) -> None:
    # OpenAI's grader documentation: cosine similarity "using text-embedding-3-large".
    server = scripted({"embeddings": {"yes": [1.0, 0.0], "yeah": [1.0, 1.0]}})
    grader = text_grader("cosine")
    grader.settings = ModelSettings(base_url=server.base_url)
    assert run(grader, "yes", {"reference": "yeah"}) == pytest.approx(1 / math.sqrt(2))
    assert server.requests()[0]["model"] == "text-embedding-3-large"


SCORE_MODEL = {
    "type": "score_model",
    "name": "judge",
    "model": "m",
    "input": [{"role": "user", "content": "{{sample.output_text}}"}],
}
EXACT_CHECK = {
    "type": "string_check",
    "name": "exact",
    "input": "{{sample.output_text}}",
    "reference": "{{item.a}}",
    "operation": "eq",
}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {**SCORE_MODEL, "sampling_params": {"reasoning_efort": "low"}},
            r"judge: unknown field 'sampling_params\.reasoning_efort' \(supported: temperature, top_p, seed, "
            r"max_completions_tokens, reasoning_effort\)",
        ),
        (
            {**SCORE_MODEL, "sampling_params": {"reasoning_effort": "extreme"}},
            r"sampling_params\.reasoning_effort must be one of none, minimal, low",
        ),
        ({**SCORE_MODEL, "sampling_params": {"seed": 1.5}}, r"sampling_params\.seed must be an integer"),
        ({**SCORE_MODEL, "temperature": 0}, r"judge: unknown field 'temperature' in a score_model grader"),
        ({**EXACT_CHECK, "opration": "eq"}, r"exact: unknown field 'opration' in a string_check grader"),
        ({**EXACT_CHECK, "pass_threshold": "1"}, r"pass_threshold must be a number"),
        (
            {
                "type": "multi",
                "name": "m",
                "calculate_output": "e",
                "graders": {"e": {**EXACT_CHECK, "x": 1}},
            },
            r"m\.graders\.e: unknown field 'x'",
        ),
        (
            {**SCORE_MODEL, "input": [{"role": "user", "content": "hi", "name": "bob"}]},
            r"judge: input\[0\]: unknown field 'name' in a message",
        ),
        ({**SCORE_MODEL, "input": [{"role": "critic", "content": "hi"}]}, r"input\[0\]: role must be one of"),
        (
            {
                **SCORE_MODEL,
                "input": [{"role": "user", "content": [{"type": "input_image", "image_url": "http://x"}]}],
            },
            r"input\[0\]\.content\[0\]: input_image content is not supported locally",
        ),
        ({**SCORE_MODEL, "range": [0, "5"]}, r"range must be \[low, high\]"),
    ],
)
def test_unknown_or_unsupported_fields_are_errors_naming_the_field(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_grader(config)


def test_documented_optional_fields_are_accepted() -> None:
    load_grader({"type": "python", "name": "p", "source": "def grade(s, i): return 1.0", "image_tag": "2025"})
    load_grader(
        {
            **SCORE_MODEL,
            "range": [0, 10],
            "pass_threshold": 5,
            "sampling_params": {"temperature": 1, "top_p": 0.9, "reasoning_effort": None},
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "x"}]}
            ],
        }
    )


def test_grade_library_function_keeps_order_and_errors() -> None:
    config = {
        "type": "string_check",
        "name": "exact",
        "input": "{{sample.output_text}}",
        "reference": "{{item.answer}}",
        "operation": "eq",
        "pass_threshold": 1,
    }
    samples = [
        {"answer": "4", "output_text": "4"},
        {
            "answer": "4",
            "messages": [{"role": "user", "content": "2+2"}, {"role": "assistant", "content": "5"}],
        },
        {"answer": "4"},
    ]
    records = grade(config, samples)
    assert [r["scores"] for r in records] == [{"exact": 1.0}, {"exact": 0.0}, {}]
    assert [r.get("passed") for r in records] == [True, False, None]
    assert "no model output" in records[2]["error"]


def test_load_grader_from_file_accepts_the_fine_tuning_shape(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text(
        json.dumps({"grader": {"type": "python", "name": "p", "source": "def grade(s, i): return 1.0"}})
    )
    assert load_grader(path).name == "p"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"g\.json:1"):
        load_grader(path)
    path.write_text(json.dumps({**EXACT_CHECK, "operaton": "eq"}))
    with pytest.raises(ConfigError, match=r"g\.json: exact: unknown field 'operaton'"):
        load_grader(path)
