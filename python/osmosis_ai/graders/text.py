"""Text graders computed locally: ``string_check`` and the ``text_similarity`` metrics but ``cosine``.

Tokens (BLEU, GLEU, ROUGE) are the lower-cased word characters runs of the text (``\\w+``). The exact
definitions, so scores can be checked by hand:

* ``fuzzy_match``: the normalised Indel similarity of the two strings, ``2 * LCS / (len(a) + len(b))``
  over characters (rapidfuzz's ``ratio`` / 100); 1.0 for two empty strings.
* ``bleu``: sentence BLEU-4 with uniform weights and the brevity penalty; the 2- to 4-gram precisions
  are add-one smoothed (Lin and Och, 2004) so a short answer is not 0 for lacking a 4-gram match.
* ``gleu``: sentence GLEU (Wu et al., 2016): matched 1- to 4-grams over the larger of the two totals.
* ``rouge_1`` .. ``rouge_5``: F1 of the clipped n-gram overlap; ``rouge_l``: F1 of the token LCS.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Sequence

__all__ = ["LOCAL_METRICS", "fuzzy_match", "lcs_length", "similarity", "string_check", "tokens"]

_TOKEN = re.compile(r"\w+")
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


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens.

    Example:
        >>> tokens("The cat, the HAT.")
        ['the', 'cat', 'the', 'hat']
    """
    return _TOKEN.findall(text.lower())


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
    """``2 * LCS / (len(a) + len(b))`` over characters.

    Example:
        >>> round(fuzzy_match("kitten", "sitting"), 4)
        0.6154
    """
    if not a and not b:
        return 1.0
    return 2 * lcs_length(a, b) / (len(a) + len(b))


def _ngrams(words: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def _overlap(candidate: Sequence[str], reference: Sequence[str], n: int) -> tuple[int, int, int]:
    cand, ref = _ngrams(candidate, n), _ngrams(reference, n)
    matched = sum(min(count, ref[gram]) for gram, count in cand.items())
    return matched, sum(cand.values()), sum(ref.values())


def bleu(candidate: Sequence[str], reference: Sequence[str]) -> float:
    """Sentence BLEU-4 (see the module docstring for the smoothing)."""
    if not candidate or not reference:
        return 0.0
    log_sum = 0.0
    for n in range(1, 5):
        matched, total, _ = _overlap(candidate, reference, n)
        if n == 1:
            if matched == 0:
                return 0.0
            precision = matched / total
        else:
            precision = (matched + 1) / (total + 1)
        log_sum += math.log(precision) / 4
    c, r = len(candidate), len(reference)
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * math.exp(log_sum)


def gleu(candidate: Sequence[str], reference: Sequence[str]) -> float:
    """Sentence GLEU over 1- to 4-grams."""
    matched = cand_total = ref_total = 0
    for n in range(1, 5):
        m, c, r = _overlap(candidate, reference, n)
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
    cand, ref = tokens(value), tokens(reference)
    if metric == "bleu":
        return bleu(cand, ref)
    if metric == "gleu":
        return gleu(cand, ref)
    if metric == "rouge_l":
        return _f1(lcs_length(cand, ref), len(cand), len(ref))
    if metric.startswith("rouge_") and metric[6:].isdigit():
        return _f1(*_overlap(cand, ref, int(metric[6:])))
    raise ValueError(f"unknown text_similarity metric {metric!r}")
