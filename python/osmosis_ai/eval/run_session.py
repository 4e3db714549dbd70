"""``eval run`` as a library call: a 0.3 workspace's evaluation config, locally, on the run engine.

In this process, no rollout server and no login for a local ``dataset_file``: the rollout's workflow and
grader run through :class:`~osmosis_ai.rollout.LocalBackend` (or a 0.2 agent loop scored by ``eval_fns``),
their model calls go through the LLM bridge, every finished item is appended to the run's results log,
and the same ``name`` resumes it (see :mod:`osmosis_ai.eval.run_dir`). :func:`run_eval_run` returns an
:class:`~osmosis_ai.eval.run_outputs.EvalRunResult` after refreshing the run directory's files.

Example:
    >>> from osmosis_ai.eval.run_session import EvalRunOptions, run_eval_run
    >>> result = run_eval_run(EvalRunOptions(config_path="configs/eval/calc.toml",
    ...                                      dataset_file="data/calc.jsonl", name="calc-1"))  # doctest: +SKIP
    >>> result.summary["pass_rate"]  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_ai.errors import OptionsError, RunError
from osmosis_ai.eval import run_inputs
from osmosis_ai.eval.run_outputs import EvalRunResult, finish_run
from osmosis_ai.runs.backends import BackendOptions, BackendReport
from osmosis_ai.runs.observer import RunObserver, quiet_observer

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Iterator, Mapping

    from osmosis_ai.eval.run_dir import Resumed
    from osmosis_ai.eval.run_files import RunLogText
    from osmosis_ai.runs.backends import Backend
    from osmosis_ai.runs.log import ResultsLog
    from osmosis_ai.runs.work import RunOutcome

__all__ = ["EvalRunOptions", "EvalRunResult", "run_eval_run"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True, kw_only=True)
class EvalRunOptions:
    """Everything an ``eval run`` invocation runs with.

    Attributes:
        config_path: The eval config, under ``<workspace>/configs/eval/``.
        name: The run's name; the same name again resumes it (default: a new one-off name).
        output: The output root (default ``<workspace>/.osmosis/evals``).
        dataset_file: The dataset to run; None downloads the config's platform dataset (needs a client).
        secrets_file: A dotenv file (``-`` for standard input) with the ``[secrets]`` values and keys.
        rows: Source rows to run, e.g. ``3,7,10-20`` (overrides ``[evaluation] limit``).
        fresh: Archive this name's existing run and start over.
        retry_failed: Also re-run items whose latest result failed or was skipped.
        max_in_flight: Items in flight at once (default ``[evaluation] batch_size``; 0 or less is ignored).
        eval_fns: Scorers of a 0.2 ``RolloutAgentLoop`` entrypoint (a 0.3 workflow has its Grader).
        base_url: OpenAI-compatible server for the config's ``model_path``.
        api_key: API key for the model (else the provider's environment variable).
        rollout_port: Fixed port of the local endpoint the workflow's model calls go to (local backend).
        backend: Where items execute (this process, or Ray).
        log_every_item: Write a ``logs.txt`` line for every item, successes too (else failures only).
    """

    config_path: PathLike
    name: str | None = None
    output: PathLike | None = None
    dataset_file: PathLike | None = None
    secrets_file: PathLike | None = None
    rows: str | None = None
    fresh: bool = False
    retry_failed: bool = False
    max_in_flight: int | None = None
    eval_fns: tuple[str, ...] = ()
    base_url: str | None = None
    api_key: str | None = None
    rollout_port: int | None = None
    backend: BackendOptions = field(default_factory=BackendOptions)
    log_every_item: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "eval_fns", tuple(self.eval_fns))
        self.backend.check()
        if self.rollout_port is not None and self.backend.name != "local":
            raise OptionsError(
                "{rollout_port} applies to the local backend (each Ray worker has its own endpoint).",
                fields=("rollout_port",),
            )


@dataclass
class _Plan:
    """Everything checked and resolved before the run directory is locked."""

    options: EvalRunOptions
    config: Any
    settings: run_inputs.RunSettings
    dataset: Path
    dataset_source: str
    indices: list[int] | None
    selected: int
    total_rows: int
    run_dir: Any
    entry: Any
    inputs: dict[str, Any]
    provenance: dict[str, Any]
    endpoint: Any
    concurrency: int
    spec: Any
    limit: float | None

    @property
    def work(self) -> int:
        return self.selected * self.settings.n


def run_eval_run(
    options: EvalRunOptions,
    observer: RunObserver | None = None,
    *,
    platform: run_inputs.PlatformOpener | None = None,
) -> EvalRunResult:
    """Runs (or resumes) the evaluation; ``observer`` sees its steps, is asked the cost question and gets
    the run's log lines. ``platform`` opens a platform client when the config's dataset must be fetched.

    Raises:
        RunError: The config, the dataset, the selection or the rollout cannot be used; another
            invocation holds the run; the run's inputs changed since it was started.
    """
    observer = quiet_observer(observer)
    plan = _prepare(options, observer, platform)
    plan.run_dir.lock()
    try:
        return _run(plan, observer)
    finally:
        plan.run_dir.unlock()


def _prepare(options: EvalRunOptions, observer: RunObserver, platform: Any) -> _Plan:
    from osmosis_ai.config import load_eval_config
    from osmosis_ai.eval.run_dir import RunDirectory, default_run_name
    from osmosis_ai.eval.run_entry import load_rollout_entry
    from osmosis_ai.eval.run_manifest import resolved_inputs
    from osmosis_ai.eval.run_rows import check_rows
    from osmosis_ai.workspace_layout import check_config_location, check_rollout, resolve_config_path

    path = resolve_config_path(options.config_path)
    root = check_config_location(path, "eval", "eval run")
    config = load_eval_config(path)
    rollout_dir, entry_file = check_rollout(root, config)
    settings = run_inputs.settings(config)
    dataset, source = run_inputs.dataset_path(config, options.dataset_file, platform, observer)
    indices, selected, total_rows = run_inputs.selection(dataset, options.rows, settings.limit)
    if selected == 0:
        raise RunError(f"{dataset}: no rows selected")
    check_rows(dataset, indices, settings.limit)  # the whole selection, before any run directory exists
    env, secret_names = run_inputs.environment(config, options.secrets_file, observer)
    out_root = Path(options.output).expanduser().resolve() if options.output else root / ".osmosis" / "evals"
    run_dir = RunDirectory(out_root, options.name or default_run_name(path))
    artifact_root = run_dir.path / "rollout_trials"
    entry = load_rollout_entry(entry_file, artifact_root=artifact_root, rollout_dir=rollout_dir)
    if entry.loop is not None and not options.eval_fns:
        raise RunError(
            f"{entry_file}: a 0.2 RolloutAgentLoop needs {{eval_fns}} MODULE:FN to score its runs",
            fields=("eval_fns",),
        )
    # The one eval function's score is the reward every number is read from: a second one, or one beside
    # a workflow's Grader, would be a score name the runs never get.
    if len(options.eval_fns) > (1 if entry.loop is not None else 0):
        raise RunError(
            f"{entry_file}: "
            + (
                "a 0.2 RolloutAgentLoop is scored by one {eval_fns} (its score is the reward): pass one"
                if entry.loop is not None
                else "a 0.3 workflow is scored by its Grader: leave {eval_fns} out"
            ),
            fields=("eval_fns",),
        )
    selection = indices if indices is not None else range(selected)  # not a list: 36 bytes a row
    inputs = resolved_inputs(
        config,
        asdict(settings),
        dataset,
        selection,
        rollout_dir,
        out_root,
        list(options.eval_fns),
        options.base_url,
    )
    provenance = run_inputs.provenance(config, root, observer)
    endpoint = _endpoint(config, options, observer)
    concurrency = _fit_to_slots(_concurrency(options, settings, entry), endpoint, observer)
    spec, limit = _spec(
        options, settings, endpoint, concurrency, entry,
        entry_file=entry_file, rollout_dir=rollout_dir, artifact_root=artifact_root, env=env, secrets=secret_names,
    )  # fmt: skip
    return _Plan(
        options, config, settings, dataset, source, indices, selected, total_rows, run_dir, entry, inputs,
        provenance, endpoint, concurrency, spec, limit,
    )  # fmt: skip


def _endpoint(config: Any, options: EvalRunOptions, observer: RunObserver) -> Any:
    """The model's endpoint. Without the provider's key the run still starts, with a warning (as 0.3's does):
    a workflow that never calls the model runs, and one that does fails at its first call."""
    from osmosis_ai.errors import MissingAPIKeyError
    from osmosis_ai.llm.providers import resolve_endpoint

    model, base_url, api_key = config.experiment.model_path, options.base_url, options.api_key
    try:
        return resolve_endpoint(model, base_url=base_url, api_key=api_key)
    except MissingAPIKeyError as exc:
        observer.warning(
            "MISSING_API_KEY", f"{exc}\nThe run starts anyway: the workflow's model calls will fail."
        )
        return resolve_endpoint(model, base_url=base_url, api_key=api_key, require_key=False)


def _concurrency(options: EvalRunOptions, settings: run_inputs.RunSettings, entry: Any) -> int:
    wanted = next((v for v in (options.max_in_flight, settings.batch_size) if v and v > 0), None)
    capacity = entry.backend.max_concurrent if entry.backend is not None else None
    return min(wanted, capacity) if wanted and capacity else (wanted or capacity or 1)


def _fit_to_slots(concurrency: int, endpoint: Any, observer: RunObserver) -> int:
    """``concurrency``, or the request slots of the model's server on this machine when it has fewer (see
    :mod:`osmosis_ai.llm.slots`), said once."""
    import asyncio

    from osmosis_ai.llm.slots import fit_to_slots

    fit = asyncio.run(fit_to_slots(concurrency, endpoint.base_url))
    if fit.lowered:
        observer.notice(fit.note("rollouts"))
    return fit.concurrency


def _spec(
    options: EvalRunOptions,
    settings: run_inputs.RunSettings,
    endpoint: Any,
    concurrency: int,
    entry: Any,
    *,
    entry_file: Path,
    rollout_dir: Path,
    artifact_root: Path,
    env: dict[str, str],
    secrets: tuple[str, ...],
) -> tuple[Any, float | None]:
    """How each worker builds the executor, and the engine's per-item limit."""
    from osmosis_ai.eval.run_remote import RunExecutorSpec, item_timeout

    timeouts = {"agent_timeout": settings.agent_timeout, "grader_timeout": settings.grader_timeout}
    spec = RunExecutorSpec(
        str(entry_file),
        str(rollout_dir),
        endpoint,
        max_connections=concurrency,
        agent_timeout=settings.agent_timeout,
        grader_timeout=settings.grader_timeout,
        eval_fns=options.eval_fns,
        artifact_root=str(artifact_root),
        env=env,
        secrets=secrets,
    )
    return spec, item_timeout(entry, **timeouts)


def _run(plan: _Plan, observer: RunObserver) -> EvalRunResult:
    """Opens the run (before or after starting the backend), asks, runs the pending items, reports."""
    from osmosis_ai.runs.backends import backend_session

    report = BackendReport()
    logs: RunLogText | None = None
    opened: Resumed | None = None
    pending = 0
    try:
        # The backend first (as `eval`): an unreachable cluster, or workers that cannot import the
        # rollout, stop the run before its run directory and results log exist. A run being resumed
        # exists already: it is opened first, so one with nothing left to run starts no backend.
        if not plan.options.fresh and plan.run_dir.log_path.exists():
            opened, logs, pending = _open_run(plan, observer)
        with backend_session(
            plan.options.backend,
            plan.spec,
            concurrency=plan.concurrency,
            item_timeout=plan.limit,
            report=report,
            pending=pending if opened is not None else None,
        ) as (loop, backend):
            if opened is None:
                opened, logs, pending = _open_run(plan, observer)
            assert logs is not None  # opened together with the run
            carried_ids = (
                {r["rollout_id"] for r in plan.run_dir.latest_records(plan.settings.n)}
                if opened.carried
                else set()
            )
            outcome = None
            try:
                if pending > 0:
                    question = f"{pending} rollouts x model {plan.config.experiment.model_path} - continue?"
                    if not observer.confirm(question):
                        logs.line("INFO", "run", "cancelled at the confirmation")
                        return EvalRunResult.cancelled_run(plan.options, plan.run_dir)
                    rows = run_inputs.normalized_rows(plan.dataset, plan.indices, plan.settings.limit)
                    logs.capture()
                    outcome = _execute(plan, observer, (loop, backend), opened.log, rows, logs)
            finally:
                opened.log.close()  # fsync what finished, whatever ended the run
        return finish_run(plan, outcome, carried_ids, logs, report)
    finally:
        if opened is not None:
            opened.log.close()  # also when the backend did not start
        if logs is not None:
            logs.close()


def _open_run(plan: _Plan, observer: RunObserver) -> tuple[Resumed, RunLogText, int]:
    """Archives the earlier run (``fresh``), opens the results log (new or resumed) and the run's text
    log; returns both and how many of the work items are pending."""
    from osmosis_ai.eval.run_files import RunLogText

    run_dir = plan.run_dir
    if plan.options.fresh:
        archived = run_dir.archive()
        if archived is not None:
            observer.message(f"Archived the earlier run to {archived}")
    opened = run_dir.open_log(
        plan.inputs, plan.provenance, plan.dataset, retry_failed=plan.options.retry_failed
    )
    logs = RunLogText(run_dir.path / "logs.txt", echo=observer.log_line)
    logs.line("INFO", "run", f"opened run {run_dir.name}", {"inputs": plan.inputs})
    pending = max(plan.work - len(opened.log.done), 0)
    items = "work item" if plan.work == 1 else "work items"
    milestone = f"{pending} of {plan.work} {items} pending ({plan.entry.description}; run {run_dir.name})"
    observer.milestone(milestone)
    logs.line("INFO", "run", milestone)
    return opened, logs, pending


def _execute(
    plan: _Plan,
    observer: RunObserver,
    session: tuple[asyncio.AbstractEventLoop, Backend | None],
    log: ResultsLog,
    rows: Iterator[tuple[int, Mapping[str, Any]]],
    logs: RunLogText,
) -> RunOutcome:
    loop, backend = session
    in_flight = min(plan.concurrency, max(plan.work - len(log.done), 1))
    milestone = f"running up to {in_flight} work item{'s' if in_flight != 1 else ''} in flight"
    logs.line("INFO", "run", milestone, {"concurrency": plan.concurrency})
    progress = observer.progress(plan.work, title=milestone)

    def on_record(record: dict[str, Any], outcome: RunOutcome) -> None:
        if record.get("status") != "success":
            details = {k: record.get(k) for k in ("row_index", "run_index", "rollout_id", "error_type")}
            logs.line("WARNING", "item", f"{record.get('status')}: {record.get('error') or ''}", details)
        elif plan.options.log_every_item:
            details = {k: record.get(k) for k in ("row_index", "run_index", "rollout_id")}
            logs.line("INFO", "item", f"success: reward {record.get('reward')}", details)
        progress(record, outcome)

    try:
        return loop.run_until_complete(_run_engine(plan, backend, log, rows, on_record))
    finally:
        progress.close()


async def _run_engine(
    plan: _Plan,
    backend: Backend | None,
    log: ResultsLog,
    rows: Iterator[tuple[int, Mapping[str, Any]]],
    on_record: Callable[[dict[str, Any], RunOutcome], None],
) -> RunOutcome:
    """Runs the engine here or on the started backend's workers (each builds the executor itself)."""
    from osmosis_ai.eval.functions import load_eval_functions
    from osmosis_ai.eval.run_remote import open_run_executor
    from osmosis_ai.runs.engine import RunEngine
    from osmosis_ai.runs.work import work_items

    async with contextlib.AsyncExitStack() as stack:
        executor = None
        if backend is None:
            scorers = load_eval_functions(list(plan.options.eval_fns)) if plan.entry.loop is not None else []
            executor = await stack.enter_async_context(
                open_run_executor(
                    plan.entry,
                    plan.endpoint,
                    scorers=scorers,
                    bridge_port=plan.options.rollout_port or 0,
                    max_connections=plan.concurrency,
                    agent_timeout=plan.settings.agent_timeout,
                    grader_timeout=plan.settings.grader_timeout,
                )
            )
        engine = RunEngine(
            executor,
            log,
            concurrency=backend.slots() if backend is not None else plan.concurrency,
            item_timeout=plan.limit,
            on_record=on_record,
            backend=backend,
        )
        return await engine.run(work_items(rows, plan.settings.n, ("",), log.done, engine.outcome))
