"""Rubric evaluations as library calls: score JSONL records with an LLM judge, ``number`` runs per record.

Two kinds of options, one run: :class:`RubricEvalOptions` judges with a rubric of a YAML config (or an
``@osmosis_rubric`` function), as ``osmosis eval-rubric``; :class:`InlineRubricOptions` with a rubric
given as text and chat-style records, as ``osmosis eval rubric``. :func:`run_rubric_eval` runs either on
the engine (here or on Ray), every judgement appended to the results log, reads the session back from the
log, writes the established results JSON (streamed: memory does not grow with the records) and returns a
:class:`RubricEvalResult`.

Example:
    >>> from osmosis_ai.rubric.run import InlineRubricOptions, run_rubric_eval
    >>> result = run_rubric_eval(InlineRubricOptions(data_path="chats.jsonl", rubric="Is it polite?",
    ...                                              model="openai/gpt-4o-mini"))  # doctest: +SKIP
    >>> result.summary["overall_statistics"]["average"]  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_ai.errors import ConfigError, DatasetFormatError, RunError
from osmosis_ai.rubric.records import RecordSource
from osmosis_ai.rubric.run_options import InlineRubricOptions, RubricEvalOptions
from osmosis_ai.rubric.session import RubricSession
from osmosis_ai.runs.backends import BackendReport
from osmosis_ai.runs.observer import RunObserver, quiet_observer

if TYPE_CHECKING:
    from osmosis_ai.llm.slots import SlotFit
    from osmosis_ai.rubric.config import RubricEntry
    from osmosis_ai.rubric.document import DocumentTally
    from osmosis_ai.rubric.report import RecordEcho
    from osmosis_ai.runs.log import ResultsLog

__all__ = ["InlineRubricOptions", "RowHook", "RubricEvalOptions", "RubricEvalResult", "run_rubric_eval"]

RowHook = Callable[[dict[str, Any]], None]
"""Sees each record of the results document (0.2's row, as :meth:`RubricEvalResult.rows` has it) once it is
handed to the writer: the CLI prints its console report from the same pass."""


@dataclass
class RubricEvalResult:
    """What a rubric evaluation did and found.

    The records are not held: :meth:`rows` streams them again from the dataset and the results log, and
    ``payload`` / ``document`` (the whole results document in memory) are built when first asked.

    Attributes:
        options: The options it ran with.
        session: The session's state (interrupted, stopped early and why, judge health); its judgements
            are in the results log (``session.log_path``).
        output: The results file written.
        backend: How the judgements were spread (``name`` is ``local`` unless they ran on Ray).
        summary: The results document's payload (0.2's layout) without its ``records``: statistics,
            judge health, warnings, and the judge-noise and gold figures when asked for.
    """

    options: RubricEvalOptions | InlineRubricOptions
    session: RubricSession
    output: Path
    backend: BackendReport = field(default_factory=BackendReport)
    summary: dict[str, Any] = field(default_factory=dict)
    source: RecordSource | None = None

    @property
    def unscored(self) -> int:
        """Judgements that produced no score (errors and unscored replies)."""
        return self.session.health.errors + self.session.health.unscored

    def rows(self, *, for_report: bool = False, names_only: bool = False) -> Iterator[dict[str, Any]]:
        """The payload's ``records`` (per record: its runs and statistics), one at a time; ``for_report``:
        what the console report reads (the statistics it shows, see ``rubric.document.record_row``, and
        each run's fields as the log has them); ``names_only``: without ``input_record`` (None), which
        0.3's layout does not have."""
        from osmosis_ai.rubric.document import record_row, record_runs

        if self.source is None:
            return iter(())
        number = int(self.summary.get("number") or 1)
        # The report reads a few fields of each run: the log's records need no projection.
        records = record_runs(
            self.source, self.session.log_path, number, project=not for_report, names_only=names_only
        )
        return (record_row(*entry, for_report=for_report) for entry in records)

    def report(self) -> dict[str, Any]:
        """:attr:`summary` with its ``records`` streamed (:meth:`rows` for the console report, read once)."""
        return _with_records(self.summary, self.rows(for_report=True))

    @cached_property
    def payload(self) -> dict[str, Any]:
        """The established results document (0.2's layout, as ``eval-rubric`` writes it), in memory."""
        return _with_records(self.summary, list(self.rows()))

    @cached_property
    def document(self) -> dict[str, Any]:
        """What was written to ``output``: ``payload`` for :class:`RubricEvalOptions` (0.2's layout),
        0.3's layout of it for :class:`InlineRubricOptions`."""
        if not isinstance(self.options, InlineRubricOptions):
            return self.payload
        from osmosis_ai.rubric.document import layout_0_3

        return layout_0_3(self.payload, model=self.options.model.strip(), rubric=self.summary["rubric"])

    def document_parts(self) -> tuple[dict[str, Any], Iterator[dict[str, Any]], dict[str, Any]]:
        """The results document as :meth:`to_json` has it, in three parts: the keys before ``records``,
        the records (streamed), the keys after them (with ``backend`` when a remote backend ran)."""
        from osmosis_ai.rubric.document import layout_0_3_parts, record_0_3

        backend = {"backend": self.session.backend} if self.session.backend else {}
        keys = list(self.summary)
        cut = keys.index("overall_statistics") + 1  # where the document has its records
        head = {key: self.summary[key] for key in keys[:cut]}
        tail = {key: self.summary[key] for key in keys[cut:]}
        if not isinstance(self.options, InlineRubricOptions):
            return head, self.rows(), {**tail, **backend}
        model, rubric = self.options.model.strip(), self.summary["rubric"]
        head, tail = layout_0_3_parts(self.summary, model=model, rubric=rubric)
        return head, map(record_0_3, self.rows(names_only=True)), {**tail, **backend}

    def to_json(self) -> dict[str, Any]:
        """The results document, with how a remote backend spread the runs, in memory."""
        head, records, tail = self.document_parts()
        return {**head, "records": list(records), **tail}


def _with_records(summary: dict[str, Any], records: Any) -> dict[str, Any]:
    """``summary`` with ``records`` after its ``overall_statistics``, where the document has them."""
    payload: dict[str, Any] = {}
    for key, value in summary.items():
        payload[key] = value
        if key == "overall_statistics":
            payload["records"] = records
    return payload


@dataclass
class _Job:
    """A rubric evaluation with its inputs loaded and checked."""

    rubric_id: str
    entry: RubricEntry
    source: RecordSource
    count: int  # records of the session
    overrides: dict[str, Any]
    model_info: dict[str, Any]
    number: int
    data_path: Path
    output: Path
    identifier: str | None
    log_config: dict[str, Any]
    function: Callable[..., Any] | None = None  # the user's scoring function
    function_spec: str | None = None
    config_path: Path | None = None
    baseline: dict[str, float] | None = None
    gold: dict[str, float] | None = None
    intro: list[str] = field(default_factory=list)
    fit: SlotFit | None = None  # the option's concurrency against the judge server's slots

    @property
    def concurrency(self) -> int:
        """Judge calls at once: the option, or the judge server's slots when fewer."""
        assert self.fit is not None
        return self.fit.concurrency


def run_rubric_eval(
    options: RubricEvalOptions | InlineRubricOptions,
    observer: RunObserver | None = None,
    *,
    report_rows: Callable[[BackendReport], RowHook] | None = None,
) -> RubricEvalResult:
    """Runs (or resumes, with ``resume_path``) a rubric evaluation; ``observer`` sees its steps and progress.

    ``report_rows``, called once the judging is done with how the runs were spread, returns the hook
    that sees each record as the results document is written (so a report needs no second read of the
    dataset and the log). The document is written whole even when the hook fails; its error is raised
    after.

    Raises:
        RunError: The data, the config, the rubric, the function or an output path cannot be used; no
            record references the rubric.
        MissingAPIKeyError: The judge's key is not set (checked before any judge call).
    """
    observer = quiet_observer(observer)
    job = _config_job(options) if isinstance(options, RubricEvalOptions) else _inline_job(options)
    if job.fit is not None and job.fit.lowered:
        observer.notice(job.fit.note("judge calls"))
    for line in job.intro:
        observer.message(line)
    report = BackendReport()
    session = _judge(job, options, observer, report)
    summary = _write_results(job, options, session, report_rows(report) if report_rows else None)
    return RubricEvalResult(options, session, job.output, report, summary, job.source)


def _check_data(data_path: Path) -> None:
    if not data_path.exists():
        raise RunError(f"Data path '{data_path}' does not exist.")
    if data_path.is_dir():
        raise RunError(f"Expected a JSONL file but received directory '{data_path}'.")


def _fit_to_judge(model_info: dict[str, Any], concurrency: int, scored_by_function: bool) -> SlotFit:
    """``concurrency`` fitted to the request slots of the judge's server (on this machine, when it says);
    a scoring function's own model calls are its business."""
    import asyncio

    from osmosis_ai.llm.slots import SlotFit, fit_to_slots
    from osmosis_ai.rubric.judge_request import judge_endpoint

    if scored_by_function:
        return SlotFit(concurrency, None, None)
    return asyncio.run(fit_to_slots(concurrency, judge_endpoint(model_info).base_url))


def _load_function(spec: str) -> Callable[..., Any]:
    from osmosis_ai.importer import import_object

    func: object = import_object(spec, what="--function", example="rubrics:score_politeness", error=RunError)
    if not callable(func):
        raise RunError(f"'{spec}' is not callable (it is a {type(func).__name__}).")
    return func


def _config_job(options: RubricEvalOptions) -> _Job:
    from osmosis_ai._files import check_output_file
    from osmosis_ai.rubric.judge import ensure_api_key_available
    from osmosis_ai.rubric.report import load_baseline, resolve_output_path
    from osmosis_ai.rubric.session import log_config

    data_path, rubric_id = Path(options.data_path), options.rubric_id.strip()
    _check_data(data_path)
    function = _load_function(options.function) if options.function else None
    config, entry = _config_entry(options, data_path, rubric_id)
    overrides = options.judge_overrides()
    model_info = {**entry.model_info, **{k: v for k, v in overrides.items() if v is not None}}
    if function is None:
        ensure_api_key_available(model_info)
    source = RecordSource(data_path, rubric_id)
    try:
        count, others, unlabelled = source.scan()
    except DatasetFormatError as exc:
        raise RunError(str(exc)) from None
    if not count:
        raise RunError(f"No records in '{data_path}' reference rubric '{rubric_id}'.")
    baseline = load_baseline(Path(options.baseline_path)) if options.baseline_path else None
    gold = _gold(options)
    out, identifier = resolve_output_path(Path(options.output) if options.output else None, rubric_id)
    check_output_file(out)  # an unwritable results file is refused before any judge call
    number = options.runs_per_record()
    fit = _fit_to_judge(model_info, options.concurrency, function is not None)
    scorer = (
        f"function '{options.function}'"
        if function is not None and not model_info
        else f"provider '{model_info.get('provider') or '<unknown>'}' "
        f"model '{model_info.get('model') or '<unspecified>'}'"
    )
    intro = [
        f"Rubric '{rubric_id}' ({entry.source_label}) -> {scorer}",
        f"Loaded {count} matching record(s) from {data_path}",
        *(
            [f"Skipped {others} record(s) of other rubrics and {unlabelled} without a rubric_id"]
            if others or unlabelled
            else []
        ),
        f"Running {number} evaluation(s) per record, {fit.concurrency} at a time",
        "",
    ]
    return _Job(
        rubric_id, entry, source, count, overrides, model_info, number, data_path, out, identifier,
        log_config(rubric_id, entry.rubric, model_info, number, options.function),
        function=function, function_spec=options.function, config_path=config, baseline=baseline, gold=gold,
        intro=intro, fit=fit,
    )  # fmt: skip


def _config_entry(
    options: RubricEvalOptions, data_path: Path, rubric_id: str
) -> tuple[Path | None, RubricEntry]:
    """The config file and its entry for ``rubric_id``. A ``--function`` brings its own rubric and judge, so
    the YAML is optional then: without ``--config`` and without a config holding the id, the entry is
    only the id (the records still select by ``rubric_id``)."""
    from osmosis_ai.rubric.config import RubricEntry, find_config, load_rubric_configs

    explicit = Path(options.config_path) if options.config_path else None
    try:
        config = find_config(data_path, explicit)
    except ConfigError:
        if options.function is None or explicit is not None:
            raise
        return None, RubricEntry(id=rubric_id, rubric="", model_info={}, source_label=options.function)
    entries = load_rubric_configs(config)
    if rubric_id in entries:
        return config, entries[rubric_id]
    if options.function is not None and explicit is None:
        return None, RubricEntry(id=rubric_id, rubric="", model_info={}, source_label=options.function)
    available = ", ".join(sorted(entries)) or "none"
    raise RunError(f"Rubric '{rubric_id}' was not found in {config}. Available: {available}")


def _gold(options: RubricEvalOptions) -> dict[str, float] | None:
    if options.gold_path is None:
        return None
    from osmosis_ai.rubric.calibration import load_gold

    return load_gold(Path(options.gold_path))


def _inline_job(options: InlineRubricOptions) -> _Job:
    from osmosis_ai._files import check_output_file
    from osmosis_ai.rubric.config import RubricEntry
    from osmosis_ai.rubric.judge import ensure_api_key_available
    from osmosis_ai.rubric.report import resolve_output_path_0_3
    from osmosis_ai.rubric.session import log_config

    data_path = Path(options.data_path)
    _check_data(data_path)
    rubric = options.rubric_text()
    model_info = options.model_info()
    overrides = options.judge_overrides()
    ensure_api_key_available({**model_info, **overrides})
    fit = _fit_to_judge({**model_info, **overrides}, options.concurrency, False)
    source = RecordSource(data_path)
    try:
        count = source.scan()[0]
    except DatasetFormatError as exc:
        raise RunError(str(exc)) from None
    out, identifier = resolve_output_path_0_3(
        os.fspath(options.output) if options.output is not None else None
    )
    check_output_file(out)  # an unwritable results file is refused before any judge call
    entry = RubricEntry(
        id="rubric",
        rubric=rubric,
        model_info=model_info,
        score_min=options.score_min,
        score_max=options.score_max,
        source_label="--rubric",
    )
    intro = [
        f"Model: {model_info['provider']}/{model_info['model']}",
        f"Evaluated {count} record(s) from {data_path}",
        f"Runs per record: {options.number}",
    ]
    return _Job(
        "rubric", entry, source, count, overrides, {**model_info, **{k: v for k, v in overrides.items() if v is not None}},
        options.number, data_path, out, identifier, log_config("rubric", rubric, {**model_info, **overrides}, options.number, None),
        intro=intro, fit=fit,
    )  # fmt: skip


def _judge(
    job: _Job, options: RubricEvalOptions | InlineRubricOptions, observer: RunObserver, report: BackendReport
) -> RubricSession:
    """Runs the session on the engine with its results log; returns the session read back from the log."""
    from osmosis_ai.rubric.remote import JudgeExecutorSpec
    from osmosis_ai.rubric.runner import RecordJudge
    from osmosis_ai.rubric.session import run_session
    from osmosis_ai.runs.backends import backend_session
    from osmosis_ai.runs.session_log import open_session_log

    calls = RecordJudge(job.entry, job.source, job.overrides, job.function)
    spec = JudgeExecutorSpec(
        job.rubric_id, job.entry, job.source, job.overrides, job.function_spec, job.concurrency
    )
    total = job.count * job.number

    def open_log(resume: str | os.PathLike[str] | None) -> ResultsLog:
        planned = {"rows": job.count, "runs": total}
        return open_session_log(
            "rubric", job.log_config, job.data_path, options.log_path, resume, observer, planned
        )

    # The backend first (as `eval`): an unreachable cluster, or workers that cannot import the function,
    # stop the session before its results log exists. A resumed log exists already: it is read first, so
    # a session with nothing left to run starts no backend.
    opened = open_log(options.resume_path) if options.resume_path else None
    pending = None if opened is None else total - len(opened.done)
    try:
        with backend_session(
            options.backend,
            spec,
            concurrency=job.concurrency,
            item_timeout=None,
            report=report,
            pending=pending,
        ) as (loop, remote):
            log = opened if opened is not None else open_log(None)
            progress = observer.progress(total)
            try:
                outcome = run_session(
                    rubric_id=job.rubric_id, number=job.number, calls=calls, log=log,
                    concurrency=job.concurrency, progress=progress, loop=loop, backend=remote,
                )  # fmt: skip
            finally:
                progress.close()
                log.close()
    finally:
        if opened is not None:
            opened.close()  # also when the backend did not start
    session = RubricSession.from_log(log.path, total, outcome)
    if report.name != "local":
        session.backend = report.as_dict()
    return session


def _write_results(
    job: _Job, options: Any, session: RubricSession, hook: RowHook | None = None
) -> dict[str, Any]:
    """Writes the results document, its records streamed past (each shown to ``hook``); counts the
    session's judge health on the way. Returns the payload without its records."""
    from osmosis_ai.rubric.document import (
        UnrenderedRecords,
        core_records_0_3,
        overall_statistics,
        payload_head,
        record_runs,
        write_document,
    )
    from osmosis_ai.rubric.report import RecordEcho

    overall, warnings = overall_statistics(session.log_path, job.rubric_id)
    head = payload_head(
        rubric_id=job.rubric_id, source_label=job.entry.source_label, model_info=job.model_info,
        number=job.number, config_path=job.config_path, data_path=job.data_path, overall=overall,
    )  # fmt: skip
    layout = (options.model.strip(), job.entry.rubric) if isinstance(options, InlineRubricOptions) else None
    failures: list[Exception] = []

    def tail() -> dict[str, Any]:
        return _payload_tail(job, options, session, tally, warnings, overall)

    shown = 0
    # 0.3's records laid out by the core when the report is RecordEcho's (its text made there too).
    if layout is not None and (hook is None or isinstance(hook, RecordEcho)):
        tally = _tally(job, options, session)
        show = None if hook is None else _text_shown(hook, failures)
        laid = core_records_0_3(job.source, session.log_path, job.number, tally, show)
        if laid is not None:
            try:
                summary = write_document(job.output, head, laid, tail, layout_0_3=layout)
            except UnrenderedRecords as exc:
                shown = exc.shown
            else:
                if failures:
                    raise failures[0]
                return summary
    tally = _tally(job, options, session)
    # 0.3's layout has no input_record: its rows are read for their names only.
    records = record_runs(job.source, session.log_path, job.number, names_only=layout is not None)
    rows = tally.rows(records)
    if hook is not None:
        rows = _shown(rows, hook, failures, shown)
    summary = write_document(job.output, head, rows, tail, layout_0_3=layout)
    if failures:
        raise failures[0]
    return summary


def _shown(
    rows: Iterator[dict[str, Any]], hook: RowHook, failures: list[Exception], shown: int = 0
) -> Iterator[dict[str, Any]]:
    """``rows``, each shown to ``hook`` once handed out but the first ``shown`` (shown already); a hook
    that fails (a closed terminal) is asked no more and its error kept in ``failures``: the document must
    not lose its records to it."""
    for index, row in enumerate(rows):
        yield row
        if not failures and index >= shown:
            try:
                hook(row)
            except Exception as exc:
                failures.append(exc)


def _text_shown(echo: RecordEcho, failures: list[Exception]) -> Callable[[str], None]:
    """``echo.add_text``, as :func:`_shown` asks a hook: asked no more once it failed."""

    def show(text: str) -> None:
        if not failures:
            try:
                echo.add_text(text)
            except Exception as exc:
                failures.append(exc)

    return show


def _tally(job: _Job, options: Any, session: RubricSession) -> DocumentTally:
    from osmosis_ai.rubric.document import DocumentTally

    tally = DocumentTally(health=session.health)
    if getattr(options, "repeat", None) is not None or job.gold is not None:
        from osmosis_ai.rubric.calibration import GoldTally, NoiseTally

        if getattr(options, "repeat", None) is not None:
            tally.noise = NoiseTally()
        if job.gold is not None:
            tally.gold = GoldTally(job.gold, threshold=options.gold_threshold)
    return tally


def _payload_tail(
    job: _Job,
    options: Any,
    session: RubricSession,
    tally: DocumentTally,
    warnings: list[Any],
    overall: dict[str, Any],
) -> dict[str, Any]:
    """The payload's keys after ``records``, in the established order, then ours."""
    tail: dict[str, Any] = {}
    if job.identifier is not None:
        tail["output_identifier"] = job.identifier
    tail["rubric"] = job.entry.rubric
    tail["judge_health"] = session.health.as_json()
    tail["concurrency"] = job.concurrency
    tail["planned_runs"] = session.total
    tail["completed_runs"] = tally.completed_runs
    tail["interrupted"] = session.interrupted
    tail["warnings"] = [{"code": w.code, "message": w.message} for w in warnings]
    if session.session_error:
        tail["session_error"] = session.session_error
    if job.baseline is not None:
        from osmosis_ai.rubric.report import baseline_comparison

        tail["baseline_comparison"] = baseline_comparison(Path(options.baseline_path), job.baseline, overall)
    if tally.noise is not None:
        tail["judge_noise"] = tally.noise.result()
    if tally.gold is not None:
        tail["gold_agreement"] = tally.gold.result()
    return tail
