"""What a page plots besides the summary: histogram bins, latency percentiles, per-group statistics and
the judge's panels. Percentiles and every per-group statistic come from the Rust core
(:func:`osmosis_ai.stats.quantiles`, :class:`osmosis_ai.stats.Aggregator`); here they are only arranged.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from typing import Any

from osmosis_ai.report._rows import RowIndex

__all__ = ["group_fields", "groups", "histogram", "judge_panels", "latency", "log_histogram"]

_BINS = 20
_MAX_GROUPS = 30
PERCENTILES = (0.5, 0.95, 0.99)


def histogram(values: array[float], bins: int = _BINS) -> list[dict[str, float]]:
    """Equal-width bins over the finite values: ``[{"low", "high", "count"}]`` (empty without values)."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return []
    low, high = min(finite), max(finite)
    if high == low:
        # One value: a bar of unit width around it (a zero-width bin would draw as a hairline).
        return [{"low": low - 0.5, "high": high + 0.5, "count": len(finite)}]
    width = (high - low) / bins
    counts = [0] * bins
    for v in finite:
        counts[min(int((v - low) / width), bins - 1)] += 1
    return [{"low": low + i * width, "high": low + (i + 1) * width, "count": c} for i, c in enumerate(counts)]


def log_histogram(values: array[float], bins: int = _BINS) -> list[dict[str, float]]:
    """Bins of equal width in log10 over the positive finite values (latencies span decades)."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return []
    low, high = math.log10(min(positive)), math.log10(max(positive))
    if high - low < 1e-9:
        return [{"low": 10**low / 1.2, "high": 10**high * 1.2, "count": len(positive)}]
    width = (high - low) / bins
    counts = [0] * bins
    for v in positive:
        counts[min(int((math.log10(v) - low) / width), bins - 1)] += 1
    return [
        {"low": 10 ** (low + i * width), "high": 10 ** (low + (i + 1) * width), "count": c}
        for i, c in enumerate(counts)
    ]


def latency(values: array[float]) -> dict[str, Any]:
    """The runs' latency: log-scale bins and p50 / p95 / p99 (None without durations)."""
    from osmosis_ai.stats import quantiles

    finite = array("d", (v for v in values if math.isfinite(v)))
    q = quantiles(finite, PERCENTILES) if len(finite) else None
    return {
        "bins": log_histogram(finite),
        "runs": len(finite),
        "percentiles": None
        if q is None
        else {f"p{round(p * 100)}": v for p, v in zip(PERCENTILES, q, strict=True)},
    }


def group_fields(dataset: Mapping[int, Mapping[str, Any]]) -> dict[str, dict[str, list[int]]]:
    """Dataset fields with 2 to 30 distinct values, one of them on 2 rows or more (a field unique to each
    row, such as an answer, groups nothing): ``{field: {value: [row indices]}}``."""
    fields: dict[str, dict[str, list[int]]] = {}
    dropped: set[str] = set()
    for index, row in dataset.items():
        for name, value in (row.get("fields") or {}).items():
            if name in dropped:
                continue
            groups = fields.setdefault(name, {})
            groups.setdefault(value, []).append(index)
            if len(groups) > _MAX_GROUPS:
                dropped.add(name)
                del fields[name]
    return {
        name: groups
        for name, groups in fields.items()
        if len(groups) >= 2 and any(len(members) >= 2 for members in groups.values())
    }


def _group_stats(
    rows: RowIndex, key: str, members: set[int], summary: Mapping[str, Any], ks: list[int]
) -> dict[str, Any]:
    """One group's mean and pass@1 / pass@n with the result model's intervals (Student t, Wilson: the
    rules of the file's own numbers, so a group is never surer than its rows)."""
    from osmosis_ai.stats import Aggregator

    agg = Aggregator(
        pass_threshold=summary["pass_threshold"],
        ks=ks,
        n_runs=summary["n_runs"],
        failed=summary["failed_policy"],
    )
    for index, attempts, errors in rows.attempts(key):
        if index in members:
            agg.push(attempts, row_index=index, errors=errors)
    if not len(agg):
        return {"rows": 0}
    s = agg.finish()
    intervals = agg.model_intervals(level=summary["level"])
    # As the result model: nothing scored (only errored or unscored runs) is no mean and no pass rate.
    scored = s.count > 0 and not (summary["failed_policy"] == "zero" and s.failed == s.count)
    return {
        "rows": s.rows,
        "mean": s.mean if scored else None,
        "mean_interval": intervals.get("mean") if scored else None,
        "pass_at_k": {
            str(k): {
                "value": s.pass_at_k.get(k) if scored else None,
                "interval": intervals.get(f"pass_at_{k}") if scored else None,
            }
            for k in (ks[0], ks[-1])
        },
    }


def groups(
    rows: RowIndex, dataset: Mapping[int, Mapping[str, Any]], summary: Mapping[str, Any]
) -> dict[str, Any]:
    """Per dataset field (2-30 values), per group: rows, mean and pass@1 / pass@n with intervals, for
    each score of the primary model."""
    primary = summary["models"][0] if summary["models"] else None
    if primary is None:
        return {}
    keys = [f["name"] for f in primary["functions"]]
    ks = page_ks_of(summary)
    out: dict[str, Any] = {}
    for name, members in group_fields(dataset).items():
        out[name] = [
            {
                "value": value,
                "stats": {key: _group_stats(rows, key, set(indices), summary, ks) for key in keys},
            }
            for value, indices in sorted(members.items(), key=lambda item: (-len(item[1]), item[0]))
        ]
    return out


def page_ks_of(summary: Mapping[str, Any]) -> list[int]:
    """The k values of the summary's first score (the result model's): per-group statistics use them."""
    functions = summary["models"][0]["functions"] if summary["models"] else []
    return [int(k) for k in (functions[0]["ks"] if functions else [])] or [1]


def _noise(rows: RowIndex, key: str, dataset: Mapping[int, Mapping[str, Any]]) -> dict[str, Any] | None:
    """Repeat noise of a rubric log judged more than once per record (the same rule as eval-rubric's),
    each record named as the rubric commands name it (its id, else ``record[<row + 1>]``)."""
    from osmosis_ai.rubric.calibration import judge_noise
    from osmosis_ai.rubric.records import record_identity

    attempts = [(index, [a for a in runs if a is not None]) for index, runs, _ in rows.attempts(key)]
    if not any(len(scores) >= 2 for _, scores in attempts):
        return None
    names = [
        record_identity((dataset.get(index) or {}).get("fields") or {}, index + 1)[1] for index, _ in attempts
    ]
    return judge_noise(names, lambda i: [{"status": "success", "score": s} for s in attempts[i][1]])


def judge_panels(
    rows: RowIndex,
    header: Mapping[str, Any],
    kind: str | None,
    key: str | None,
    dataset: Mapping[int, Mapping[str, Any]],
) -> dict[str, Any] | None:
    """Judge health, repeat noise and gold agreement of a rubric file (None for other kinds).

    The health counters come from the runs; noise and gold agreement from the eval-rubric ``-o`` JSON
    when it holds them (``--repeat``, ``--gold``), noise otherwise from the runs of a log judged more
    than once per record.
    """
    if kind != "rubric":
        return None
    health = {k: rows.judge.get(k, 0) for k in ("parse_failures", "clamped", "retries", "unscored", "errors")}
    noise = header.get("judge_noise")
    if noise is None and key is not None:
        noise = _noise(rows, key, dataset)
    return {"health": health, "noise": noise, "gold": header.get("gold_agreement")}
