"""`osmosis eval|train list|info|logs|stop` and `osmosis eval download`: runs on the platform."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai.cli.bounds import check_limit_all
from osmosis_ai.cli.output import confirm, emit_detail, emit_list, emit_operation, status
from osmosis_ai.cli.platform_context import platform_session

if TYPE_CHECKING:
    from osmosis_ai.cli.platform_context import Session
    from osmosis_ai.platform.runs import RunKind

_LIMIT = click.IntRange(1, 50)


def _kind(name: str) -> RunKind:
    from osmosis_ai.platform.runs import BENCHMARK, EVAL, TRAINING

    return {"eval": EVAL, "training": TRAINING, "benchmark": BENCHMARK}[name]


def _summary(kind: RunKind, item: dict[str, Any], run: dict[str, Any]) -> dict[str, Any] | None:
    if kind.name == "eval":
        results = run.get("results") if isinstance(run.get("results"), dict) else {}
        if not results:
            return None
        keys = ("pass_rate", "graded", "passed", "failed", "skipped")
        return {"avg_reward": results.get("score"), **{k: results.get(k) for k in keys if k in results}}
    summary: dict[str, Any] = {}
    if run.get("reward") is not None:
        summary["reward"] = run["reward"]
    if run.get("total_steps"):
        summary["progress"] = {
            "completed": run.get("current_step") or 0,
            "total": run["total_steps"],
            "unit": "steps",
        }
    return summary or None


def make_list(kind_name: str) -> click.Command:
    @click.command("list")
    @click.option("--limit", type=_LIMIT, default=50, show_default=True, help="Runs per page (1-50).")
    @click.option("--all", "every", is_flag=True, help="Every run (all pages).")
    def list_cmd(limit: int, every: bool) -> None:
        """List runs of this workspace, newest first."""
        from osmosis_ai.platform.runs import list_runs

        check_limit_all(limit, every)
        kind = _kind(kind_name)
        with platform_session() as session:
            status(f"Fetching {kind.label} runs...")
            page = list_runs(session.client, kind, limit=limit, every=every)
        for item in page.items:
            summary = _summary(kind, item, item)
            if summary:
                item["summary"] = summary
        model, dataset = ("model", "dataset") if kind.name == "eval" else ("model_name", "dataset_name")
        emit_list(
            page.items,
            [
                ("name", "NAME"),
                ("status", "STATUS"),
                (model, "MODEL"),
                (dataset, "DATASET"),
                ("created_at", "CREATED"),
            ],
            total_count=page.total_count,
            has_more=page.has_more,
            next_offset=page.next_offset,
            extra=session.context(),
            empty=f"No {kind.label} runs yet. Submit one with `osmosis {kind.command} submit CONFIG`.",
            more_hint="Use --all to see every run.",
        )

    list_cmd.help = f"List the workspace's {'evaluation' if kind_name == 'eval' else 'training'} runs."
    return list_cmd


def _metrics_lines(kind: RunKind, metrics: dict[str, Any]) -> list[tuple[str, Any]]:
    overview = metrics.get("overview") or {}
    if kind.name == "eval":
        rewards = metrics.get("reward_stats") or {}
        lines = [
            (
                "Samples",
                f"{overview.get('completed_samples')}/{overview.get('total_samples')}"
                if overview.get("total_samples") is not None
                else None,
            ),
            ("Pass rate", overview.get("pass_rate")),
            ("Reward mean", rewards.get("mean")),
        ]
        for entry in metrics.get("pass_at_k") or []:
            lines.append((f"pass@{entry.get('k')}", entry.get("value")))
        return lines
    lines = [("Step", f"{overview.get('latest_step')}/{overview.get('total_steps')}" if overview else None)]
    for summary in overview.get("metric_summaries") or []:
        lines.append((str(summary.get("title") or summary.get("key")), summary.get("latest")))
    return lines


def make_info(kind_name: str) -> click.Command:
    @click.command("info")
    @click.argument("name")
    @click.option("-o", "--output", default=None, metavar="PATH", help="Also save the metrics here.")
    def info_cmd(name: str, output: str | None) -> None:
        """Show a run: status, config, and metrics once it has started."""
        from osmosis_ai.platform.errors import PlatformError
        from osmosis_ai.platform.runs import get_run, run_checkpoints, run_metrics

        kind = _kind(kind_name)
        with platform_session() as session:
            detail = get_run(session.client, kind, name)
            run = detail[kind.detail_key]
            checkpoints = None
            if kind.name == "training" and run.get("status") in kind.terminal:
                try:
                    checkpoints = run_checkpoints(session.client, str(run.get("name") or name))
                except PlatformError:
                    checkpoints = None  # shown as unavailable; the run itself is still worth showing
            metrics, metrics_error = None, None
            if run.get("status") not in kind.pending:
                try:
                    metrics = run_metrics(session.client, kind, str(run.get("id") or name))
                except PlatformError as exc:
                    metrics_error = str(exc)  # a run's detail is still worth showing without its metrics
            output_path = _save_metrics(session, kind, run, metrics, output) if output and metrics else None
        data = {
            **detail,
            "metrics": metrics,
            "metrics_available": metrics is not None,
            "metrics_error": metrics_error,
            "output_path": output_path,
            **({"checkpoints": checkpoints} if kind.name == "training" else {}),
            **session.context(),
        }
        config = found if isinstance(found := detail.get("config"), dict) else {}
        model = config.get("model_path") or (config.get("experiment_config") or {}).get("model_path")
        ref = detail.get("model") or run.get("model")
        lines = [
            ("Name", run.get("name")),
            ("Status", run.get("status")),
            ("Model", model or (ref.get("model_name") if isinstance(ref, dict) else ref)),
            ("Created", run.get("created_at")),
            ("Started", run.get("started_at")),
            ("Completed", run.get("completed_at")),
            ("URL", run.get("platform_url")),
            *(_metrics_lines(kind, metrics) if metrics else [("Metrics", metrics_error and "unavailable")]),
            ("Saved metrics", output_path),
        ]
        sections = [
            f"Checkpoint {c['checkpoint_step']}: {c['checkpoint_name']} ({c['status']})"
            for c in checkpoints or []
        ]
        emit_detail(data, lines, sections)

    info_cmd.help = "Show a run's status, config and metrics (-o saves the metrics)."
    return info_cmd


def _save_metrics(
    session: Session, kind: RunKind, run: dict[str, Any], metrics: dict[str, Any], output: str
) -> str:
    """Eval runs: the platform's metrics.json into ``output/``; training: the metrics answer as JSON."""
    from osmosis_ai._files import write_json_atomic

    target = Path(output)
    if kind.name == "eval":
        from osmosis_ai.platform.eval_outputs import download_items
        from osmosis_ai.platform.transfer import download_all

        items = [
            i for i in download_items(session.client, str(run["id"]), ["metrics"]) if i.path == "metrics.json"
        ]
        if items:
            report = download_all(items, target, overwrite=True)
            if not report.failed:
                return str(target / "metrics.json")
        write_json_atomic(target / "metrics.json", metrics)
        return str(target / "metrics.json")
    if target.is_dir() or output.endswith("/"):
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", str(run.get("name") or "run"))
        target = target / f"{safe}_{str(run.get('id', ''))[:8]}.json"
    elif target.suffix != ".json":
        target = target.with_suffix(".json")
    write_json_atomic(target, metrics)
    return str(target)


def make_logs(kind_name: str) -> click.Command:
    @click.command("logs")
    @click.argument("name")
    @click.option(
        "--limit", type=click.IntRange(1, 200), default=50, show_default=True, help="Entries (1-200)."
    )
    @click.option("--cursor", default=None, help="Continue with older entries (the cursor a page printed).")
    def logs_cmd(name: str, limit: int, cursor: str | None) -> None:
        """Show a run's log entries, newest first."""
        from osmosis_ai.platform.runs import run_logs

        kind = _kind(kind_name)
        with platform_session() as session:
            page = run_logs(session.client, kind, name, limit=limit, cursor=cursor)
        next_cursor = page.extra.get("next_cursor")
        emit_list(
            page.items,
            [("timestamp", "TIME"), ("level", "LEVEL"), ("step", "STEP"), ("message", "MESSAGE")],
            has_more=page.has_more,
            extra={**session.context(), "next_cursor": next_cursor},
            empty="No log entries yet.",
            more_hint=f"Older entries: --cursor {next_cursor}",
        )

    logs_cmd.help = "Show a run's log entries (--cursor pages to older ones)."
    return logs_cmd


def make_stop(kind_name: str) -> click.Command:
    @click.command("stop")
    @click.argument("name")
    @click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
    def stop_cmd(name: str, yes: bool) -> None:
        """Stop a run."""
        from osmosis_ai.platform.runs import stop_run

        kind = _kind(kind_name)
        with platform_session() as session:
            if not confirm(f'Stop {kind.label} run "{name}"?', yes=yes, summary={"run": name}):
                emit_operation(f"{kind.operation_prefix}.stop", status_="cancelled", message="Cancelled.")
                return
            stop_run(session.client, kind, name)
        action = f"{kind.operation_prefix}_run_info" if kind.name == "benchmark" else f"{kind.command}_info"
        emit_operation(
            f"{kind.operation_prefix}.stop",
            message=f"Stop requested for {kind.label} run {name}.",
            resource={"name": name, **session.context()},
            next_steps=[(f"osmosis {kind.command} info {name}", {"action": action, "name": name})],
        )

    stop_cmd.help = "Stop a run (-y to skip the question)."
    return stop_cmd


def download_outputs(
    kind: RunKind,
    name: str,
    wanted: list[str],
    *,
    output: str | None,
    overwrite: bool,
    yes: bool,
    **where: Any,
) -> None:
    """Downloads a run's outputs of the ``wanted`` types (8 at a time, resumable) and reports the outcome.

    ``where`` goes to :func:`~osmosis_ai.platform.eval_outputs.download_items` (``rows``, ``route``).
    """
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.eval_outputs import download_items
    from osmosis_ai.platform.runs import get_run
    from osmosis_ai.platform.transfer import download_all

    operation = f"{kind.operation_prefix}.download"
    with platform_session() as session:
        run = get_run(session.client, kind, name)[kind.detail_key]
        if run.get("status") in kind.pending:
            raise PlatformError(
                f"Run {name} has not started; there is nothing to download yet.",
                code="CONFLICT" if kind.name == "benchmark" else "VALIDATION",
            )
        items = download_items(session.client, str(run["id"]), wanted, resource=kind.path, **where)
        total = sum(i.size or 0 for i in items)
        if total > 100 * 1024 * 1024 and not confirm(
            f"Download {total / 2**20:.0f} MiB?", yes=yes, default=True
        ):
            emit_operation(operation, status_="cancelled", message="Cancelled.")
            return
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", str(run.get("name") or name))
        assert session.workspace is not None
        folder = "benchmarks" if kind.name == "benchmark" else "evals"
        root = Path(output) if output else session.workspace.directory / ".osmosis" / folder / safe
        status(f"Downloading {len(items)} file(s) to {root}...")
        report = download_all(items, root, overwrite=overwrite)
    resource = {
        "run": run.get("name"),
        "output_directory": str(root),
        "downloaded": report.downloaded,
        "skipped": report.skipped,
        "failed": report.failed,
        "bytes": report.bytes,
        **session.context(),
    }
    if report.failed:
        lines = "\n".join(f"  - {path}: {why}" for path, why in report.failed.items())
        raise PlatformError(
            f"{len(report.failed)} of {len(items)} file(s) failed to download (run the command again to resume):\n{lines}",
            details=resource,
        )
    emit_operation(
        operation,
        message=f"Downloaded {len(report.downloaded)} file(s) to {root}"
        + (f" ({len(report.skipped)} already present)" if report.skipped else ""),
        resource=resource,
    )


@click.command("download")
@click.argument("name")
@click.option(
    "-o", "--output", default=None, metavar="DIR", help="Directory (default .osmosis/evals/<run>/)."
)
@click.option(
    "--type",
    "types",
    default="metrics",
    show_default=True,
    help="metrics,trajectories,artifacts,logs or all.",
)
@click.option("--rows", default=None, help="Rows to fetch trajectories for, e.g. 0-9,42.")
@click.option("--overwrite", is_flag=True, help="Replace files already downloaded.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before large downloads.")
def eval_download(
    name: str, output: str | None, types: str, rows: str | None, overwrite: bool, yes: bool
) -> None:
    """Download an evaluation run's outputs (8 at a time, resumable)."""
    from osmosis_ai.platform.eval_outputs import parse_rows, parse_types

    wanted = parse_types(types)
    row_spec = parse_rows(rows) if rows else None
    download_outputs(_kind("eval"), name, wanted, output=output, overwrite=overwrite, yes=yes, rows=row_spec)


eval_list, train_list = make_list("eval"), make_list("training")
eval_info, train_info = make_info("eval"), make_info("training")
eval_logs, train_logs = make_logs("eval"), make_logs("training")
eval_stop, train_stop = make_stop("eval"), make_stop("training")
