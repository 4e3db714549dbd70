"""``osmosis_ai.compare``: is run B really better than run A on the same rows, or is it noise?

The numbers are the comparison model's (:func:`osmosis_ai.results.compare_results`, computed once in
the Rust core); this module adds what a page needs around them: the rows paired for side-by-side
reading, the rows that changed most, and per-group differences (through the stats core).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.report._embed import DEFAULT_MAX_DATA_MB
from osmosis_ai.report._figures import group_fields
from osmosis_ai.report._pairs import Pair, Paired, first_attempt, group_deltas, pair_rows
from osmosis_ai.report._run import Scan, scan_file

__all__ = ["RunComparison", "compare", "compare_scans"]

PathLike = str | os.PathLike[str]
_CHANGED_ROWS = 20


@dataclass(frozen=True)
class RunComparison:
    """What :func:`compare` returns; differences are ``B - A`` (positive: B is better).

    Attributes:
        a: Path of run A.
        b: Path of run B.
        metric: The score name compared.
        matched_by: ``"row_key"`` (row content) or ``"row_index"`` (files without content keys).
        rows_a: Rows of A.
        rows_b: Rows of B.
        rows_matched: Rows in both (the rows every statistic below is over).
        pass_threshold: A run passes when its score is >= this.
        a_values: A's estimate per statistic over the matched rows (None: nothing of A scored there).
        b_values: B's estimate per statistic over the matched rows (None: nothing of B scored there).
        differences: ``{statistic: {"estimate", "a", "b", "low", "high", "level", "method", "p_value",
            "p_holm", "verdict", "note"}}`` of ``B - A``, paired over rows (``"mean"``, ``"pass_at_<k>"``,
            ``"pass_hat_<k>"``); ``low`` / ``high`` are None when the rows cannot support an interval, and
            ``estimate`` too when a side has nothing scored (``note`` says why).
        flips: On each row's first attempt (run 0): ``a_only`` (A passed, B did not), ``b_only``,
            ``both``, ``neither``.
        mcnemar_p: McNemar's exact two-sided p-value on those flips (None: no row's first attempt counts on
            both sides).
        changed_rows: The rows whose share of passing runs moved most (without their runs; the page
            shows every row's runs side by side).
        interval_method: ``"t"`` (paired Student t, over rows) or ``"bootstrap"``.
        groups: Per dataset field (2-30 values), per group: rows and the paired ``B - A`` of the mean
            and pass@1 with intervals.
        sides: ``{"a": ..., "b": ...}``: each run's own numbers of the metric over all its rows (the
            result model's function result: pass@k / pass^k and their intervals, tallies).
        warnings: What the numbers do not cover (different n, rows only one run holds, how many
            statistics were tested).
        verdict: The headline verdict: ``{"statistic", "outcome", "reason"}``; ``outcome`` is
            ``"b_better"`` / ``"a_better"`` only when the interval, Holm's adjusted p-value and McNemar's
            test agree.
    """

    a: str
    b: str
    metric: str
    matched_by: str
    rows_a: int
    rows_b: int
    rows_matched: int
    pass_threshold: float
    a_values: dict[str, float | None]
    b_values: dict[str, float | None]
    differences: dict[str, dict[str, Any]]
    flips: dict[str, int]
    mcnemar_p: float | None
    changed_rows: list[dict[str, Any]] = field(default_factory=list)
    interval_method: str = "t"
    groups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    sides: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    verdict: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


_FLIP = {(True, False): "a_only", (False, True): "b_only", (True, True): "both", (False, False): "neither"}


def flip_of(pair: Pair) -> str | None:
    """How the pair's first attempts went (None when either has no first attempt that counts)."""
    fa, fb = first_attempt(pair.a), first_attempt(pair.b)
    return None if fa is None or fb is None else _FLIP[(fa, fb)]


def _changed_rows(pairs: list[Pair], mean: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows whose share of passing runs moved most (the terminal lists the first ten); none when a
    side has nothing scored on the matched rows (``mean``'s difference has no value for it): its errored
    runs are no 0s to move from or to."""
    if mean.get("a") is None or mean.get("b") is None:
        return []
    changes = []
    for pair in pairs:
        rate_a, rate_b = pair.a.share_passed(), pair.b.share_passed()
        if rate_a is not None and rate_b is not None and rate_a != rate_b:
            changes.append((rate_b - rate_a, rate_a, rate_b, pair))
    changes.sort(key=lambda c: (-abs(c[0]), c[3].a.index))
    return [
        {
            "row_key": pair.key,
            "row_index": pair.a.index,
            "row_index_b": pair.b.index,
            "status": "improved" if delta > 0 else "regressed",
            "pass_rate_a": rate_a,
            "pass_rate_b": rate_b,
            "change": delta,
        }
        for delta, rate_a, rate_b, pair in changes[:_CHANGED_ROWS]
    ]


def compare_scans(
    scan_a: Scan,
    scan_b: Scan,
    *,
    metric: str | None = None,
    allow_partial: bool = False,
    level: float = 0.95,
    method: str = "t",
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[RunComparison, Paired]:
    """The comparison of two scanned files and their paired rows (see :func:`compare`)."""
    from osmosis_ai.results import compare_results

    model = compare_results(
        scan_a.source.path,
        scan_b.source.path,
        metric=metric,
        allow_partial=allow_partial,
        level=level,
        method="bootstrap" if method == "bootstrap" else "t",
        resamples=resamples,
        seed=seed,
    ).to_dict()
    paired = pair_rows(scan_a.index, scan_b.index, model["metric"])
    threshold = model["a"]["summary"]["pass_threshold"]
    # An unscored judgement is not a 0 in a rubric's mean (eval-rubric's own rule); an eval's failed run is.
    rubric = scan_a.source.header.get("kind") == "rubric" or scan_a.source.layout == "rubric-json"
    fields = group_fields(scan_a.dataset.rows)
    n = model["ks"][-1] if model["ks"] else 1
    differences = model["differences"]
    comparison = RunComparison(
        a=model["a"]["path"],
        b=model["b"]["path"],
        metric=model["metric"],
        matched_by=model["matched_by"],
        rows_a=model["a"]["rows"],
        rows_b=model["b"]["rows"],
        rows_matched=model["rows_matched"],
        pass_threshold=threshold,
        a_values={k: d["a"] for k, d in differences.items()},
        b_values={k: d["b"] for k, d in differences.items()},
        differences=differences,
        flips=model["flips"],
        mcnemar_p=model["mcnemar_p"],
        changed_rows=_changed_rows(paired.matched, differences["mean"]),
        interval_method=model["method"],
        groups=group_deltas(paired.matched, fields, threshold, n, level, "exclude" if rubric else "zero"),
        sides={"a": model["a"]["summary"], "b": model["b"]["summary"]},
        warnings=[w["message"] for w in model["warnings"]] + paired.warnings,
        verdict=model["verdict"],
    )
    return comparison, paired


def compare(
    a: PathLike,
    b: PathLike,
    *,
    metric: str | None = None,
    allow_partial: bool = False,
    level: float = 0.95,
    method: str = "t",
    resamples: int = 1000,
    seed: int = 0,
    output: PathLike | None = None,
    max_data_mb: float = DEFAULT_MAX_DATA_MB,
    dataset: PathLike | None = None,
) -> RunComparison:
    """Compares two runs on the same rows: flips, paired intervals of ``B - A``, McNemar's exact test.

    Rows are matched by content (``row_key``), so two runs over the same dataset pair up even when their
    order or ``--offset`` differs. Every statistic is a paired difference over the matched rows (Student
    t, or the paired bootstrap resampling rows with both runs' attempts together); McNemar's test looks at
    each row's first attempt; a verdict needs the interval, Holm's adjusted p-value and McNemar to agree.
    All of it is the comparison model's (:func:`osmosis_ai.results.compare_results`, the Rust core).
    With ``output``, the page shows A and B side by side for every matched row (runs embedded up to
    ``max_data_mb`` compressed MiB), with only-flips / only-differences filters and per-group deltas.

    Args:
        a: Run A's results file (the baseline).
        b: Run B's results file (the candidate).
        metric: The score name; default the first one A declares.
        allow_partial: Compare the shared rows when the runs hold different rows (else refuse).
        level: Confidence level of the intervals.
        method: ``"t"`` (paired Student t; ``"normal"`` is taken as it) or ``"bootstrap"`` (paired, over rows).
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.
        output: Write the comparison page here as well.
        max_data_mb: Compressed MiB of runs the page may hold.
        dataset: The dataset file for ground truths and per-group deltas (default: the one A names).

    Returns:
        A :class:`RunComparison`.

    Raises:
        StatsError: The runs hold different rows (the message says how many match), fewer than 2 rows
            match, or the metric is missing.

    Example:
        >>> import json, pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> def log(name, passing):
        ...     lines = [{"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"]}}]
        ...     lines += [{"row_key": f"k{r}", "row_index": r, "run_index": 0, "success": True,
        ...                "scores": {"acc": float(r < passing)}} for r in range(10)]
        ...     (folder / name).write_text("".join(json.dumps(x) + "\\n" for x in lines))
        ...     return folder / name
        >>> result = compare(log("a.jsonl", 3), log("b.jsonl", 8))
        >>> (result.flips["b_only"], round(result.differences["pass_at_1"]["estimate"], 2), round(result.mcnemar_p, 4))
        (5, 0.5, 0.0625)
        >>> result.verdict["outcome"]
        'no_clear_difference'
    """
    from osmosis_ai.report._compare_page import PageSinks, write_compare_page

    path_a, path_b = os.fspath(a), os.fspath(b)
    sinks = PageSinks(int(max_data_mb * (1 << 20))) if output is not None else None
    scan_a = scan_file(path_a, sink=sinks.a if sinks else None, dataset=dataset)
    scan_b = scan_file(path_b, sink=sinks.b if sinks else None, dataset=dataset)
    comparison, paired = compare_scans(
        scan_a,
        scan_b,
        metric=metric,
        allow_partial=allow_partial,
        level=level,
        method=method,
        resamples=resamples,
        seed=seed,
    )
    if output is not None and sinks is not None:
        write_compare_page(Path(output), comparison, paired, scan_a, scan_b, sinks)
    return comparison
