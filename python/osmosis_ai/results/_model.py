"""The one result model of a results file: typed, frozen, computed once in the Rust core."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import orjson

from osmosis_ai import _core
from osmosis_ai.errors import StatsError
from osmosis_ai.results._plain import from_plain, to_plain
from osmosis_ai.results._vocabulary import RESULT_SCHEMA, RowOutcome

__all__ = [
    "Durations",
    "Estimate",
    "FunctionProbes",
    "FunctionResult",
    "InvocationResult",
    "ModelResult",
    "ProbeCount",
    "ProbeExample",
    "ResultSource",
    "ResultSummary",
    "ResultWarning",
    "RowStatistics",
    "RowTally",
    "RunTally",
    "check_schema",
    "read_results",
]


@dataclass(frozen=True)
class ResultWarning:
    """One thing a reader of the numbers must know. Print :attr:`message` as it is: it is worded once,
    in the Rust core (``rust/src/stats/results/warnings.rs``), so every surface says the same line.

    Attributes:
        code: Stable for scripts: ``incomplete``, ``n_undeclared``, ``nothing_scored``, ``function_errors``,
            ``run_errors``, ``durations_unrecorded`` (and in comparisons ``n_differs``, ``rows_differ``,
            ``multiplicity``).
        message: The line to print.
        model_tag: The model it is about, if one.
        function: The score name it is about, if one.
        count: The count it is about (missing runs, errored runs), if one.
    """

    code: str
    message: str
    model_tag: str | None = None
    function: str | None = None
    count: int | None = None


@dataclass(frozen=True)
class Estimate:
    """A statistic with its interval. ``low`` / ``high`` are None when the data cannot give an interval
    (one row, or no spread to estimate one from); :attr:`note` then says why: an interval is never drawn
    as a point.

    Attributes:
        estimate: The statistic.
        low: Lower bound, or None.
        high: Upper bound, or None.
        level: Confidence level.
        method: ``"wilson"`` (pass rates, and the mean of scores that are all 0 or 1: Wilson's score
            interval with the rows' effective size), ``"t"`` (any other mean score: Student's t over rows,
            cut to [0, 1] when every score lies there), ``"bootstrap"`` (comparisons, when chosen).
        rows: Rows the statistic is over.
        effective_n: Wilson: the binomial sample size the rows are worth (between the rows and the runs).
        note: Why there is no interval.
    """

    estimate: float
    low: float | None
    high: float | None
    level: float
    method: str
    rows: int
    effective_n: float | None = None
    note: str | None = None


@dataclass(frozen=True)
class RunTally:
    """Runs of one score name by outcome (see :class:`~osmosis_ai.results.RunOutcome`).

    ``finished = scored + unscored + errored + skipped``, ``scored = passed + not_passed`` and
    ``errored = errored_run + errored_function``. ``planned`` and ``missing`` are None when the file does
    not declare n.
    """

    planned: int | None
    finished: int
    missing: int | None
    scored: int
    passed: int
    not_passed: int
    unscored: int
    errored: int
    errored_run: int
    errored_function: int
    skipped: int


@dataclass(frozen=True)
class RowTally:
    """Rows of one score name by category (see :class:`~osmosis_ai.results.RowOutcome`); each row is in
    exactly one. Rows never started in a run that planned them are ``incomplete``."""

    passed_every_attempt: int
    passed_some: int
    passed_none: int
    errored: int
    incomplete: int

    def count(self, outcome: RowOutcome | str) -> int:
        """The rows in one category.

        Example:
            >>> RowTally(3, 1, 0, 2, 0).count(RowOutcome.ERRORED)
            2
        """
        return int(getattr(self, RowOutcome(outcome).value))


@dataclass(frozen=True)
class RowStatistics:
    """One row's own statistics for one score name (``read_results(..., per_row=True)``).

    Attributes:
        row: The row, counted from 0.
        finished: Its runs recorded; ``scored`` + ``unscored`` + ``errored`` + ``skipped`` of them.
        scored: Runs with a score.
        passed: Scored runs at or above the pass threshold.
        unscored: Runs finished without a score.
        errored: Runs that errored (the run, or the scorer).
        skipped: Runs skipped.
        mean: Over the scored runs; None when none was scored (never 0), as the other four.
        variance: Population variance of the scored runs.
        std: Population standard deviation.
        min: Lowest score.
        max: Highest score.
    """

    row: int
    finished: int
    scored: int
    passed: int
    unscored: int
    errored: int
    skipped: int
    mean: float | None
    variance: float | None
    std: float | None
    min: float | None
    max: float | None


@dataclass(frozen=True)
class FunctionResult:
    """One score name (an eval function, rubric, grader or ``eval run``'s reward) of one model.

    Attributes:
        name: The score name.
        runs: Runs by outcome.
        rows: Rows by category.
        rows_with_function_errors: Rows where the scorer raised at least once.
        graded: Scored runs.
        passed: Runs that passed.
        pass_rate: ``passed`` over the runs that count (finished, less skipped and scorer errors); None
            when nothing was scored.
        pass_threshold: A run passes when its score is >= this.
        count: Scores in mean / std / min / max. Under the file's ``failed_policy`` ``"zero"`` (eval's
            established rule) errored and unscored runs are 0.0 there.
        mean: None when no run was scored (never 0).
        std: Population standard deviation; None as ``mean``.
        min: None as ``mean``.
        max: None as ``mean``.
        variance: None as ``mean``.
        ks: The k values: every k up to the declared n (past 20, 20 spaced geometrically plus 3, 5, 10 and
            the powers of two, the k the established outputs name).
        pass_at_k: ``{k: pass@k}`` with missing runs counted as did not pass (rows padded to n); empty
            (n/a) when nothing was scored.
        pass_hat_k: ``{k: pass^k}``, the same way.
        pass_at_k_rows: ``{k: rows in pass_at_k}``: fewer than the rows where scorer errors left a row with
            fewer than k runs that count (it is left out at that k).
        pass_at_k_observed: ``{k: pass@k}`` over the runs present only (rows with fewer than k runs that
            count are left out at k).
        pass_hat_k_observed: ``{k: pass^k}`` the same way.
        observed_rows: ``{k: rows in the observed-only values}`` for every k of :attr:`ks` (0: no row has k
            runs that count, so that k has no observed value).
        intervals: ``"mean"`` (t), ``"pass_at_<k>"`` and ``"pass_hat_<k>"`` (Wilson); empty when nothing
            was scored.
        mixed_fraction: Share of rows with some but not every run passing.
        error_messages: The first messages of the scorer's errors.
        per_row: Each row's own statistics, by row, when read with ``per_row=True`` (else None).
    """

    name: str
    runs: RunTally
    rows: RowTally
    rows_with_function_errors: int
    graded: int
    passed: int
    pass_rate: float | None
    pass_threshold: float
    count: int
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    variance: float | None
    ks: tuple[int, ...]
    pass_at_k: dict[int, float]
    pass_hat_k: dict[int, float]
    pass_at_k_rows: dict[int, int]
    pass_at_k_observed: dict[int, float]
    pass_hat_k_observed: dict[int, float]
    observed_rows: dict[int, int]
    intervals: dict[str, Estimate]
    mixed_fraction: float | None
    error_messages: tuple[str, ...] = ()
    per_row: tuple[RowStatistics, ...] | None = None


@dataclass(frozen=True)
class ProbeExample:
    """A row where a probe finding hit (``row`` counts from 0), the control or format it hit with, and (a
    control's) the format of the correct answer it was compared with: the row's best-scoring one."""

    row: int
    probe: str
    reference: str | None = None


@dataclass(frozen=True)
class ProbeCount:
    """One probed function on one control, one format of the correct answer, or (``probe`` ``"correct"``)
    the too-strict check over every format.

    Attributes:
        probe: The control or format name.
        rows: Rows where the scores it needs exist.
        hits: Of those, rows where the control passed (scored at least the row's best-scoring format of
            the correct answer while that reached the threshold) or the correct format scored below the
            threshold.
        skipped: Rows without a score it needs (the function raised, or the probe did not apply).
        fraction: ``hits / rows``; None when no row counts (never 0).
        examples: The first few hit rows.
        untestable: Controls only: rows left out of ``rows`` because no format of the correct answer reached
            the threshold, so nothing paid could be compared with the control.
    """

    probe: str
    rows: int
    hits: int
    skipped: int
    fraction: float | None
    examples: tuple[ProbeExample, ...] = ()
    untestable: int = 0


@dataclass(frozen=True)
class FunctionProbes:
    """``reward probe``'s findings for one probed function (a probe log's scores are ``"<function>@<probe>"``).

    Attributes:
        function: The probed function.
        controls: One per negative control the log holds.
        too_strict: Rows where the correct answer scored below the threshold in at least one format.
        formats: One per format of the correct answer (``correct``: as written).
    """

    function: str
    controls: tuple[ProbeCount, ...]
    too_strict: ProbeCount
    formats: tuple[ProbeCount, ...]


@dataclass(frozen=True)
class ModelResult:
    """One model of a results file (the primary one, or a compared baseline).

    Attributes:
        model_tag: ``"primary"`` or the comparison tag.
        total_rows: Rows with at least one run recorded.
        planned_rows: Rows the run set out to do when the file says (a log header's ``planned``, ``eval run``),
            else ``total_rows``.
        total_runs: Runs recorded (a run re-written by a resume counts once).
        planned_runs: ``planned_rows * n``; None when n is not declared.
        missing_runs: Planned runs not recorded; None when n is not declared.
        failed_runs: Runs that errored themselves (agent, provider, timeout): the established name.
        eval_error_runs: Runs where at least one scorer raised.
        total_tokens: Tokens over the runs.
        run_time_ms: The runs' own durations added up (runs overlap: this is not wall time).
        functions: One :class:`FunctionResult` per score name, in declared order.
        probes: A probe log's findings per probed function (``reward probe``); empty for other logs.
    """

    model_tag: str
    total_rows: int
    planned_rows: int
    total_runs: int
    planned_runs: int | None
    missing_runs: int | None
    failed_runs: int
    eval_error_runs: int
    total_tokens: int
    run_time_ms: float
    functions: tuple[FunctionResult, ...]
    probes: tuple[FunctionProbes, ...] = ()

    def function(self, name: str) -> FunctionResult:
        """The score name ``name``.

        Raises:
            KeyError: naming the score names the model has.
        """
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(f"no score named {name!r}; this model has {', '.join(f.name for f in self.functions)}")


@dataclass(frozen=True)
class InvocationResult:
    """One invocation of the command that wrote the log (0 started it, then one per resume).

    Attributes:
        index: Its number.
        runs: Runs it wrote.
        wall_ms: From its start to its last record.
        cpu_ms: The writing process's CPU time over the same span, or None.
    """

    index: int
    runs: int
    wall_ms: float
    cpu_ms: float | None = None


@dataclass(frozen=True)
class Durations:
    """Time spent, three ways (never confused).

    Attributes:
        total_duration_ms: Wall time over every invocation, resumes added up; None when some run was
            recorded without an invocation stamp (an earlier version, or a ``-o`` JSON).
        cpu_ms: CPU time over every invocation, or None the same way.
        run_time_ms: The runs' own durations added up over every model (runs overlap).
        invocations: Each invocation.
        unrecorded_runs: Runs recorded without an invocation stamp.
    """

    total_duration_ms: float | None
    cpu_ms: float | None
    run_time_ms: float
    invocations: tuple[InvocationResult, ...]
    unrecorded_runs: int


@dataclass(frozen=True)
class ResultSource:
    """Which file, in which layout (``log``, ``records``, ``eval-json``, ``rubric-json``) and of which kind
    (``eval``, ``test``, ``rubric``, ``eval-run``, ``grade``, ``probe``; None when the file does not say)."""

    path: str
    layout: str
    kind: str | None


@dataclass(frozen=True)
class ResultSummary:
    """Everything a surface shows about a results file, computed once (see :func:`read_results`).

    Attributes:
        schema: ``"osmosis-result-summary"``.
        version: The schema version (fields are only added within a version).
        source: The file.
        config: The file's config (log header or ``-o`` JSON), if any.
        n_runs: Runs per row the file declares; None when it does not (then missing runs cannot be counted).
        pass_threshold: A run passes when its score is >= this.
        failed_policy: ``"zero"`` (eval's established rule: errored and unscored runs are 0.0 in mean /
            std / min / max) or ``"exclude"`` (rubric results).
        level: The intervals' confidence level.
        models: The primary model first.
        durations: Wall time, CPU and summed run time.
        warnings: Every warning, in the order to print them.
    """

    schema: str
    version: int
    source: ResultSource
    config: dict[str, Any] | None
    n_runs: int | None
    pass_threshold: float
    failed_policy: str
    level: float
    models: tuple[ModelResult, ...]
    durations: Durations
    warnings: tuple[ResultWarning, ...] = field(default_factory=tuple)

    def model(self, tag: str = "primary") -> ModelResult:
        """The model ``tag`` (``"primary"`` by default).

        Raises:
            KeyError: naming the models the file holds.
        """
        for m in self.models:
            if m.model_tag == tag:
                return m
        raise KeyError(
            f"no model {tag!r}; the file holds {', '.join(m.model_tag for m in self.models) or 'none'}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schema ``osmosis-result-summary``): what the core computed, key for key.

        Example:
            >>> import json, pathlib, tempfile
            >>> log = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
            >>> lines = [{"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"], "n_runs": 1}},
            ...          {"row_index": 0, "run_index": 0, "success": True, "scores": {"acc": 1.0}}]
            >>> _ = log.write_text("".join(json.dumps(x) + "\\n" for x in lines))
            >>> read_results(log).to_dict()["models"][0]["functions"][0]["pass_at_k"]
            {'1': 1.0}
        """
        return to_plain(self)


def check_schema(data: dict[str, Any], expected: tuple[str, int]) -> None:
    """Refuses a JSON form of another schema, or of a newer version than this package reads."""
    name, version = expected
    if data.get("schema") != name or not isinstance(data.get("version"), int) or data["version"] > version:
        raise StatsError(
            f"not a {name} document of version <= {version} (got {data.get('schema')!r} version "
            f"{data.get('version')!r}); upgrade osmosis-ai to read it",
            field="schema",
        )


def read_results(
    path: str | os.PathLike[str],
    *,
    pass_threshold: float | None = None,
    n_runs: int | None = None,
    failed: str | None = None,
    level: float = 0.95,
    per_row: bool = False,
) -> ResultSummary:
    """The result model of a results file, computed once in the Rust core.

    Reads any results file the package writes: the results log of ``eval`` / ``test`` / ``eval rubric``
    / ``eval run`` / ``grade`` / ``reward probe`` (header line, then one run per line; an ``eval run``
    directory's ``results.jsonl``), the bare run records of earlier versions, and the ``-o`` JSON of
    ``eval`` and ``eval rubric``. Memory does not grow with the file.

    Rules: nothing scored gives None (never 0); runs missing from an incomplete log count as did not
    pass in ``pass_at_k`` (``pass_at_k_observed`` beside it leaves them out) and a warning says how many;
    pass rates get Wilson intervals, the mean a Student t interval (Wilson when every score is 0 or 1),
    and an interval the data cannot support has no bounds and a note.

    Args:
        path: The results file.
        pass_threshold: Pass when score >= this; default the file's, else 1.0.
        n_runs: Runs per row; default the file's declared n (``n_runs``, ``number``, ``n``).
        failed: ``"zero"`` or ``"exclude"``: what errored and unscored runs are in mean / std / min / max;
            default ``"exclude"`` for rubric results, ``"zero"`` (established) otherwise.
        level: The intervals' confidence level.
        per_row: Also each row's own statistics per score name (:attr:`FunctionResult.per_row`); memory
            then grows with the rows.

    Returns:
        A :class:`ResultSummary`.

    Raises:
        FileNotFoundError: If the file does not exist.
        StatsError: A line that is not a record, a score that is not a number, an unknown log format
            (naming path, line and field), or a bad option.

    Example:
        >>> import json, pathlib, tempfile
        >>> log = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
        >>> lines = [{"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"], "n_runs": 2}}]
        >>> lines += [{"row_index": 0, "run_index": i, "success": False, "scores": {}} for i in range(2)]
        >>> _ = log.write_text("".join(json.dumps(x) + "\\n" for x in lines))
        >>> acc = read_results(log).model().function("acc")
        >>> (acc.mean, acc.runs.errored, acc.rows.errored)
        (None, 2, 1)
    """
    if failed not in (None, "zero", "exclude"):
        raise StatsError(f'failed must be "zero" or "exclude", got {failed!r}', field="failed")
    raw = _core.result_model(
        os.fspath(path),
        None if pass_threshold is None else float(pass_threshold),
        None if n_runs is None else int(n_runs),
        failed,
        float(level),
        bool(per_row),
    )
    return result_of(raw)


def result_of(raw: str) -> ResultSummary:
    """The :class:`ResultSummary` of the core's JSON of the result model (schema checked)."""
    data = orjson.loads(raw)
    check_schema(data, RESULT_SCHEMA)
    return from_plain(ResultSummary, data)
