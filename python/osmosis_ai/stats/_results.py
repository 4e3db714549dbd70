"""Summaries of a results file in any layout the package writes, read and aggregated in Rust.

Accepted layouts: the results log (a ``{"format": "osmosis-eval-log/1"}`` or ``"osmosis-results/1"``
header, then one run record per line), the bare run records of earlier versions, the eval ``-o`` JSON
and the eval-rubric ``-o`` JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai import _core
from osmosis_ai._stats_input import as_int
from osmosis_ai._stats_types import Summary
from osmosis_ai.errors import StatsError
from osmosis_ai.stats._aggregator import Aggregator, FailedPolicy, NonFinitePolicy
from osmosis_ai.stats._intervals import IntervalMethod

__all__ = [
    "RESULTS_LOG_FORMATS",
    "ModelResults",
    "ResultsSummary",
    "latest_run_offsets",
    "log_declared_runs",
    "log_index_base",
    "log_record_fields",
    "rebase_indices",
    "summarize_results",
    "summarize_results_by_model",
]

#: The results log header ``format`` values the reader accepts, newest last (one list, in the Rust core:
#: a writer puts ``RESULTS_LOG_FORMATS[-1]`` in its header).
RESULTS_LOG_FORMATS: tuple[str, ...] = tuple(_core.RESULTS_LOG_FORMATS)

_PRIMARY = ("", "primary")


def log_index_base(header: Mapping[str, Any]) -> int:
    """What the ``row_index`` and ``run_index`` of a results log with this header count from.

    Every log written now says ``"index_base": 0`` (eval logs always counted from 0); a rubric log an
    earlier version of the package wrote (its header names the ``osmosis_version``) has no such key and
    counted its records and runs from 1; a log without either, written by hand to the documented
    layout, counts from 0. Readers subtract this, so every log reads numbered from 0 (the rule is the
    Rust reader's, which does the same).

    Example:
        >>> log_index_base({"kind": "rubric", "osmosis_version": "0.3.2"}), log_index_base({"kind": "rubric"})
        (1, 0)
    """
    declared = header.get("index_base")
    valid = isinstance(declared, int) and not isinstance(declared, bool) and declared >= 0
    return _core.results_index_base(
        header.get("kind"), declared if valid else None, "osmosis_version" in header
    )


def log_record_fields(path: str | os.PathLike[str], fields: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, record)`` of every complete, non-blank line of a results log, read in Rust: from
    line 2 on, a JSON object as a dict of only those of ``fields`` it has (the rest of the line is checked,
    never built: a record's conversation costs no Python strings); the header (line 1) and any line that
    is not one valid JSON object as its raw ``bytes``, for the caller to parse and report. A last line
    without a newline (a write a crash cut short) is not given. Not numbered from 0: see
    :func:`rebase_indices`.

    Raises:
        OSError: The file cannot be opened or read (the message names it).
    """
    return iter(_core.LogRecordFields(os.fspath(path), list(fields)))


def latest_run_offsets(
    path: str | os.PathLike[str], runs_per_row: int | None = None
) -> tuple[bytes, memoryview] | None:
    """A results log's line 1 and where the latest line of each (row, run) starts (row then run order,
    64-bit integers), read in Rust, or None when a record line is not in the form the engine writes (read
    that log in Python). A last line without a newline is not read. ``runs_per_row`` (the runs each row
    was given) keeps the pass at 8 bytes a run.

    Raises:
        OSError: The file cannot be opened or read (the message names it).
    """
    if runs_per_row is not None and not 0 < runs_per_row < 1 << 32:
        runs_per_row = None  # outside the flat layout's shape: every line kept and sorted
    found = _core.latest_run_offsets(os.fspath(path), runs_per_row)
    if found is None:
        return None
    header, starts = found
    return header, memoryview(starts).cast("q")


def log_declared_runs(header: Mapping[str, Any]) -> int | None:
    """The runs per row a results log with this header declares (its config's ``n``, ``number`` or
    ``n_runs``; 1 for ``grade`` and ``reward probe`` logs), None when it declares none: the ``n_runs``
    :func:`osmosis_ai.results.read_results` reports for the log, by the Rust reader's rule, without
    reading its records.

    Example:
        >>> log_declared_runs({"format": "osmosis-results/1", "kind": "eval", "config": {"n_runs": 4}})
        4
    """
    return _core.results_declared_runs(json.dumps(header, default=str))


def rebase_indices(record: Mapping[str, Any], base: int) -> dict[str, Any]:
    """The run record with its ``row_index`` and ``run_index`` counted from 0, ``base`` being what its log
    counts from (:func:`log_index_base`); ``-base`` turns a record back into its log's numbering.
    Indices that are not integers are left as they are (a reader reports them where it checks fields).

    Example:
        >>> rebase_indices({"row_index": 1, "run_index": 2, "scores": {}}, 1)
        {'row_index': 0, 'run_index': 1, 'scores': {}}
    """
    out = dict(record)
    for name in ("row_index", "run_index"):
        value = out.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            out[name] = value - base
    return out


@dataclass(frozen=True)
class ModelResults:
    """One model's runs in a results file.

    Attributes:
        model_tag: ``"primary"`` or the comparison tag (``"baseline"``, ...).
        rows: Rows with at least one run.
        runs: Runs (a run re-written by a resume counts once).
        failed_runs: Runs that failed (the agent, the judge or a timeout).
        eval_error_runs: Runs where at least one eval function raised.
        tokens: Tokens over the runs.
        duration_ms: Run time over the runs.
        summaries: ``{score name: Summary}``; each summary's ``errors`` and ``error_messages`` say which
            runs the scorer raised on (they are in none of its statistics).
    """

    model_tag: str
    rows: int
    runs: int
    failed_runs: int
    eval_error_runs: int
    tokens: int
    duration_ms: float
    summaries: dict[str, Summary]


@dataclass(frozen=True)
class ResultsSummary:
    """What :func:`summarize_results_by_model` read: the file's layout, header and every model.

    Attributes:
        layout: ``"log"``, ``"records"``, ``"eval-json"`` or ``"rubric-json"``.
        kind: The header's ``kind`` (``"rubric"`` for eval-rubric results), if any.
        config: The header's (or ``-o`` JSON's) config.
        pass_threshold: The threshold used (given, else the file's, else 1.0).
        n_runs: Attempts per row used for padding (given, else the file's), or None.
        failed_policy: ``"zero"`` or ``"exclude"`` as used.
        models: ``{model_tag: ModelResults}``, the primary model first.
    """

    layout: str
    kind: str | None
    pass_threshold: float
    n_runs: int | None
    failed_policy: str
    config: dict[str, Any] = field(default_factory=dict)
    models: dict[str, ModelResults] = field(default_factory=dict)


def summarize_results_by_model(
    path: str | os.PathLike[str],
    *,
    pass_threshold: float | None = None,
    ks: Iterable[int] | None = None,
    n_runs: int | None = None,
    failed: FailedPolicy | None = None,
    nonfinite: NonFinitePolicy = "error",
    thresholds: Iterable[float] = (),
    confidence: float | None = None,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
) -> ResultsSummary:
    """Summarises every model of a results file; options as in :func:`summarize_results`.

    Memory does not grow with the file: rows are aggregated as they complete and, without
    ``confidence``, the aggregators keep no per-row numbers.

    Example:
        >>> import json, pathlib, tempfile
        >>> log = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
        >>> lines = [{"format": "osmosis-eval-log/1", "config": {"eval_fns": ["acc"]}}]
        >>> lines += [{"row_index": 0, "run_index": 0, "model_tag": t, "success": True, "scores": {"acc": s}}
        ...           for t, s in [("", 1.0), ("baseline", 0.0)]]
        >>> _ = log.write_text("\\n".join(json.dumps(x) for x in lines) + "\\n")
        >>> result = summarize_results_by_model(log)
        >>> [(tag, m.summaries["acc"].mean) for tag, m in result.models.items()]
        [('primary', 1.0), ('baseline', 0.0)]
    """
    raw = _core.summarize_results_file(
        os.fspath(path),
        None if pass_threshold is None else float(pass_threshold),
        [float(t) for t in thresholds],
        None if ks is None else [as_int(k, "ks") for k in ks],
        None if n_runs is None else as_int(n_runs, "n_runs"),
        failed,
        nonfinite,
        confidence is not None,
    )
    policy = raw["failed"]
    models: dict[str, ModelResults] = {}
    for tag, counters, names in raw["models"]:
        summaries = {
            name: Aggregator._from_core(core, policy, messages).finish(
                confidence=confidence, method=method, resamples=resamples, seed=seed
            )
            for name, core, messages in names
        }
        public_tag = tag or "primary"
        models[public_tag] = ModelResults(
            model_tag=public_tag,
            rows=counters["rows"],
            runs=counters["runs"],
            failed_runs=counters["failed"],
            eval_error_runs=counters["eval_error_runs"],
            tokens=counters["tokens"],
            duration_ms=counters["duration_ms"],
            summaries=summaries,
        )
    config = json.loads(raw["config_json"]) if raw["config_json"] else {}
    return ResultsSummary(
        layout=raw["layout"],
        kind=raw["kind"],
        pass_threshold=raw["pass_threshold"],
        n_runs=raw["n_runs"],
        failed_policy=policy,
        config=config if isinstance(config, dict) else {},
        models=models,
    )


def summarize_results(
    path: str | os.PathLike[str],
    *,
    model_tag: str = "primary",
    pass_threshold: float | None = None,
    ks: Iterable[int] | None = None,
    n_runs: int | None = None,
    failed: FailedPolicy | None = None,
    nonfinite: NonFinitePolicy = "error",
    thresholds: Iterable[float] = (),
    confidence: float | None = None,
    method: IntervalMethod = "bootstrap",
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Summary]:
    """Summarises one model of a results file per score name, reading it in Rust.

    Reads the results log ``osmosis eval`` / ``test`` / ``eval-rubric`` write (header line, then one
    run per line), the bare run records of earlier versions (``{"row_index", "run_index", "success"?,
    "scores": {name: number or null}}`` per line), and the ``-o`` JSON of ``eval`` and
    ``eval-rubric``. Attempts are grouped by ``row_index`` whatever their order in the file; a later
    record of the same ``(model_tag, row_index, run_index)`` replaces the earlier one.

    Per score name an attempt is:

    * scored;
    * failed: the run failed (``success: false``: the agent, the judge or a timeout), or it has no
      score / ``null``. The established convention: a 0.0 in mean / std / min / max under
      ``failed="zero"``, left out there under ``"exclude"``, never a pass;
    * an error: the eval function raised (the name is in the record's ``eval_errors``). It is in
      no statistic of that name (neither mean / std / min / max nor pass@k, where the row's n
      shrinks) and is counted in :attr:`Summary.errors` with the first messages in
      :attr:`Summary.error_messages`.

    Args:
        path: The results file.
        model_tag: Which model: ``"primary"`` (or ``""``), or a comparison tag such as ``"baseline"``.
        pass_threshold: Pass when score >= this; default the file's ``pass_threshold``, else 1.0.
        ks: k values (default 1, 3, 5, 10 up to n).
        n_runs: Attempts per row, missing ones counted as failed; default the file's ``n_runs``
            (eval ``-o`` JSON) or ``number`` (eval-rubric ``-o`` JSON).
        failed: ``"zero"`` or ``"exclude"``; default ``"exclude"`` for rubric results (an unscored
            judgement is not a 0, as eval-rubric's own summary) and ``"zero"`` otherwise.
        nonfinite: ``"error"`` or ``"fail"``.
        thresholds: More thresholds for :attr:`Summary.mixed_fraction`.
        confidence: Level for :attr:`Summary.intervals`, or None.
        method: ``"bootstrap"`` or ``"normal"``.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        ``{score name: Summary}`` in the order the names are declared or first appear; ``{}`` for a
        file without runs.

    Raises:
        FileNotFoundError: If the file does not exist (``PermissionError`` / ``OSError`` for other
            I/O failures).
        StatsError: A line that is not a record, a score that is not a number or an unknown log
            format, naming path, line and field; a NaN score or a k above a row's attempts, naming
            the row; a ``model_tag`` the file does not hold.

    Example:
        >>> import json, pathlib, tempfile
        >>> log = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
        >>> _ = log.write_text("\\n".join(json.dumps({"row_index": r, "run_index": i, "scores": {"acc": s}})
        ...     for r, i, s in [(0, 0, 1.0), (0, 1, 0.0), (1, 0, 1.0), (1, 1, 1.0)]))
        >>> summarize_results(log)["acc"].to_established_dict()["pass_at_1"]
        0.75
    """
    result = summarize_results_by_model(
        path,
        pass_threshold=pass_threshold,
        ks=ks,
        n_runs=n_runs,
        failed=failed,
        nonfinite=nonfinite,
        thresholds=thresholds,
        confidence=confidence,
        method=method,
        resamples=resamples,
        seed=seed,
    )
    tag = "primary" if model_tag in _PRIMARY else model_tag
    if tag in result.models:
        return result.models[tag].summaries
    if not result.models or tag == "primary":
        return {}
    raise StatsError(
        f"{os.fspath(path)}: no runs of model_tag {model_tag!r}; it holds {', '.join(result.models)}",
        field="model_tag",
    )
