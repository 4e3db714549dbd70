"""``eval`` as a library call: an agent loop over a dataset, ``n_runs`` runs per row, scored, pass@k.

:func:`run_eval` takes a frozen :class:`EvalOptions` and returns an :class:`EvalResult`: what the session
did, where its results log is, and today's summary of that log (``EvalResult.summary``). Order: check
and open the dataset → load the agent → load the eval functions → resolve the model endpoints (a missing
key is reported before any network round trip) → 1-token preflight → run on the engine (here or on Ray)
→ summarise the log → write ``output``. Every finished run is in the results log before the next is
counted; a resume (``resume_path``) skips what the log holds; Ctrl+C keeps everything finished.

Example:
    >>> from osmosis_ai.eval.session import EvalOptions, run_eval
    >>> result = run_eval(EvalOptions(dataset="data.jsonl", model="openai/gpt-4o-mini",
    ...                               eval_fns=("rewards:exact",), module="agent:loop"))  # doctest: +SKIP
    >>> result.summary.summaries["rewards:exact"]["mean"]  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_ai.errors import RunError
from osmosis_ai.eval.options import EvalOptions
from osmosis_ai.eval.summary import EvalReport
from osmosis_ai.llm.providers import Endpoint
from osmosis_ai.runs.backends import BackendReport

if TYPE_CHECKING:
    from osmosis_ai.llm.transport import Transport
    from osmosis_ai.runs.backends import Backend
from osmosis_ai.runs.log import ResultsLog
from osmosis_ai.runs.observer import RunObserver, quiet_observer
from osmosis_ai.runs.work import RunOutcome

__all__ = ["EvalOptions", "EvalResult", "arun_eval", "run_eval"]

_SHOWN_PROBLEMS = 10


@dataclass
class EvalResult:
    """What an eval session did and found.

    Attributes:
        options: The options it ran with.
        outcome: Runs executed, taken from a resumed log, failed; interrupted or stopped early, and why.
        log_path: The results log (every finished run).
        summary: The log's result model laid out (per eval function mean/std/min/max and pass@k, null
            when nothing was scored; counts; warnings). When the session was interrupted it covers what
            finished, and its warnings count the planned rows and runs that never finished (resume the
            log to run them).
        duration_ms: Wall time of the runs.
        backend: How the runs were spread (``name`` is ``local`` unless they ran on Ray).
        output: The results JSON written (``options.output``; marked ``interrupted: true`` when a signal
            stopped the session), or None.
    """

    options: EvalOptions
    outcome: RunOutcome
    log_path: Path
    summary: EvalReport | None = None
    duration_ms: float = 0.0
    backend: BackendReport = field(default_factory=BackendReport)
    output: Path | None = None

    @property
    def interrupted(self) -> bool:
        """A signal stopped the session before every run finished."""
        return self.outcome.interrupted

    @property
    def failed_runs(self) -> int:
        """Runs that errored, or where an eval function raised (0 without a summary)."""
        return 0 if self.summary is None else self.summary.failed_runs + self.summary.eval_error_runs

    @property
    def failure_rate(self) -> float:
        """:attr:`failed_runs` over all runs (0.0 without runs)."""
        total = 0 if self.summary is None else self.summary.total_runs
        return self.failed_runs / total if total else 0.0

    def to_json(self) -> dict[str, Any]:
        """The established ``-o`` document with every row (built from the log on each call), plus
        ``results_log`` and, for a remote backend, ``backend``."""
        if self.summary is None:
            raise RunError("the session has no summary yet: it is made when the session ends")
        document = self.summary.to_json(
            config=self.options.output_config(),
            duration_ms=self.duration_ms,
            stopped_early=self.outcome.stopped_early,
            stop_reason=self.outcome.stop_reason,
            interrupted=self.outcome.interrupted,
        )
        spread = {"backend": self.backend.as_dict()} if self.backend.name != "local" else {}
        return {**document, "results_log": str(self.log_path), **spread}


def run_eval(options: EvalOptions, observer: RunObserver | None = None) -> EvalResult:
    """Runs an eval session (see the module docstring); ``observer`` sees its steps and progress.

    Raises:
        RunError: An input cannot be used (the dataset breaks the row contract, a key is missing, the
            preflight request was refused); nothing was run.
        OptionsError: ``options`` are inconsistent (raised when they are made).
    """
    return asyncio.run(arun_eval(options, observer))


async def arun_eval(options: EvalOptions, observer: RunObserver | None = None) -> EvalResult:
    """:func:`run_eval` on the running event loop."""
    from osmosis_ai.eval.agent import open_transports, preflight

    observer = quiet_observer(observer)
    # Local inputs first (agent, dataset, eval functions): a typo is reported before any key check or
    # network round trip.
    inputs = _load_inputs(options, observer)
    endpoints = _endpoints(options)
    options = await _fit_to_slots(options, endpoints, observer)
    pool = max(1, options.batch_size // len(endpoints))
    async with open_transports(endpoints, max_connections=pool) as transports:
        if options.preflight:
            for transport in transports.values():
                await preflight(transport, observer)
        return await _evaluate(options, observer, endpoints, transports, inputs)


async def _fit_to_slots(
    options: EvalOptions, endpoints: dict[str, Endpoint], observer: RunObserver
) -> EvalOptions:
    """``options`` with no more runs at once than the fewest request slots of a model server on this machine
    (see :mod:`osmosis_ai.llm.slots`), said once when that lowers ``batch_size``."""
    from osmosis_ai.llm.slots import fit_to_slots

    fits = [await fit_to_slots(options.batch_size, endpoint.base_url) for endpoint in endpoints.values()]
    fit = min(fits, key=lambda f: f.concurrency)
    if not fit.lowered:
        return options
    observer.notice(fit.note("runs"))
    return replace(options, batch_size=fit.concurrency)


@dataclass
class _Inputs:
    agent: Any
    rows: Iterator[tuple[int, Mapping[str, Any]]]
    selected: int
    eval_fns: list[Any]


def _endpoints(options: EvalOptions) -> dict[str, Endpoint]:
    from osmosis_ai.eval.agent import resolve_model_endpoint

    primary = resolve_model_endpoint(options.model, options.base_url, options.api_key)
    if not options.baseline_model:
        return {"": primary}
    baseline = resolve_model_endpoint(
        options.baseline_model, options.baseline_base_url, options.baseline_api_key
    )
    return {"primary": primary, "baseline": baseline}


def _select_rows(options: EvalOptions, observer: RunObserver) -> tuple[Iterator[Any], int]:
    from osmosis_ai.datasets import read_dataset, validate_dataset

    path, offset, limit = str(options.dataset), options.offset, options.limit
    observer.message(f"Loading dataset: {path}")
    # The whole file is checked before the first run: rows stream during the run, and a bad row found
    # there (an integer ground_truth, say) would stop the eval half-way with a partial log.
    report = validate_dataset(path, contract="eval", max_problems=_SHOWN_PROBLEMS)
    if not report.ok:
        raise RunError(_dataset_problems(path, report))
    total = report.rows
    available = max(total - offset, 0)
    selected = available if limit is None else min(limit, available)
    if selected == 0:
        raise RunError(
            f"No rows to evaluate in {path} (it has {total} rows; {{offset}} {offset}).", fields=("offset",)
        )
    if limit is not None:
        observer.message(f"  Total rows: {total} (evaluating {selected})")
    else:
        observer.message(f"  Total rows: {selected}")
    rows = read_dataset(path, limit=selected, offset=offset, read_ahead=False)
    return ((offset + i, row) for i, row in enumerate(rows)), selected


def _dataset_problems(path: str, report: Any) -> str:
    lines = [
        f"{path} does not meet the eval dataset contract ({report.total_problems} problem(s) in "
        f"{report.bad_rows} row(s)); nothing was run:"
    ]
    lines += [f"  {problem}" for problem in report.problems]
    if report.total_problems > len(report.problems):
        lines.append(f"  ... and {report.total_problems - len(report.problems)} more")
    lines.append(
        "Each row needs system_prompt, user_prompt and ground_truth as non-empty strings "
        '(write "ground_truth": "4", not 4); `osmosis dataset validate FILE` lists every problem.'
    )
    return "\n".join(lines)


def _load_inputs(options: EvalOptions, observer: RunObserver) -> _Inputs:
    from osmosis_ai.eval.agent import load_agent
    from osmosis_ai.eval.functions import load_eval_functions

    # The dataset first: it is the cheapest check, and a missing file should not be hidden behind an
    # agent that cannot load (an MCP folder without the `mcp` extra, say).
    rows, selected = _select_rows(options, observer)
    observer.message(f"Loading agent: {options.module or options.mcp_dir}")
    agent = load_agent(options.module, options.mcp_dir, tool_timeout=options.tool_timeout, observer=observer)
    observer.message(f"  Agent name: {agent.name}")
    observer.message(f"Loading eval functions: {', '.join(options.eval_fns)}")
    eval_fns = load_eval_functions(list(options.eval_fns))
    for fn in eval_fns:
        observer.message(f"  {fn.name} ({fn.mode} mode)")
    return _Inputs(agent, rows, selected, eval_fns)


def _open_log(options: EvalOptions, observer: RunObserver, rows: int, runs: int) -> ResultsLog:
    from osmosis_ai.runs.session_log import open_session_log

    config, dataset = options.log_config(), Path(options.dataset)
    planned = {"rows": rows, "runs": runs}
    return open_session_log("eval", config, dataset, options.log_path, options.resume_path, observer, planned)


async def _evaluate(
    options: EvalOptions,
    observer: RunObserver,
    endpoints: dict[str, Endpoint],
    transports: dict[str, Transport],
    inputs: _Inputs,
) -> EvalResult:
    from osmosis_ai.eval.remote import AgentExecutorSpec
    from osmosis_ai.runs.backends import start_backend

    spec = AgentExecutorSpec(
        options.module,
        str(Path(options.mcp_dir).resolve()) if options.mcp_dir else None,
        tuple(options.eval_fns),
        endpoints,
        max_connections=max(1, options.batch_size // len(endpoints)),
        max_turns=options.max_turns,
        completion_params=options.completion_params(),
        tool_timeout=options.tool_timeout,
    )
    report = BackendReport()
    # The backend first: an unreachable cluster or workers that cannot import the job's code stop the
    # session before a results log exists. A resumed log exists already: it is read first, so a session
    # with nothing left to run starts no backend.
    work = inputs.selected * options.n_runs * len(transports)
    log = _open_log(options, observer, inputs.selected, work) if options.resume_path else None
    pending = None if log is None else work - len(log.done)
    try:
        async with start_backend(
            options.backend,
            spec,
            concurrency=options.batch_size,
            item_timeout=options.run_timeout,
            report=report,
            pending=pending,
        ) as backend:
            log = log if log is not None else _open_log(options, observer, inputs.selected, work)
            started = time.monotonic()
            outcome = await _drive(options, observer, backend, transports, inputs, log)
    finally:
        if log is not None:
            log.close()
    assert log is not None
    result = EvalResult(options, outcome, log.path, backend=report)
    result.duration_ms = (time.monotonic() - started) * 1000.0
    return _summarise(result, endpoints)


async def _drive(
    options: EvalOptions,
    observer: RunObserver,
    backend: Backend | None,
    transports: dict[str, Transport],
    inputs: _Inputs,
    log: ResultsLog,
) -> RunOutcome:
    """Runs the engine (on ``backend`` when given) into ``log``; returns the outcome."""
    from osmosis_ai.eval.agent import build_agent_executor
    from osmosis_ai.runs.engine import RunEngine
    from osmosis_ai.runs.work import work_items

    tags = tuple(transports)
    executor = build_agent_executor(
        inputs.agent,
        inputs.eval_fns,
        transports,
        max_turns=options.max_turns,
        completion_params=options.completion_params(),
    )
    progress = observer.progress(inputs.selected * options.n_runs * len(tags))
    engine = RunEngine(
        executor,
        log,
        concurrency=backend.slots() if backend is not None else options.batch_size,
        item_timeout=options.run_timeout,
        on_record=progress,
        isolate=backend is None,  # on Ray, the worker isolates (AgentExecutorSpec.isolate)
        backend=backend,
    )
    runs_text = f" x{options.n_runs} runs" if options.n_runs > 1 else ""
    batch_text = f", batch_size={options.batch_size}" if options.batch_size > 1 else ""
    observer.message("")
    observer.message(f"Running evaluation ({inputs.selected} rows{runs_text}{batch_text})...")
    try:
        return await engine.run(work_items(inputs.rows, options.n_runs, tags, log.done, engine.outcome))
    finally:
        progress.close()
        log.close()


def _summarise(result: EvalResult, endpoints: dict[str, Endpoint]) -> EvalResult:
    """Today's summary of the log, and the ``output`` file when asked for."""
    from osmosis_ai._files import STDOUT
    from osmosis_ai.eval.summary import build_report

    options = result.options
    models = {tag: ep.model for tag, ep in endpoints.items()} if len(endpoints) > 1 else None
    result.summary = build_report(
        result.log_path,
        eval_fns=list(options.eval_fns),
        n_runs=options.n_runs,
        pass_threshold=options.pass_threshold,
        models=models,
        with_rows=options.output is not None and str(options.output) != STDOUT,
    )
    if options.output is not None:
        # The rows are streamed from the log to the file: memory does not grow with the rows.
        result.output = Path(options.output)
        result.summary.write_json(
            result.output,
            config=options.output_config(),
            duration_ms=result.duration_ms,
            stopped_early=result.outcome.stopped_early,
            stop_reason=result.outcome.stop_reason,
            interrupted=result.outcome.interrupted,
        )
    return result
