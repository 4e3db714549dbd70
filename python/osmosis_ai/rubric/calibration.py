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

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from osmosis_ai.errors import RunError

__all__ = ["gold_agreement", "judge_noise", "load_gold"]

MAX_EXAMPLES = 3


def _scores(runs: Sequence[Mapping[str, Any]]) -> list[float]:
    return [float(r["score"]) for r in runs if r.get("status") == "success" and r.get("score") is not None]


def judge_noise(records: Sequence[Any], runs_of: Any) -> dict[str, Any]:
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
    from osmosis_ai.stats import score_statistics

    spreads: list[tuple[float, float, Any, list[float]]] = []
    for index, record in enumerate(records):
        scores = _scores(runs_of(index))
        if len(scores) >= 2:
            s = score_statistics(scores)
            spreads.append((float(s.sample_variance or 0.0), float(s.sample_std or 0.0), record, scores))
    if not spreads:
        return {
            "records": 0,
            "mean_variance": None,
            "mean_std": None,
            "max_std": None,
            "disagreeing": 0,
            "examples": [],
        }
    variances = score_statistics([v for v, _, _, _ in spreads])
    stds = score_statistics([d for _, d, _, _ in spreads])
    noisiest = sorted(spreads, key=lambda t: -t[0])[:MAX_EXAMPLES]
    return {
        "records": len(spreads),
        "mean_variance": variances.mean,
        "mean_std": stds.mean,
        "max_std": stds.max,
        "disagreeing": sum(max(s) != min(s) for _, _, _, s in spreads),
        "examples": [
            {"record": getattr(r, "record_id", r), "scores": s, "std": d} for _, d, r, s in noisiest if d > 0
        ],
    }


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


def gold_agreement(
    records: Sequence[Any], runs_of: Any, gold: Mapping[str, float], *, threshold: float
) -> dict[str, Any]:
    """Agreement of the judge's mean score per record with the gold labels.

    Returns:
        ``{count, mae, bias, spearman, kappa, threshold, unmatched_labels, unscored_records}``.
    """
    from osmosis_ai.stats import agreement, score_statistics

    judge: list[float] = []
    labels: list[float] = []
    used: set[str] = set()
    unscored = 0
    for index, record in enumerate(records):
        key = next((k for k in (record.record_id, record.label) if k in gold), None)
        if key is None:
            continue
        scores = _scores(runs_of(index))
        if not scores:
            unscored += 1
            continue
        used.add(key)
        judge.append(float(score_statistics(scores).mean or 0.0))
        labels.append(gold[key])
    base = {
        "threshold": threshold,
        "unmatched_labels": len(set(gold) - used) - unscored,
        "unscored_records": unscored,
    }
    if not judge:
        return {"count": 0, "mae": None, "bias": None, "spearman": None, "kappa": None, **base}
    result = agreement(judge, labels, threshold=threshold)
    return {
        "count": result.count,
        "mae": result.mae,
        "bias": result.bias,
        "spearman": result.spearman,
        "kappa": result.kappa,
        **base,
    }


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
