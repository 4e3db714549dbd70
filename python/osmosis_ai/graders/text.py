"""Text graders computed locally: ``string_check`` and the ``text_similarity`` metrics but ``cosine``.

Each metric equals the library OpenAI's grader documentation names for it, or the reference implementation
of the metric where it names none (``tests/graders/test_grader_references.py`` checks every one against its
library on random and edge inputs):

* ``fuzzy_match``: rapidfuzz's ``fuzz.ratio(input, reference) / 100``, the normalised Indel similarity
  ``1 - (len(a) + len(b) - 2 * LCS) / (len(a) + len(b))`` over characters; 1.0 for two empty strings.
* ``bleu``: sacreBLEU's ``sentence_bleu(input, [reference]).score / 100`` with its defaults: the ``13a``
  tokenizer (mteval-v13a, case kept), ``exp`` smoothing and the effective order, so an order the input is
  too short to have is left out instead of counted as a perfect match.
* ``gleu``: NLTK's ``sentence_gleu([reference], input)`` (1- to 4-grams) over the same ``13a`` tokens.
* ``rouge_1`` .. ``rouge_5``, ``rouge_l``: the F-measure of rouge-score's ``RougeScorer(["rougeN",
  "rougeL"], use_stemmer=False).score(reference, input)``, tokenised as it does: lower-cased, every run of
  characters other than ``a-z0-9`` is a separator (so ``"naïve"`` is the two tokens ``na ve``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Sequence

__all__ = [
    "LOCAL_METRICS",
    "bleu",
    "fuzzy_match",
    "gleu",
    "lcs_length",
    "rouge_tokens",
    "similarity",
    "string_check",
    "tokens_13a",
]

LOCAL_METRICS = (
    "fuzzy_match",
    "bleu",
    "gleu",
    "rouge_1",
    "rouge_2",
    "rouge_3",
    "rouge_4",
    "rouge_5",
    "rouge_l",
)
STRING_OPERATIONS = ("eq", "ne", "like", "ilike")
_MAX_ORDER = 4

# mteval-v13a's splitting rules, applied in this order to the space-padded line.
_13A_RULES = (
    # ASCII punctuation and symbols except ' , - . become tokens of their own.
    (re.compile(r"([\x20-\x26\x28-\x2b\x2f\x3a-\x40\x5b-\x60\x7b-\x7e])"), r" \1 "),
    # A period or comma is split off unless it sits between digits (3.14 and 1,000 stay whole).
    (re.compile(r"([^0-9])([.,])"), r"\1 \2 "),
    (re.compile(r"([.,])([^0-9])"), r" \1 \2"),
    # A dash after a digit is split off (a range 1-2 is three tokens).
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
)
_13A_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))
_ROUGE_SEPARATOR = re.compile(r"[^0-9a-z]+")


def string_check(value: str, reference: str, operation: str) -> float:
    """1.0 or 0.0: ``eq`` / ``ne`` exact, ``like`` contains, ``ilike`` contains ignoring case.

    Example:
        >>> string_check("The answer is Paris", "paris", "ilike")
        1.0
    """
    if operation == "eq":
        return float(value == reference)
    if operation == "ne":
        return float(value != reference)
    if operation == "like":
        return float(reference in value)
    if operation == "ilike":
        return float(reference.lower() in value.lower())
    raise ValueError(f"unknown string_check operation {operation!r}")


def tokens_13a(text: str) -> list[str]:
    """The tokens BLEU and GLEU count: sacreBLEU's default ``13a`` tokenisation (case kept).

    Example:
        >>> tokens_13a("The cat's 3.5 kg, (roughly).")
        ['The', "cat's", '3.5', 'kg', ',', '(', 'roughly', ')', '.']
    """
    # Trailing whitespace goes first, as sacreBLEU strips it before tokenising (so a final "-\n" stays).
    line = text.rstrip().replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for entity, character in _13A_ENTITIES:  # one after the other: "&amp;lt;" ends as "<"
            line = line.replace(entity, character)
    line = f" {line} "
    for pattern, replacement in _13A_RULES:
        line = pattern.sub(replacement, line)
    return line.split()


def rouge_tokens(text: str) -> list[str]:
    """The tokens ROUGE counts, as rouge-score makes them (no stemming).

    Example:
        >>> rouge_tokens("NAÏVE sat-down, 2x!")
        ['na', 've', 'sat', 'down', '2x']
    """
    return _ROUGE_SEPARATOR.sub(" ", text.lower()).split()


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence, bit-parallel (Hyyrö): O(len(b)) big-int steps.

    Example:
        >>> lcs_length("kitten", "sitting")
        4
    """
    if not a or not b:
        return 0
    masks: dict[Hashable, int] = {}
    for i, symbol in enumerate(a):
        masks[symbol] = masks.get(symbol, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for symbol in b:
        u = v & masks.get(symbol, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


def fuzzy_match(a: str, b: str) -> float:
    """rapidfuzz's ``fuzz.ratio(a, b) / 100`` (see the module docstring).

    Example:
        >>> round(fuzzy_match("kitten", "sitting"), 4)
        0.6154
    """
    total = len(a) + len(b)
    if not total:
        return 1.0
    # rapidfuzz's order of operations (similarity from the distance, in percent), so scores equal its own.
    return (1.0 - (total - 2 * lcs_length(a, b)) / total) * 100 / 100


def _ngrams(words: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def _overlap(candidate: Sequence[str], reference: Sequence[str], n: int) -> tuple[int, int, int]:
    cand, ref = _ngrams(candidate, n), _ngrams(reference, n)
    matched = sum(min(count, ref[gram]) for gram, count in cand.items())
    return matched, sum(cand.values()), sum(ref.values())


def bleu(value: str, reference: str) -> float:
    """sacreBLEU's sentence BLEU of ``value`` against ``reference``, as a fraction (see the module docstring).

    Example:
        >>> round(bleu("x y", "x z"), 6)  # 1 of 2 unigrams, 0 of 1 bigram (smoothed to 1/2); no trigram
        0.5
    """
    candidate, ref = tokens_13a(value), tokens_13a(reference)
    counts = [_overlap(candidate, ref, n) for n in range(1, _MAX_ORDER + 1)]
    if not any(matched for matched, _, _ in counts):
        return 0.0
    brevity = 1.0 if len(candidate) >= len(ref) else math.exp(1 - len(ref) / len(candidate))
    # Precisions in percent and the geometric mean in sacreBLEU's order, so the score is bit-equal to its own.
    logs: list[float] = []
    smoothing = 1.0
    for matched, total, _ in counts:
        if total == 0:  # the input is too short for this order: left out (effective order)
            break
        if matched == 0:
            smoothing *= 2
            logs.append(math.log(100.0 / (smoothing * total)))
        else:
            logs.append(math.log(100.0 * matched / total))
    return brevity * math.exp(sum(logs) / len(logs)) / 100


def gleu(value: str, reference: str) -> float:
    """NLTK's sentence GLEU over 1- to 4-grams of the ``13a`` tokens.

    Example:
        >>> gleu("the cat sat", "the cat ran")  # 2 + 1 + 0 matched of 3 + 2 + 1
        0.5
    """
    candidate, ref = tokens_13a(value), tokens_13a(reference)
    matched = cand_total = ref_total = 0
    for n in range(1, _MAX_ORDER + 1):
        m, c, r = _overlap(candidate, ref, n)
        matched, cand_total, ref_total = matched + m, cand_total + c, ref_total + r
    denominator = max(cand_total, ref_total)
    return matched / denominator if denominator else 0.0


def _f1(matched: int, cand_total: int, ref_total: int) -> float:
    if not matched:
        return 0.0
    precision, recall = matched / cand_total, matched / ref_total
    return 2 * precision * recall / (precision + recall)


def similarity(metric: str, value: str, reference: str) -> float:
    """One local ``text_similarity`` metric of ``value`` against ``reference``.

    Example:
        >>> similarity("rouge_1", "the cat sat", "the cat ran")
        0.6666666666666666
    """
    if metric == "fuzzy_match":
        return fuzzy_match(value, reference)
    if metric == "bleu":
        return bleu(value, reference)
    if metric == "gleu":
        return gleu(value, reference)
    cand, ref = rouge_tokens(value), rouge_tokens(reference)
    if metric == "rouge_l":
        return _f1(lcs_length(cand, ref), len(cand), len(ref))
    if metric.startswith("rouge_") and metric[6:].isdigit():
        return _f1(*_overlap(cand, ref, int(metric[6:])))
    raise ValueError(f"unknown text_similarity metric {metric!r}")
