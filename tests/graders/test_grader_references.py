"""Every grader metric equals the library it is defined by (README "osmosis grade"), on random and edge
inputs: sacreBLEU (bleu), NLTK (gleu), rouge-score (rouge_*), rapidfuzz (fuzzy_match), numpy (cosine)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from osmosis_ai.graders.text import LOCAL_METRICS, rouge_tokens, similarity, tokens_13a

sacrebleu = pytest.importorskip("sacrebleu")
gleu_score = pytest.importorskip("nltk.translate.gleu_score")
rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
fuzz = pytest.importorskip("rapidfuzz.fuzz")

ROUGE_TYPES = ["rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL"]
SCORER = rouge_scorer.RougeScorer(ROUGE_TYPES, use_stemmer=False)

# Words drawn from a small vocabulary repeat (so n-grams match); the rest covers what tokenisers split on:
# punctuation, digits with separators, entities, newlines, non-ASCII letters and marks, odd whitespace.
WORDS = ["the", "cat", "sat", "Paris", "paris", "x", "y", "3.5", "1,000", "12-3", "naïve", "NAÏVE", "é"]
WORDS += ["İstanbul", "ß", "東京", "e\u0301", "&amp;", "&lt;b&gt;", "<skipped>", "don't", "a-\n", "\u00a0"]
PIECES = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \n\t")),
    st.text(max_size=6),
)
TEXT = st.lists(PIECES, max_size=14).map(lambda parts: " ".join(parts) if len(parts) % 2 else "".join(parts))
EDGES = [
    ("", ""),
    ("x", ""),
    ("", "x"),
    ("x y", "x z"),
    ("Paris Paris", "Paris"),
    ("Paris", "Paris"),
    ("on é", "of é"),
    ("NAÏVE SAT", "naïve sat"),
    ("the the the the the", "the cat"),
    ("a b c d e f", "a b c d e f"),
    ("1,000.5 - 2", "1,000.5-2"),
    ("   ", "\n"),
]


def reference_value(metric: str, value: str, reference: str) -> float:
    if metric == "bleu":
        return sacrebleu.sentence_bleu(value, [reference]).score / 100
    if metric == "gleu":
        # NLTK scores token lists; the tokens are sacreBLEU's 13a ones (checked separately below).
        return gleu_score.sentence_gleu([sacrebleu_tokens(reference)], sacrebleu_tokens(value))
    if metric == "fuzzy_match":
        return fuzz.ratio(value, reference) / 100
    kind = "rougeL" if metric == "rouge_l" else "rouge" + metric[6:]
    return SCORER.score(reference, value)[kind].fmeasure


def sacrebleu_tokens(text: str) -> list[str]:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    return Tokenizer13a()(text.rstrip()).split()


def check(value: str, reference: str) -> None:
    for metric in LOCAL_METRICS:
        ours, theirs = similarity(metric, value, reference), reference_value(metric, value, reference)
        assert ours == theirs, (metric, value, reference)  # bit-equal: a threshold decides the same way


@pytest.mark.parametrize(("value", "reference"), EDGES)
def test_edge_inputs_match_the_references(value: str, reference: str) -> None:
    check(value, reference)


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT)
def test_random_inputs_match_the_references(value: str, reference: str) -> None:
    check(value, reference)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.sampled_from(["prefix", "shuffle", "repeat"]))
def test_related_inputs_match_the_references(text: str, how: str) -> None:
    # Unrelated random texts rarely share a 3-gram; these pairs share most of theirs.
    words = text.split()
    other = {
        "prefix": " ".join(words[: max(1, len(words) // 2)]),
        "shuffle": " ".join(reversed(words)),
        "repeat": " ".join(words * 2),
    }[how]
    check(text, other)
    check(other, text)


@settings(max_examples=300, deadline=None)
@given(TEXT)
@example("NAÏVE İstanbul straße")
def test_tokenisers_match_the_references(text: str) -> None:
    from rouge_score.tokenize import tokenize

    assert tokens_13a(text) == sacrebleu_tokens(text)
    assert rouge_tokens(text) == tokenize(text, None)


def test_short_answers_are_not_scored_as_perfect() -> None:
    # Finding 8: below four tokens the missing n-gram orders counted as perfect matches (0.7071).
    assert similarity("bleu", "x y", "x z") < 0.5
    assert similarity("bleu", "Paris Paris", "Paris") < 0.5
    assert similarity("bleu", "x y", "x z") == sacrebleu.sentence_bleu("x y", ["x z"]).score / 100


def test_rouge_splits_non_ascii_letters_as_rouge_score_does() -> None:
    assert similarity("rouge_1", "on é", "of é") == 0.0
    assert similarity("rouge_3", "NAÏVE SAT", "naïve sat") == 1.0


# Embedding components: normal magnitudes or 0 (squares of subnormal floats underflow in any formula).
COMPONENT = st.one_of(st.just(0.0), st.floats(-1e3, 1e3, allow_nan=False).filter(lambda x: abs(x) > 1e-100))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 12).flatmap(
        lambda size: st.tuples(
            st.lists(COMPONENT, min_size=size, max_size=size),
            st.lists(COMPONENT, min_size=size, max_size=size),
        )
    )
)
def test_cosine_of_embeddings_matches_numpy(vectors: tuple[list[float], list[float]]) -> None:
    numpy = pytest.importorskip("numpy")
    from osmosis_ai.errors import EvalFnError
    from osmosis_ai.graders.models import _cosine

    a, b = vectors
    if not any(a) or not any(b):
        with pytest.raises(EvalFnError, match="all zeros"):
            _cosine(a, b)
        return
    theirs = float(numpy.dot(a, b) / (numpy.linalg.norm(a) * numpy.linalg.norm(b)))
    assert _cosine(a, b) == pytest.approx(theirs, rel=1e-9, abs=1e-12)
