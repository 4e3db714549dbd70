"""``osmosis_ai.compare``: is run B really better than run A on the same rows, or is it noise?"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.errors import StatsError
from osmosis_ai.report._embed import DEFAULT_MAX_DATA_MB
from osmosis_ai.report._pairs import Pair, Paired, first_attempt, group_deltas, pair_rows, paired_statistics
from osmosis_ai.report._run import Scan, scan_file
from osmosis_ai.stats import IntervalMethod

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
        a_values: A's estimate per statistic over the matched rows.
        b_values: B's estimate per statistic over the matched rows.
        differences: ``{statistic: {"estimate", "low", "high", "level", "method"}}`` of ``B - A``,
            paired over rows (``"mean"``, ``"pass_at_<k>"``, ``"pass_hat_<k>"``).
        flips: On each row's first attempt (run 0): ``a_only`` (A passed, B did not), ``b_only``,
            ``both``, ``neither``.
        mcnemar_p: McNemar's exact two-sided p-value on those flips.
        changed_rows: The rows whose share of passing runs moved most (without their runs; the page
            shows every row's runs side by side).
        interval_method: ``"bootstrap"`` (paired, over rows) or ``"normal"``.
        groups: Per dataset field (2-30 values), per group: rows and the paired ``B - A`` of the mean
            and pass@1 with intervals.
        warnings: What the numbers do not cover (different n, rows only one run holds).
    """

    a: str
    b: str
    metric: str
    matched_by: str
    rows_a: int
    rows_b: int
    rows_matched: int
    pass_threshold: float
    a_values: dict[str, float]
    b_values: dict[str, float]
    differences: dict[str, dict[str, Any]]
    flips: dict[str, int]
    mcnemar_p: float
    changed_rows: list[dict[str, Any]] = field(default_factory=list)
    interval_method: str = "bootstrap"
    groups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


_FLIP = {(True, False): "a_only", (False, True): "b_only", (True, True): "both", (False, False): "neither"}


def flip_of(pair: Pair) -> str | None:
    """How the pair's first attempts went (None when either has no first attempt that counts)."""
    fa, fb = first_attempt(pair.a), first_attempt(pair.b)
    return None if fa is None or fb is None else _FLIP[(fa, fb)]


def _flips(pairs: list[Pair]) -> dict[str, int]:
    flips = dict.fromkeys(_FLIP.values(), 0)
    for pair in pairs:
        kind = flip_of(pair)
        if kind is not None:
            flips[kind] += 1
    return flips


def _changed_rows(pairs: list[Pair]) -> list[dict[str, Any]]:
    """The rows whose share of passing runs moved most (the terminal lists the first ten)."""
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


def _metric(scan_a: Scan, scan_b: Scan, metric: str | None, path_a: str, path_b: str) -> str:
    names = list(scan_a.index.names)
    chosen = metric or (names[0] if names else None)
    for scan, path in ((scan_a, path_a), (scan_b, path_b)):
        if chosen is None or chosen not in scan.index.names:
            held = ", ".join(scan.index.names) or "no scores"
            raise StatsError(f"{path}: no score named {chosen!r}; it holds {held}", field="metric")
    assert chosen is not None
    return chosen


def compare_scans(
    scan_a: Scan,
    scan_b: Scan,
    *,
    metric: str | None = None,
    allow_partial: bool = False,
    level: float = 0.95,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[RunComparison, Paired]:
    """The comparison of two scanned files and their paired rows (see :func:`compare`)."""
    from osmosis_ai.stats import mcnemar_exact

    path_a, path_b = scan_a.source.path, scan_b.source.path
    name = _metric(scan_a, scan_b, metric, path_a, path_b)
    paired = pair_rows(scan_a.index, scan_b.index, name)
    matched = paired.matched
    if not allow_partial and (len(matched) != paired.rows_a or len(matched) != paired.rows_b):
        raise StatsError(
            f"{path_a} and {path_b} were run on different datasets: {len(matched)} rows match by "
            f"{'content' if paired.by_content else 'row index'} (A has {paired.rows_a} rows, B has {paired.rows_b}). "
            "Compare runs of the same dataset, or allow a partial comparison (allow_partial=True, --allow-partial) "
            f"of the {len(matched)} shared rows.",
            field="rows",
        )
    if len(matched) < 2:
        raise StatsError(
            f"{path_a} and {path_b} share {len(matched)} rows; a comparison needs at least 2", field="rows"
        )
    threshold = scan_a.index.threshold
    # An unscored judgement is not a 0 in a rubric's mean (eval-rubric's own rule); an eval's failed run is.
    rubric = scan_a.source.header.get("kind") == "rubric" or scan_a.source.layout == "rubric-json"
    failed = "exclude" if rubric else "zero"
    stats = paired_statistics(
        matched, threshold, failed=failed, level=level, method=method, resamples=resamples, seed=seed
    )
    fields = {i: row.get("fields") or {} for i, row in scan_a.dataset.rows.items()}
    flips = _flips(matched)
    comparison = RunComparison(
        a=path_a,
        b=path_b,
        metric=name,
        matched_by="row_key" if paired.by_content else "row_index",
        rows_a=paired.rows_a,
        rows_b=paired.rows_b,
        rows_matched=len(matched),
        pass_threshold=threshold,
        a_values=stats.a_values,
        b_values=stats.b_values,
        differences=stats.differences,
        flips=flips,
        mcnemar_p=mcnemar_exact(flips["a_only"], flips["b_only"]),
        changed_rows=_changed_rows(matched),
        interval_method=method,
        groups=group_deltas(matched, fields, threshold, stats.n, level, failed),
        warnings=[*stats.warnings, *paired.warnings],
    )
    return comparison, paired


def compare(
    a: PathLike,
    b: PathLike,
    *,
    metric: str | None = None,
    allow_partial: bool = False,
    level: float = 0.95,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
    output: PathLike | None = None,
    max_data_mb: float = DEFAULT_MAX_DATA_MB,
    dataset: PathLike | None = None,
) -> RunComparison:
    """Compares two runs on the same rows: flips, paired intervals of ``B - A``, McNemar's exact test.

    Rows are matched by content (``row_key``), so two runs over the same dataset pair up even when their
    order or ``--offset`` differs. The paired bootstrap resamples rows with both runs' attempts of a row
    together; McNemar's test looks at each row's first attempt. Both are computed in the Rust core.
    With ``output``, the page shows A and B side by side for every matched row (runs embedded up to
    ``max_data_mb`` compressed MiB), with only-flips / only-differences filters and per-group deltas.

    Args:
        a: Run A's results file (the baseline).
        b: Run B's results file (the candidate).
        metric: The score name; default the first one A declares.
        allow_partial: Compare the shared rows when the runs hold different rows (else refuse).
        level: Confidence level of the intervals.
        method: ``"bootstrap"`` (paired, over rows) or ``"normal"`` (the paired normal interval).
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
