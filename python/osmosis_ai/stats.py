"""Statistics over eval results: pass@k, pass^k, aggregates and confidence intervals over rows.

A *row* is one prompt; its *attempts* are the runs made for it. ``n`` is a row's number of attempts and
``c`` how many passed (score >= ``pass_threshold``). The numbers are computed by the Rust core
(``rust/src/stats/``), exactly and without building binomial coefficients:

* ``pass@k = 1 - C(n-c, k) / C(n, k)``: the chance that at least one of k attempts drawn without
  replacement passes (the unbiased estimator);
* ``pass^k = C(c, k) / C(n, k)``: the chance that all k of them pass.

Unlike common helpers, ``k > n``, ``c > n`` and negative counts are errors (:class:`StatsError`, a
``ValueError``), never a silent 1.0, and NaN or infinite scores are refused with the row that holds
them unless you ask for them to count as failed attempts.
"""

from __future__ import annotations

import math
import os
import statistics
from array import array
from collections.abc import Iterable
from typing import Any, Literal

from osmosis_ai import _core
from osmosis_ai._stats_input import CHUNK, as_int, count_view, matrix, pack_values
from osmosis_ai._stats_types import Comparison, Interval, ManyEstimate, Summary
from osmosis_ai.errors import StatsError

__all__ = [
    "DEFAULT_KS",
    "Aggregator",
    "Comparison",
    "Interval",
    "ManyEstimate",
    "Summary",
    "compare",
    "confidence_interval",
    "pass_at_k",
    "pass_at_k_many",
    "pass_hat_k",
    "pass_hat_k_many",
    "summarize",
    "summarize_results",
]

#: The k values of the established eval: pass@k for each k up to the attempts per row.
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)

FailedPolicy = Literal["zero", "exclude"]
NonFinitePolicy = Literal["error", "fail"]
IntervalMethod = Literal["bootstrap", "normal"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one row: ``1 - C(n-c, k) / C(n, k)``.

    Args:
        n: Attempts made for the row (>= k).
        c: Attempts that passed (0 <= c <= n).
        k: Attempts drawn (>= 1).

    Returns:
        The probability that at least one of k attempts drawn without replacement passes.

    Raises:
        StatsError: (a ``ValueError``) when a count is negative, ``c > n``, ``k < 1`` or ``k > n``.

    Example:
        >>> round(pass_at_k(10, 7, 3), 6)
        0.991667
    """
    return _core.pass_at_k(as_int(n, "n"), as_int(c, "c"), as_int(k, "k"))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one row: ``C(c, k) / C(n, k)``, the chance that k drawn attempts all pass.

    Args:
        n: Attempts made for the row (>= k).
        c: Attempts that passed (0 <= c <= n).
        k: Attempts drawn (>= 1).

    Returns:
        The probability that all of k attempts drawn without replacement pass.

    Raises:
        StatsError: (a ``ValueError``) on the same inputs as :func:`pass_at_k`.

    Example:
        >>> pass_hat_k(5, 4, 2)
        0.6
    """
    return _core.pass_hat_k(as_int(n, "n"), as_int(c, "c"), as_int(k, "k"))


def _many(estimator: str, n: Any, c: Any, k: int, per_row: bool) -> ManyEstimate:
    k = as_int(k, "k")
    c_view, c_code = count_view(c, "c")
    rows = len(c_view)
    n_view: tuple[memoryview, str] | None = None
    n_scalar = 0
    if isinstance(n, (int, float)) or (hasattr(n, "__index__") and not hasattr(n, "__len__")):
        n_scalar = as_int(n, "n")
    else:
        n_view = count_view(n, "n")
        if len(n_view[0]) != rows:
            raise StatsError(
                f"n has {len(n_view[0])} rows but c has {rows}: "
                "give one n per row or a single n for all rows",
                field="n",
            )
    if rows == 0:
        raise StatsError("c has no rows: a mean over no rows is undefined", field="c")
    sums = []
    values = array("d") if per_row else None
    for start in range(0, rows, CHUNK):
        stop = start + CHUNK
        n_part = n_scalar if n_view is None else (n_view[0][start:stop].tobytes(), n_view[1])
        c_part = (c_view[start:stop].tobytes(), c_code)
        total, _, raw = _core.estimate_many(estimator, n_part, c_part, k, per_row, start)
        sums.append(total)
        if values is not None and raw is not None:
            values.frombytes(raw)
    return ManyEstimate(mean=math.fsum(sums) / rows, rows=rows, values=values)


def pass_at_k_many(n: Any, c: Any, k: int, *, per_row: bool = False) -> ManyEstimate:
    """pass@k over rows of ``(n, c)``: the mean over rows and, with ``per_row``, each row's value.

    Args:
        n: Attempts per row: one int for every row, or one per row.
        c: Passing attempts per row. Both accept lists, tuples, ``array.array``, numpy arrays (any
            integer dtype; float arrays of whole numbers), memoryviews and polars / pandas Series.
        k: Attempts drawn.
        per_row: Also return every row's value.

    Returns:
        A :class:`ManyEstimate`.

    Raises:
        StatsError: naming the first bad row (``k > n``, ``c > n``, a negative or fractional count),
            or when there are no rows.

    Example:
        >>> pass_at_k_many(5, [2, 0, 5], 3).mean
        0.6333333333333333
    """
    return _many("pass_at_k", n, c, k, per_row)


def pass_hat_k_many(n: Any, c: Any, k: int, *, per_row: bool = False) -> ManyEstimate:
    """pass^k over rows of ``(n, c)``; arguments and errors as in :func:`pass_at_k_many`.

    Example:
        >>> pass_hat_k_many([2, 2], [2, 1], 2).mean
        0.5
    """
    return _many("pass_hat_k", n, c, k, per_row)


def _z(level: float, method: str) -> float:
    if not 0.0 < level < 1.0:
        raise StatsError(f"level must be between 0 and 1, got {level}", field="level")
    if method not in ("bootstrap", "normal"):
        raise StatsError(f'method must be "bootstrap" or "normal", got {method!r}', field="method")
    return statistics.NormalDist().inv_cdf(0.5 + level / 2.0)


def _interval(name: str, raw: tuple[float, float, float] | None, level: float, method: str) -> Interval:
    if raw is None:
        raise StatsError(f"{name}: a confidence interval needs at least 2 rows with attempts", field=name)
    return Interval(estimate=raw[0], low=raw[1], high=raw[2], level=level, method=method)


def confidence_interval(
    values: Any,
    *,
    weights: Any = None,
    level: float = 0.95,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
) -> Interval:
    """A confidence interval for the mean over rows of per-row values.

    With ``weights`` the statistic is ``sum(values) / sum(weights)`` (for example score sums over
    attempts per row). The bootstrap resamples rows with a seeded generator, so the same seed gives
    the same interval on every platform; ``"normal"`` is ``estimate ± z·se``.

    Args:
        values: Per-row values, such as ``pass_at_k_many(..., per_row=True).values``.
        weights: Optional per-row weights.
        level: Confidence level in (0, 1).
        method: ``"bootstrap"`` or ``"normal"``.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        An :class:`Interval`.

    Raises:
        StatsError: on NaN / infinite values (naming the row), fewer than 2 rows, a bad level.

    Example:
        >>> iv = confidence_interval([0.0, 1.0, 1.0, 1.0], method="normal")
        >>> (iv.estimate, round(iv.low, 3), round(iv.high, 3))
        (0.75, 0.26, 1.24)
    """
    z = _z(level, method)
    data, code = pack_values(values, "values")
    packed_weights = pack_values(weights, "weights") if weights is not None else None
    raw = _core.row_interval(data, code, method, level, z, resamples, seed, packed_weights)
    return _interval("values", raw, level, method)


class Aggregator:
    """Summarises rows of attempt scores pushed one row at a time, keeping a few numbers per row.

    Args:
        pass_threshold: An attempt passes when its score is >= this (default 1.0, as the established eval).
        ks: The k values for pass@k / pass^k; default 1, 3, 5, 10 up to the smallest row's attempts.
            An explicit k larger than some row's attempts is an error naming that row.
        n_runs: Attempts every row should have; shorter rows are padded with failed attempts
            (``n = max(len(row), n_runs)``), which count for pass@k but not in the mean.
        failed: ``"zero"`` (default, established): a failed attempt (``None``) is a 0.0 score in
            mean / std / min / max; ``"exclude"``: it is left out there. It never passes.
        nonfinite: ``"error"`` (default): a NaN or infinite score raises :class:`StatsError` naming the
            row and attempt; ``"fail"``: it counts as a failed attempt.
        thresholds: More thresholds to report :attr:`Summary.mixed_fraction` for.

    Example:
        >>> agg = Aggregator(n_runs=3)
        >>> agg.push([1.0, 0.0, None])
        >>> agg.push([1.0, 1.0, 1.0])
        >>> s = agg.finish()
        >>> (round(s.mean, 4), s.failed, round(s.pass_at_k[1], 4), s.mixed_fraction[1.0])
        (0.6667, 1, 0.6667, 0.5)
    """

    def __init__(
        self,
        *,
        pass_threshold: float = 1.0,
        ks: Iterable[int] | None = None,
        n_runs: int | None = None,
        failed: FailedPolicy = "zero",
        nonfinite: NonFinitePolicy = "error",
        thresholds: Iterable[float] = (),
    ) -> None:
        self._failed = failed
        self._core = _core.StatsAggregator(
            float(pass_threshold),
            [float(t) for t in thresholds],
            None if ks is None else [as_int(k, "ks") for k in ks],
            None if n_runs is None else as_int(n_runs, "n_runs"),
            failed,
            nonfinite,
        )

    @classmethod
    def _from_core(cls, core: _core.StatsAggregator, failed: FailedPolicy) -> Aggregator:
        agg = cls.__new__(cls)
        agg._failed = failed
        agg._core = core
        return agg

    def __len__(self) -> int:
        return len(self._core)

    def push(self, scores: Iterable[float | None], *, row_index: int | None = None) -> None:
        """Adds one row: its attempts' scores in order, ``None`` for a failed attempt.

        Args:
            scores: The row's scores (bools and ints count as numbers).
            row_index: The row's index, used in error messages; default its position.

        Raises:
            StatsError: on a NaN / infinite score (under ``nonfinite="error"``) or a non-number; the
                row is then not added.
        """
        row = scores if isinstance(scores, (list, tuple)) else list(scores)
        try:
            self._core.push(row, row_index)
        except TypeError:
            label = len(self) if row_index is None else row_index
            for attempt, score in enumerate(row):
                if score is not None and not isinstance(score, (int, float)):
                    try:
                        float(score)
                    except (TypeError, ValueError):
                        raise StatsError(
                            f"row {label}: attempt {attempt}: score {score!r} is not a number",
                            row=label,
                            field="scores",
                        ) from None
            raise

    def push_rows(self, rows: Iterable[Iterable[float | None]] | Any) -> None:
        """Adds many rows: an iterable of rows, or a 2-D numeric array (rows x attempts) in one call.

        Raises:
            StatsError: as :meth:`push`; rows before the bad one stay added.
        """
        packed = matrix(rows)
        if packed is not None:
            flat, code, n_rows, cols = packed
            row_bytes = cols * int(code[1:])
            step = max(1, CHUNK // max(cols, 1))
            for start in range(0, n_rows, step):
                count = min(step, n_rows - start)
                part = flat[start * row_bytes : (start + count) * row_bytes].tobytes()
                self._core.push_matrix(part, code, count, cols)
            return
        for row in rows:
            self.push(row)

    def mixed_rows(self, threshold: float | None = None) -> list[int]:
        """The row indices with 0 < c < n: the prompts that give a group-relative RL update (GRPO
        style) a non-zero advantage at this group size. Drop the others from a training set.

        Args:
            threshold: ``pass_threshold`` (default) or one of ``thresholds``.

        Raises:
            StatsError: If the threshold was not given to the aggregator.

        Example:
            >>> agg = Aggregator()
            >>> agg.push([1.0, 0.0], row_index=10)
            >>> agg.push([1.0, 1.0], row_index=11)
            >>> agg.mixed_rows()
            [10]
        """
        chosen = self._core.finish()["pass_threshold"] if threshold is None else float(threshold)
        return self._core.mixed_rows(chosen)

    def intervals(
        self,
        *,
        ks: Iterable[int] | None = None,
        level: float = 0.95,
        method: IntervalMethod = "bootstrap",
        resamples: int = 1000,
        seed: int = 0,
    ) -> dict[str, Interval]:
        """Confidence intervals over rows for the mean score and pass@k / pass^k per k.

        The mean's interval treats a row's attempts as one unit (a ratio estimator), so correlated
        attempts of one prompt do not make it look more certain than it is.

        Args:
            ks: The k values; default those of :meth:`finish`.
            level: Confidence level in (0, 1).
            method: ``"bootstrap"`` (percentile, rows resampled with ``seed``) or ``"normal"``.
            resamples: Bootstrap resamples.
            seed: Bootstrap seed; the same seed gives the same interval on every platform.

        Returns:
            ``{"mean": Interval, "pass_at_1": Interval, "pass_hat_1": Interval, ...}``.
        """
        z = _z(level, method)
        k_list = list(self.finish().ks) if ks is None else [as_int(k, "ks") for k in ks]
        if any(k < 1 for k in k_list):
            raise StatsError(f"every k must be >= 1, got {k_list}", field="ks")
        raw = self._core.intervals(k_list, method, level, z, resamples, seed)
        return {name: _interval(name, iv, level, method) for name, iv in raw}

    def finish(
        self,
        *,
        confidence: float | None = None,
        method: IntervalMethod = "bootstrap",
        resamples: int = 1000,
        seed: int = 0,
    ) -> Summary:
        """The summary of every row pushed so far (pushing may go on afterwards).

        Args:
            confidence: A level such as 0.95 to add :attr:`Summary.intervals`; None for none.
            method: Interval method, as in :meth:`intervals`.
            resamples: Bootstrap resamples.
            seed: Bootstrap seed.
        """
        d = self._core.finish()
        intervals: dict[str, Interval] = {}
        if confidence is not None:
            intervals = self.intervals(
                ks=d["ks"], level=confidence, method=method, resamples=resamples, seed=seed
            )
        return Summary(
            mean=d["mean"],
            std=d["std"],
            min=d["min"],
            max=d["max"],
            count=d["count"],
            rows=d["rows"],
            failed=d["failed"],
            padded=d["padded"],
            min_attempts=d["min_attempts"],
            max_attempts=d["max_attempts"],
            pass_threshold=d["pass_threshold"],
            failed_policy=self._failed,
            pass_at_k=dict(zip(d["ks"], d["pass_at_k"], strict=True)),
            pass_hat_k=dict(zip(d["ks"], d["pass_hat_k"], strict=True)),
            mixed_fraction=dict(d["mixed_fraction"]),
            intervals=intervals,
        )


def compare(
    a: Aggregator,
    b: Aggregator,
    *,
    ks: Iterable[int] | None = None,
    level: float = 0.95,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
) -> Comparison:
    """Is run ``a`` really better than run ``b``? Paired intervals of ``a - b`` over shared rows.

    Rows are matched by their row index (``row_index`` given to :meth:`Aggregator.push`, else the
    push position). Pairing removes the prompt-to-prompt variance both runs share, so a paired
    interval is much tighter than comparing two separate intervals. The bootstrap resamples rows
    (both runs' values of a row together) with ``seed``; ``"normal"`` uses the linearised standard
    error of the difference.

    Args:
        a: The first run.
        b: The second run.
        ks: The k values; default those both runs' summaries report.
        level: Confidence level in (0, 1).
        method: ``"bootstrap"`` or ``"normal"``.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        A :class:`Comparison`.

    Raises:
        StatsError: when fewer than 2 rows are shared, a row index was pushed twice, or a k is above
            some row's attempts.

    Example:
        >>> a, b = Aggregator(), Aggregator()
        >>> for i in range(40):
        ...     a.push([1.0, 1.0, float(i % 2)])
        ...     b.push([1.0, float(i % 2), 0.0])
        >>> result = compare(a, b, method="normal")
        >>> (result.rows, round(result.differences["pass_at_1"].estimate, 4), result.excludes_zero("mean"))
        (40, 0.3333, True)
    """
    z = _z(level, method)
    if ks is None:
        k_list = [k for k in a.finish().ks if k in b.finish().ks]
    else:
        k_list = [as_int(k, "ks") for k in ks]
        if any(k < 1 for k in k_list):
            raise StatsError(f"every k must be >= 1, got {k_list}", field="ks")
    rows, raw = a._core.compare(b._core, k_list, method, level, z, resamples, seed)
    if rows < 2:
        raise StatsError(f"the runs share {rows} rows; a comparison needs at least 2", field="rows")
    return Comparison(rows=rows, differences={name: _interval(name, iv, level, method) for name, iv in raw})


def summarize(
    scores_by_row: Iterable[Iterable[float | None]] | Any,
    *,
    pass_threshold: float = 1.0,
    ks: Iterable[int] | None = None,
    n_runs: int | None = None,
    failed: FailedPolicy = "zero",
    nonfinite: NonFinitePolicy = "error",
    thresholds: Iterable[float] = (),
    confidence: float | None = None,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
) -> Summary:
    """Mean, population std, min, max, count, pass@k and pass^k of rows of attempt scores.

    The defaults are the established eval's: threshold 1.0, k in 1, 3, 5, 10 up to the attempts per
    row, failed attempts (``None``) as 0.0 in the aggregates. See :class:`Aggregator` for each option.

    Args:
        scores_by_row: One sequence of scores per row (``None`` = failed attempt), or a 2-D array.
        pass_threshold: Pass when score >= this.
        ks: k values (default 1, 3, 5, 10 up to n).
        n_runs: Pad rows to this many attempts with failures.
        failed: ``"zero"`` or ``"exclude"``.
        nonfinite: ``"error"`` or ``"fail"``.
        thresholds: More thresholds for :attr:`Summary.mixed_fraction`.
        confidence: Level for :attr:`Summary.intervals`, or None.
        method: ``"bootstrap"`` or ``"normal"``.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        A :class:`Summary`.

    Example:
        >>> s = summarize([[1.0, 0.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
        >>> (s.mean, s.pass_at_k[3], s.pass_hat_k[3])
        (0.7, 0.95, 0.5)
    """
    agg = Aggregator(
        pass_threshold=pass_threshold,
        ks=ks,
        n_runs=n_runs,
        failed=failed,
        nonfinite=nonfinite,
        thresholds=thresholds,
    )
    agg.push_rows(scores_by_row)
    return agg.finish(confidence=confidence, method=method, resamples=resamples, seed=seed)


def summarize_results(
    path: str | os.PathLike[str],
    *,
    pass_threshold: float = 1.0,
    ks: Iterable[int] | None = None,
    n_runs: int | None = None,
    failed: FailedPolicy = "zero",
    nonfinite: NonFinitePolicy = "error",
    thresholds: Iterable[float] = (),
    confidence: float | None = None,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Summary]:
    """Summarises a results log (JSONL, one attempt per line) per score name, reading it in Rust.

    Each line is ``{"row_index": int, "run_index": int, "success": bool (optional), "scores": {name:
    number or null}}``; other keys are ignored. Attempts are grouped by ``row_index`` whatever their
    order in the file; a failed attempt (``success: false``, no score, ``null``) is a failed attempt
    for every name it lacks; a later line for the same ``(row_index, run_index)`` replaces the earlier
    one. With ``n_runs``, a row leaves memory as soon as it has that many attempts. The options are
    those of :func:`summarize`.

    Args:
        path: The results log.
        pass_threshold: Pass when score >= this.
        ks: k values (default 1, 3, 5, 10 up to n).
        n_runs: Attempts per row; missing ones count as failed.
        failed: ``"zero"`` or ``"exclude"``.
        nonfinite: ``"error"`` or ``"fail"``.
        thresholds: More thresholds for :attr:`Summary.mixed_fraction`.
        confidence: Level for :attr:`Summary.intervals`, or None.
        method: ``"bootstrap"`` or ``"normal"``.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        ``{score name: Summary}`` in the order the names first appear in the file.

    Raises:
        FileNotFoundError: If the file does not exist (``OSError`` for other I/O failures).
        StatsError: A line that is not a record or a score that is not a number, naming path, line
            and field; a NaN score or a k above a row's attempts, naming the row.

    Example:
        >>> import json, pathlib, tempfile
        >>> log = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
        >>> _ = log.write_text("\\n".join(json.dumps({"row_index": r, "run_index": i, "scores": {"acc": s}})
        ...     for r, i, s in [(0, 0, 1.0), (0, 1, 0.0), (1, 0, 1.0), (1, 1, 1.0)]))
        >>> summarize_results(log)["acc"].to_established_dict()["pass_at_1"]
        0.75
    """
    cores = _core.aggregate_results_file(
        os.fspath(path),
        float(pass_threshold),
        [float(t) for t in thresholds],
        None if ks is None else [as_int(k, "ks") for k in ks],
        None if n_runs is None else as_int(n_runs, "n_runs"),
        failed,
        nonfinite,
    )
    return {
        name: Aggregator._from_core(core, failed).finish(
            confidence=confidence, method=method, resamples=resamples, seed=seed
        )
        for name, core in cores
    }
