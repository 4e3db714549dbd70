"""Judge checks for rubrics: how much the judge disagrees with itself, and with human labels.

* Noise (``eval-rubric --repeat K``): each record judged K times; the per-record sample variance of the
  scores (divided by K - 1: the K judgements are a sample of the judge's answers, and dividing by K
  reads a third too low at K = 3) is the judge's noise floor: a reward difference smaller than it is not
  a signal.
* Gold (``eval-rubric --gold FILE``): a JSONL file of human labels, ``{"id": ..., "score": ...}`` per
  line, the id being a record's ``id`` or ``conversation_id``; the judge's mean score per record is
  compared with the label (MAE, bias, Spearman, Cohen's kappa after thresholding).

Unscored and failed runs are not scores here either. All figures come from the Rust core.
"""

from __future__ import annotations

import heapq
import json
from array import array
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from osmosis_ai.errors import RunError

__all__ = ["GoldTally", "NoiseTally", "gold_agreement", "judge_noise", "load_gold"]

MAX_EXAMPLES = 3


def _scores(runs: Sequence[Mapping[str, Any]]) -> list[float]:
    return [float(r["score"]) for r in runs if r.get("status") == "success" and r.get("score") is not None]


class NoiseTally:
    """:func:`judge_noise` one record at a time: holds two floats per record judged repeatedly and the
    noisiest examples, never the records."""

    def __init__(self) -> None:
        self._variances = array("d")
        self._stds = array("d")
        self._disagreeing = 0
        # A min-heap of the noisiest (variance, -position, std, record id, scores): the first of equals wins.
        self._noisiest: list[tuple[float, int, float, Any, list[float]]] = []

    def add(self, record: Any, runs: Sequence[Mapping[str, Any]]) -> None:
        """Counts one record (its ``record_id``, or itself) with its runs."""
        from osmosis_ai.stats import score_statistics

        scores = _scores(runs)
        if len(scores) < 2:
            return
        s = score_statistics(scores)
        variance, std = float(s.sample_variance or 0.0), float(s.sample_std or 0.0)
        self._variances.append(variance)
        self._stds.append(std)
        self._disagreeing += max(scores) != min(scores)
        entry = (variance, -len(self._variances), std, getattr(record, "record_id", record), scores)
        if len(self._noisiest) < MAX_EXAMPLES:
            heapq.heappush(self._noisiest, entry)
        else:
            heapq.heappushpop(self._noisiest, entry)

    def result(self) -> dict[str, Any]:
        """See :func:`judge_noise`."""
        from osmosis_ai.stats import score_statistics

        if not self._variances:
            return {
                "records": 0,
                "mean_variance": None,
                "mean_std": None,
                "max_std": None,
                "disagreeing": 0,
                "examples": [],
            }
        variances, stds = score_statistics(self._variances), score_statistics(self._stds)
        noisiest = sorted(self._noisiest, key=lambda t: (-t[0], -t[1]))
        return {
            "records": len(self._variances),
            "mean_variance": variances.mean,
            "mean_std": stds.mean,
            "max_std": stds.max,
            "disagreeing": self._disagreeing,
            "examples": [{"record": r, "scores": s, "std": d} for _, _, d, r, s in noisiest if d > 0],
        }


def judge_noise(records: Iterable[Any], runs_of: Any) -> dict[str, Any]:
    """Per-record score spread over repeated judgements.

    Args:
        records: The judged records (``record_id`` / ``label``), in order.
        runs_of: ``runs_of(i)`` gives the runs of the record at position i (from 0), as the session
            holds them.

    Returns:
        ``records`` (with >= 2 scores), ``mean_variance`` / ``mean_std`` (the noise floor: the mean over
        records of the sample variance and sample std of their scores), ``max_std``, ``disagreeing``
        (records whose scores are not all equal) and the noisiest examples.

    Example:
        >>> noise = judge_noise(["a"], lambda i: [{"status": "success", "score": s} for s in (0.2, 0.6)])
        >>> round(noise["mean_variance"], 6), noise["disagreeing"]
        (0.08, 1)
    """
    tally = NoiseTally()
    for index, record in enumerate(records):
        tally.add(record, runs_of(index))
    return tally.result()


def load_gold(path: Path) -> dict[str, float]:
    """Human labels by record id from a JSONL file of ``{"id", "score"}`` lines.

    Raises:
        RunError: A line is not JSON, or lacks a string/number ``id`` or a numeric ``score``.
    """
    labels: dict[str, float] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RunError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
            key, score = (row.get("id"), row.get("score")) if isinstance(row, dict) else (None, None)
            if (
                not isinstance(key, (str, int))
                or isinstance(score, bool)
                or not isinstance(score, (int, float))
            ):
                raise RunError(f'{path}:{number}: expected {{"id": <record id>, "score": <number>}}')
            labels[str(key)] = float(score)
    if not labels:
        raise RunError(f"{path}: no gold labels")
    return labels


class GoldTally:
    """:func:`gold_agreement` one record at a time: holds one judge mean per labelled record."""

    def __init__(self, gold: Mapping[str, float], *, threshold: float) -> None:
        self._gold, self._threshold = gold, threshold
        self._judge: list[float] = []
        self._labels: list[float] = []
        self._used: set[str] = set()
        self._unscored = 0

    def add(self, record: Any, runs: Sequence[Mapping[str, Any]]) -> None:
        """Counts one record (its ``record_id`` or ``label`` names its gold label) with its runs."""
        from osmosis_ai.stats import score_statistics

        key = next((k for k in (record.record_id, record.label) if k in self._gold), None)
        if key is None:
            return
        scores = _scores(runs)
        if not scores:
            self._unscored += 1
            return
        self._used.add(key)
        self._judge.append(float(score_statistics(scores).mean or 0.0))
        self._labels.append(self._gold[key])

    def result(self) -> dict[str, Any]:
        """See :func:`gold_agreement`."""
        from osmosis_ai.stats import agreement

        base = {
            "threshold": self._threshold,
            "unmatched_labels": len(set(self._gold) - self._used) - self._unscored,
            "unscored_records": self._unscored,
        }
        if not self._judge:
            return {"count": 0, "mae": None, "bias": None, "spearman": None, "kappa": None, **base}
        result = agreement(self._judge, self._labels, threshold=self._threshold)
        return {
            "count": result.count,
            "mae": result.mae,
            "bias": result.bias,
            "spearman": result.spearman,
            "kappa": result.kappa,
            **base,
        }


def gold_agreement(
    records: Iterable[Any], runs_of: Any, gold: Mapping[str, float], *, threshold: float
) -> dict[str, Any]:
    """Agreement of the judge's mean score per record with the gold labels.

    Returns:
        ``{count, mae, bias, spearman, kappa, threshold, unmatched_labels, unscored_records}``.
    """
    tally = GoldTally(gold, threshold=threshold)
    for index, record in enumerate(records):
        tally.add(record, runs_of(index))
    return tally.result()


def lines(noise: Mapping[str, Any] | None, gold: Mapping[str, Any] | None) -> list[str]:
    """The text lines printed next to the judge-health line."""
    out: list[str] = []

    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.4f}"

    if noise is not None:
        out.append(
            f"Judge noise: over {noise['records']} record(s) judged repeatedly, mean variance "
            f"{num(noise['mean_variance'])} (std {num(noise['mean_std'])}, max std {num(noise['max_std'])}); "
            f"{noise['disagreeing']} record(s) got different scores"
        )
    if gold is not None:
        out.append(
            f"Gold agreement: {gold['count']} record(s): MAE {num(gold['mae'])}, bias {num(gold['bias'])}, "
            f"Spearman {num(gold['spearman'])}, kappa@{gold['threshold']:g} {num(gold['kappa'])}"
            f" ({gold['unmatched_labels']} label(s) matched no record)"
        )
    return out
