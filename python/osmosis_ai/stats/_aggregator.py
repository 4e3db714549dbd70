"""The streaming aggregator (rows of attempt scores in, a :class:`Summary` out) and :func:`summarize`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import orjson

from osmosis_ai import _core
from osmosis_ai._stats_input import CHUNK, as_int, matrix
from osmosis_ai._stats_types import Interval, Summary
from osmosis_ai.errors import StatsError
from osmosis_ai.stats._intervals import IntervalMethod, _check_method, _interval

__all__ = [
    "DEFAULT_KS",
    "Aggregator",
    "FailedPolicy",
    "NonFinitePolicy",
    "quantiles",
    "score_median",
    "summarize",
]

#: The k values of the established eval: pass@k for each k up to the attempts per row.
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
_PASS = ("pass_at", "pass_hat")

FailedPolicy = Literal["zero", "exclude"]
NonFinitePolicy = Literal["error", "fail"]


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
        keep_rows: Keep a few numbers per row (default) for :meth:`intervals`, :func:`compare` and
            :meth:`mixed_rows`; without them memory stays constant however many rows are pushed.

    A failed attempt (the run failed, or gave no score) is the established convention: 0.0 in the
    aggregates under ``failed="zero"``, never a pass. An *errored* attempt (the scorer raised; see
    ``errors`` in :meth:`push`) is different: it is in no statistic at all and is counted in
    :attr:`Summary.errors`.

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
        keep_rows: bool = True,
    ) -> None:
        self._failed = failed
        self._messages: tuple[str, ...] = ()
        self._core = _core.StatsAggregator(
            float(pass_threshold),
            [float(t) for t in thresholds],
            None if ks is None else [as_int(k, "ks") for k in ks],
            None if n_runs is None else as_int(n_runs, "n_runs"),
            failed,
            nonfinite,
            keep_rows,
        )

    @classmethod
    def _from_core(
        cls, core: _core.StatsAggregator, failed: FailedPolicy, messages: Iterable[str] = ()
    ) -> Aggregator:
        agg = cls.__new__(cls)
        agg._failed = failed
        agg._messages = tuple(messages)
        agg._core = core
        return agg

    def __len__(self) -> int:
        return len(self._core)

    def push(self, scores: Iterable[float | None], *, row_index: int | None = None, errors: int = 0) -> None:
        """Adds one row: its attempts' scores in order, ``None`` for a failed attempt.

        Args:
            scores: The row's scores (bools and ints count as numbers).
            row_index: The row's index, used in error messages; default its position.
            errors: Further attempts of the row whose scorer raised: in no statistic (not padded back
                by ``n_runs`` either), counted in :attr:`Summary.errors`. A row left with fewer than
                k attempts that count is not in pass@k at that k.

        Raises:
            StatsError: on a NaN / infinite score (under ``nonfinite="error"``) or a non-number; the
                row is then not added.
        """
        row = scores if isinstance(scores, (list, tuple)) else list(scores)
        try:
            self._core.push(row, row_index, as_int(errors, "errors"))
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
            method: ``"bootstrap"`` (percentile, rows resampled with ``seed``; at least 10 rows) or
                ``"normal"`` (estimate ± t·se, Student's t for rows - 1 degrees of freedom; cut to
                [0, 1] when every row's value lies there, as pass rates always do).
            resamples: Bootstrap resamples.
            seed: Bootstrap seed; the same seed gives the same interval on every platform.

        Returns:
            ``{"mean": Interval, "pass_at_1": Interval, "pass_hat_1": Interval, ...}``; an interval the
            rows cannot support has no bounds and a ``note`` (never a point).
        """
        _check_method(level, method)
        summary = self.finish()
        k_list = list(summary.ks) if ks is None else [as_int(k, "ks") for k in ks]
        if any(k < 1 for k in k_list):
            raise StatsError(f"every k must be >= 1, got {k_list}", field="ks")
        raw = self._core.intervals(k_list, method, level, resamples, seed)
        rows = {f"{p}_{k}": summary.pass_at_k_rows.get(k, summary.rows) for k in k_list for p in _PASS}
        return {name: _interval(name, iv, level, method, rows.get(name, summary.rows)) for name, iv in raw}

    def model_intervals(self, *, level: float = 0.95) -> dict[str, dict[str, Any]]:
        """The result model's intervals over these rows, by the rules of
        :func:`osmosis_ai.results.read_results` (a subset of a file's rows, such as a group, is measured
        as the whole file is): the mean's Student t interval, each pass@k / pass^k's Wilson interval
        over the rows' effective size; bounds the data cannot support are None and ``note`` says why.

        Returns:
            ``{"mean": {...}, "pass_at_1": {...}, "pass_hat_1": {...}, ...}``, each ``{"estimate", "low",
            "high", "level", "method", "rows", "effective_n", "note"}`` (the result model's JSON form).

        Example:
            >>> agg = Aggregator(ks=[1])
            >>> for i in range(5):
            ...     agg.push([1.0, 1.0], row_index=i)
            >>> iv = agg.model_intervals()["pass_at_1"]
            >>> (iv["method"], iv["high"], round(iv["low"], 4))
            ('wilson', 1.0, 0.5655)
        """
        intervals: dict[str, dict[str, Any]] = orjson.loads(self._core.model_intervals(float(level)))
        return intervals

    def paired_differences(
        self, other: Aggregator, *, ks: Iterable[int] = (1,), level: float = 0.95
    ) -> dict[str, dict[str, Any]]:
        """``other - self`` over the rows both hold (matched by row index), by the rules of
        :func:`osmosis_ai.results.compare_results`: paired Student t intervals and p-values of the mean
        and pass@k / pass^k at ``ks``; bounds the rows cannot support are None and ``note`` says why.
        Nothing is adjusted for multiplicity and no verdict is drawn (``p_holm`` is None): this describes
        a subset of a comparison's rows, such as a group.

        Returns:
            ``{"mean": {...}, "pass_at_1": {...}, ...}``, each ``{"estimate", "a", "b", "low", "high",
            "level", "method", "p_value", "p_holm", "verdict", "note"}`` (the comparison model's form).

        Example:
            >>> a, b = Aggregator(ks=[1]), Aggregator(ks=[1])
            >>> for i in range(6):
            ...     a.push([float(i % 2)], row_index=i)
            ...     b.push([1.0], row_index=i)
            >>> d = a.paired_differences(b)["pass_at_1"]
            >>> (d["estimate"], d["method"], round(d["low"], 4))
            (0.5, 't', -0.0748)
        """
        k_list = [as_int(k, "ks") for k in ks]
        if any(k < 1 for k in k_list):
            raise StatsError(f"every k must be >= 1, got {k_list}", field="ks")
        differences: dict[str, dict[str, Any]] = orjson.loads(
            self._core.paired_differences(other._core, k_list, float(level))
        )
        return differences

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
        if self._failed == "zero" and d["count"] == d["failed"]:
            # Every attempt failed: the 0.0s the "zero" policy put in are not scores, so there is no mean.
            d.update(
                {
                    "mean": None,
                    "std": None,
                    "min": None,
                    "max": None,
                    "variance": None,
                    "sample_variance": None,
                    "sample_std": None,
                }
            )
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
            errors=d["errors"],
            variance=d["variance"],
            sample_variance=d["sample_variance"],
            sample_std=d["sample_std"],
            error_messages=self._messages,
            pass_at_k_rows=dict(zip(d["ks"], d["pass_rows"], strict=True)),
            min_attempts=d["min_attempts"],
            max_attempts=d["max_attempts"],
            pass_threshold=d["pass_threshold"],
            failed_policy=self._failed,
            pass_at_k=dict(zip(d["ks"], d["pass_at_k"], strict=True)),
            pass_hat_k=dict(zip(d["ks"], d["pass_hat_k"], strict=True)),
            mixed_fraction=dict(d["mixed_fraction"]),
            intervals=intervals,
        )


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


def score_statistics(scores: Iterable[float]) -> Summary:
    """Mean, variance and std (population, and sample in ``sample_variance`` / ``sample_std``), min and
    max of plain scores (one attempt each, no pass@k): the rubric summary, computed by the same Rust
    aggregator as eval's.

    Args:
        scores: The scores that count (leave out unscored or failed judgements: they are not zeros).

    Returns:
        A :class:`Summary` with one row per score; ``mean`` and the others are None without scores.

    Raises:
        StatsError: on a NaN or infinite score, naming its position.

    Example:
        >>> s = score_statistics([0.0, 1.0, 0.5])
        >>> (s.mean, round(s.variance, 6), s.min, s.max, s.count)
        (0.5, 0.166667, 0.0, 1.0, 3)
    """
    from array import array

    values = array("d", scores)
    agg = Aggregator(failed="exclude", ks=[1], keep_rows=False)
    # One column of n rows: every score its own row, so a bad one is named by its position.
    agg._core.push_matrix(values.tobytes(), "f8", len(values), 1)
    return agg.finish()


def score_moments(scores: Iterable[float]) -> tuple[float | None, ...]:
    """``(mean, variance, std, min, max)`` of plain scores (population; all None without scores): the
    figures of :func:`score_statistics` by the same aggregator, for a caller that asks once per record
    (a third of the cost: no :class:`Summary` is built).

    Raises:
        StatsError: on a NaN or infinite score, naming its position.

    Example:
        >>> score_moments([0.0, 1.0, 0.5])[:1], score_moments([])
        ((0.5,), (None, None, None, None, None))
    """
    if type(scores) is list and len(scores) == 1 and type(scores[0]) is float and math.isfinite(scores[0]):
        # A record's one score, asked for once per record: no array and no aggregator for it.
        score = scores[0]
        return score, 0.0, 0.0, score, score
    from array import array

    values = array("d", scores)
    if len(values) == 1 and math.isfinite(values[0]):
        # One score (one run per record, the usual case): what the aggregator returns for it, without one.
        score = values[0]
        return score, 0.0, 0.0, score, score
    core = _core.StatsAggregator(1.0, [], [1], None, "exclude", "error", False)
    core.push_matrix(values.tobytes(), "f8", len(values), 1)
    d = core.finish()
    return d["mean"], d["variance"], d["std"], d["min"], d["max"]


def score_median(scores: Iterable[float]) -> float | None:
    """The median of plain scores (the mean of the two middle ones for an even count), None for none.

    Example:
        >>> score_median([0.25, 1.0, 0.5, 0.0])
        0.375
    """
    from array import array

    # Packed doubles go as they are: a list of them would take four times their memory.
    if isinstance(scores, array) and scores.typecode == "d":
        return _core.median(scores)
    return _core.median([float(s) for s in scores])


def quantiles(values: Iterable[float], qs: Iterable[float]) -> list[float] | None:
    """The ``qs`` quantiles of ``values`` (linear between order statistics, numpy's default); None for none.

    Raises:
        StatsError: A value is NaN or infinite (naming its position), or a q is outside [0, 1].

    Example:
        >>> [round(q, 6) for q in quantiles([10, 1, 4, 3, 2], [0.5, 0.95])]
        [3.0, 8.8]
    """
    from array import array

    packed = values if isinstance(values, array) and values.typecode == "d" else array("d", values)
    return _core.quantiles(packed.tobytes(), "f8", [float(q) for q in qs])
