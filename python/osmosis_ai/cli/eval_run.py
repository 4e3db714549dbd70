"""`osmosis eval run configs/eval/NAME.toml`: a 0.3 workspace's evaluation, locally, on the run engine.

In this process, no rollout server and no login for a local ``--dataset-file``: the rollout's workflow and
grader run through :class:`~osmosis_ai.rollout.LocalBackend` (or a 0.2 agent loop with ``--eval-fn``),
their model calls go through the LLM bridge, every finished item is appended to the run's results log,
and ``--name`` resumes it (see :mod:`osmosis_ai.eval.run_dir`).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli import eval_run_inputs as run_inputs
from osmosis_ai.cli.backend_options import backend_options
from osmosis_ai.errors import CLIError


@click.command("run")
@click.argument("config_path")
@click.option(
    "--name", default=None, metavar="NAME", help="Run name; running the same name again resumes it."
)
@click.option(
    "-o", "--output", default=None, metavar="DIR", help="Output root (default <workspace>/.osmosis/evals)."
)
@click.option(
    "--dataset-file",
    default=None,
    metavar="FILE",
    help="The dataset to run: .jsonl, .json, .csv or .parquet.",
)
@click.option(
    "--secrets-file",
    default=None,
    metavar="FILE",
    help="dotenv file (or - for stdin) with the [secrets] values and provider keys.",
)
@click.option(
    "--rows",
    default=None,
    metavar="SEL",
    help="Source rows to run, e.g. 3,7,10-20 (overrides [evaluation] limit).",
)
@click.option("--fresh", is_flag=True, help="Archive this name's existing run and start over.")
@click.option(
    "--retry-failed", is_flag=True, help="Also re-run items whose latest result failed or was skipped."
)
@click.option(
    "--max-in-flight",
    type=int,
    default=None,
    metavar="N",
    help="Items in flight at once (default: [evaluation] batch_size; 0 or less is ignored).",
)
@click.option("-y", "--yes", is_flag=True, help="Skip the cost confirmation.")
@click.option(
    "--eval-fn",
    "eval_fns",
    multiple=True,
    metavar="MODULE:FN",
    help="Scorer of a 0.2 RolloutAgentLoop entrypoint (a 0.3 workflow has its Grader).",
)
@click.option(
    "--base-url", default=None, metavar="URL", help="OpenAI-compatible server for the config's model_path."
)
@click.option(
    "--api-key",
    default=None,
    metavar="KEY",
    help="API key for the model (else the provider's environment variable).",
)
@click.option(
    "--rollout-port",
    type=click.IntRange(1, 65535),
    default=None,
    metavar="PORT",
    help="Fixed port of the local endpoint the workflow's model calls go to (default: an ephemeral one).",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Print every line of the run's logs.txt (one per item) instead of a progress bar.",
)
@click.option(
    "--upload",
    is_flag=True,
    help="When the run is complete, import it into the platform (needs a login; resumable).",
)
@backend_options
@click.pass_context
def eval_run(ctx: click.Context, **o: Any) -> None:
    """Run an eval config locally over a dataset file; running the same --name again resumes it.

    \b
    osmosis eval run configs/eval/calc.toml --dataset-file data/calc.jsonl --name calc-1 -y
    """
    ctx.exit(run(o))


def run(o: dict[str, Any]) -> int:
    """Runs the command; returns the exit code (1 when the run is partial)."""
    from osmosis_ai.cli.backend_options import backend_from_options
    from osmosis_ai.cli.eval_run_report import report
    from osmosis_ai.cli.output import confirm, status
    from osmosis_ai.config import load_eval_config
    from osmosis_ai.eval.run_dir import RunDirectory, default_run_name
    from osmosis_ai.eval.run_entry import load_rollout_entry
    from osmosis_ai.eval.run_manifest import resolved_inputs
    from osmosis_ai.runs.backends import BackendReport, backend_session
    from osmosis_ai.workspace import check_config_location, check_rollout, resolve_config_path

    o["backend_choice"] = backend_from_options(o["backend"], o["ray_address"], o["ray_workers"])
    if o.get("rollout_port") is not None and o["backend_choice"].name != "local":
        raise click.UsageError(
            "--rollout-port applies to the local backend (each Ray worker has its own endpoint)."
        )
    path = resolve_config_path(o["config_path"])
    root = check_config_location(path, "eval", "eval run")
    if o["upload"]:
        from osmosis_ai.cli.eval_upload import check_upload_ready

        check_upload_ready()  # a missing login fails now, not after the last item
    config = load_eval_config(path)
    o["rollout_dir"], o["entry_file"] = check_rollout(root, config)
    settings = run_inputs.settings(config)
    dataset, o["dataset_source"] = run_inputs.dataset_path(config, o["dataset_file"])
    indices, selected, total_rows = run_inputs.selection(dataset, o["rows"], settings["limit"])
    if selected == 0:
        raise CLIError(f"{dataset}: no rows selected")
    for _ in run_inputs.normalized_rows(dataset, indices, settings["limit"]):
        pass  # the whole selection is checked before any run directory exists
    o["rollout_env"], o["secret_names"] = run_inputs.environment(config, o["secrets_file"])

    out_root = Path(o["output"]).expanduser().resolve() if o["output"] else root / ".osmosis" / "evals"
    run_dir = RunDirectory(out_root, o["name"] or default_run_name(path))
    o["artifact_root"] = run_dir.path / "rollout_trials"
    entry = load_rollout_entry(o["entry_file"], artifact_root=o["artifact_root"])
    if entry.loop is not None and not o["eval_fns"]:
        raise CLIError(
            f"{o['entry_file']}: a 0.2 RolloutAgentLoop needs --eval-fn MODULE:FN to score its runs"
        )
    selection = indices if indices is not None else list(range(selected))
    inputs = resolved_inputs(
        config, settings, dataset, selection, o["rollout_dir"], out_root, list(o["eval_fns"])
    )
    provenance = run_inputs.provenance(config, root)
    endpoint, key_error = _endpoint(config, o)
    concurrency = _concurrency(o, settings, entry)
    spec, limit = _spec(o, settings, entry, endpoint, concurrency)
    o["backend_report"] = report_of_backend = BackendReport()
    work = selected * settings["n"]
    run_dir.lock()
    logs = opened = None
    pending = 0
    try:
        # The backend first (as `osmosis eval`): an unreachable cluster, or workers that cannot import the
        # rollout, stop the command before its run directory and results log exist. A run being resumed
        # exists already: it is opened first, so one with nothing left to run starts no backend.
        if not o["fresh"] and run_dir.log_path.exists():
            opened, logs, pending = _open_run(o, run_dir, inputs, provenance, dataset, entry, work)
        with backend_session(
            o["backend_choice"],
            spec,
            concurrency=concurrency,
            item_timeout=limit,
            report=report_of_backend,
            pending=pending if opened is not None else None,
        ) as (loop, backend):
            if opened is None:
                opened, logs, pending = _open_run(o, run_dir, inputs, provenance, dataset, entry, work)
            carried_ids = {r["rollout_id"] for r in run_dir.latest_records()} if opened.carried else set()
            outcome = None
            try:
                if pending > 0:
                    if key_error is not None:
                        raise key_error
                    if not confirm(
                        f"{pending} rollouts x model {config.experiment.model_path} - continue?", yes=o["yes"]
                    ):
                        status("Cancelled")
                        logs.line("INFO", "run", "cancelled at the confirmation")
                        return 0
                    rows = run_inputs.normalized_rows(dataset, indices, settings["limit"])
                    logs.capture()
                    session = _Session(entry, endpoint, concurrency, limit, loop, backend)
                    outcome = _execute(o, settings, session, opened.log, rows, work, logs)
            finally:
                opened.log.close()  # fsync what finished, whatever ended the run
        return report(run_dir, config, settings, dataset, outcome, carried_ids, selected, total_rows, o, logs)
    finally:
        if opened is not None:
            opened.log.close()  # also when the backend did not start
        if logs is not None:
            logs.close()
        run_dir.unlock()


def _open_run(
    o: dict[str, Any], run_dir: Any, inputs: Any, provenance: Any, dataset: Path, entry: Any, work: int
) -> tuple[Any, Any, int]:
    """Archives the earlier run (``--fresh``), opens the results log (new or resumed) and the run's text
    log; returns both and how many of the ``work`` items are pending."""
    from osmosis_ai.cli.output import status
    from osmosis_ai.eval.run_files import RunLogText

    if o["fresh"]:
        archived = run_dir.archive()
        if archived is not None:
            status(f"Archived the earlier run to {archived}")
    opened = run_dir.open_log(inputs, provenance, dataset, retry_failed=o["retry_failed"])
    echo = (lambda text: click.echo(text, err=True)) if o.get("verbose") else None
    logs = RunLogText(run_dir.path / "logs.txt", echo=echo)
    logs.line("INFO", "run", f"opened run {run_dir.name}", {"inputs": inputs})
    pending = max(work - len(opened.log.done), 0)
    items = "work item" if work == 1 else "work items"
    milestone = f"{pending} of {work} {items} pending ({entry.description}; run {run_dir.name})"
    if not o.get("verbose"):  # --verbose prints it as a log line
        status(milestone)
    logs.line("INFO", "run", milestone)
    return opened, logs, pending


@dataclass(frozen=True)
class _Session:
    """What the engine runs with: the rollout, the model, the limits, and the started backend."""

    entry: Any
    endpoint: Any
    concurrency: int
    limit: float | None
    loop: asyncio.AbstractEventLoop
    backend: Any


def _endpoint(config: Any, o: dict[str, Any]) -> tuple[Any, CLIError | None]:
    """The model's endpoint; a missing key is raised at once for a remote backend (its workers need the
    key to start), else kept for when an item is about to run (a finished run re-reports without one)."""
    from osmosis_ai.errors import MissingAPIKeyError
    from osmosis_ai.llm.providers import resolve_endpoint

    try:
        return resolve_endpoint(
            config.experiment.model_path, base_url=o["base_url"], api_key=o["api_key"]
        ), None
    except MissingAPIKeyError as exc:
        error = CLIError(str(exc))
        error.__cause__ = exc
        if o["backend_choice"].name != "local":
            raise error from exc
        return None, error


def _concurrency(o: dict[str, Any], settings: dict[str, Any], entry: Any) -> int:
    wanted = next((v for v in (o["max_in_flight"], settings["batch_size"]) if v and v > 0), None)
    capacity = entry.backend.max_concurrent if entry.backend is not None else None
    return min(wanted, capacity) if wanted and capacity else (wanted or capacity or 1)


def _spec(
    o: dict[str, Any], settings: dict[str, Any], entry: Any, endpoint: Any, concurrency: int
) -> tuple[Any, float | None]:
    """How each worker builds the executor, and the engine's per-item limit."""
    from osmosis_ai.eval.run_remote import RunExecutorSpec, item_timeout

    timeouts = {"agent_timeout": settings["agent_timeout"], "grader_timeout": settings["grader_timeout"]}
    spec = RunExecutorSpec(
        str(o["entry_file"]),
        str(o["rollout_dir"]),
        endpoint,
        max_connections=concurrency,
        eval_fns=tuple(o["eval_fns"]),
        artifact_root=str(o["artifact_root"]),
        env=o["rollout_env"],
        secrets=o["secret_names"],
        **timeouts,
    )
    return spec, item_timeout(entry, **timeouts)


def _execute(
    o: dict[str, Any], settings: dict[str, Any], session: _Session, log: Any, rows: Any, total: int, logs: Any
) -> Any:
    from osmosis_ai.runs.progress import Progress

    def extra(outcome: Any) -> list[str]:
        mean = outcome.running_mean()
        return [f"failed {outcome.failed}"] + ([f"mean reward {mean:.3f}"] if mean is not None else [])

    from osmosis_ai.cli.output import STATE, status

    show = STATE.mode == "rich"
    # --verbose prints the log's lines (one per item) in place of the milestones and the bar.
    verbose = bool(o.get("verbose"))
    in_flight = min(session.concurrency, max(total - len(log.done), 1))
    milestone = f"running up to {in_flight} work item{'s' if in_flight != 1 else ''} in flight"
    logs.line("INFO", "run", milestone, {"concurrency": session.concurrency})
    if show and not verbose:
        status(milestone)
    progress = Progress(total, unit="rollouts", extra=extra, quiet=not show or verbose)

    def on_record(record: dict[str, Any], outcome: Any) -> None:
        if record.get("status") != "success":
            details = {k: record.get(k) for k in ("row_index", "run_index", "rollout_id", "error_type")}
            logs.line("WARNING", "item", f"{record.get('status')}: {record.get('error') or ''}", details)
        elif verbose:
            details = {k: record.get(k) for k in ("row_index", "run_index", "rollout_id")}
            logs.line("INFO", "item", f"success: reward {record.get('reward')}", details)
        progress(record, outcome)

    try:
        return session.loop.run_until_complete(_run_engine(session, settings, log, rows, on_record, o))
    finally:
        progress.close()


async def _run_engine(
    session: _Session, settings: dict[str, Any], log: Any, rows: Any, progress: Any, o: dict[str, Any]
) -> Any:
    """Runs the engine here or on the started backend's workers (each builds the executor itself)."""
    from osmosis_ai.eval.functions import load_eval_functions
    from osmosis_ai.eval.run_remote import open_run_executor
    from osmosis_ai.runs.engine import RunEngine, work_items

    backend = session.backend
    async with contextlib.AsyncExitStack() as stack:
        executor = None
        if backend is None:
            scorers = load_eval_functions(list(o["eval_fns"])) if session.entry.loop is not None else []
            executor = await stack.enter_async_context(
                open_run_executor(
                    session.entry,
                    session.endpoint,
                    scorers=scorers,
                    bridge_port=o.get("rollout_port") or 0,
                    max_connections=session.concurrency,
                    agent_timeout=settings["agent_timeout"],
                    grader_timeout=settings["grader_timeout"],
                )
            )
        engine = RunEngine(
            executor,
            log,
            concurrency=backend.slots() if backend is not None else session.concurrency,
            item_timeout=session.limit,
            on_record=progress,
            backend=backend,
        )
        return await engine.run(work_items(rows, settings["n"], ("",), log.done, engine.outcome))
