"""`osmosis benchmark list|info|submit` and `osmosis benchmark runs list|info|logs|stop|download`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai.cli.bounds import check_limit_all
from osmosis_ai.cli.output import (
    confirm,
    emit_detail,
    emit_list,
    emit_operation,
    help_without_subcommand,
    is_interactive,
    status,
    warn,
)
from osmosis_ai.cli.platform_context import platform_session
from osmosis_ai.cli.runs_cmd import download_outputs, make_logs, make_stop

if TYPE_CHECKING:
    from osmosis_ai.cli.platform_context import Session
    from osmosis_ai.config import BenchmarkConfig

_LIMIT = click.IntRange(1, 50)
_RUN_COLUMNS = [
    ("name", "NAME"),
    ("status", "STATUS"),
    ("progress_text", "PROGRESS"),
    ("benchmark_name", "BENCHMARK"),
    ("agent_count", "AGENTS"),
    ("best_pass_at_1", "BEST PASS@1"),
    ("created_at", "SUBMITTED"),
]


@click.group("benchmark", invoke_without_command=True)
@click.pass_context
def benchmark_group(ctx: click.Context) -> None:
    """Browse the workspace's benchmarks, submit benchmark runs and follow them."""
    help_without_subcommand(ctx)


@click.group("runs", invoke_without_command=True)
@click.pass_context
def runs_group(ctx: click.Context) -> None:
    """List, inspect, stop and download benchmark runs."""
    help_without_subcommand(ctx)


benchmark_group.add_command(runs_group)


@benchmark_group.command("list")
@click.option("--limit", type=_LIMIT, default=50, show_default=True, help="Benchmarks per page (1-50).")
@click.option("--all", "every", is_flag=True, help="Every benchmark (all pages).")
def list_cmd(limit: int, every: bool) -> None:
    """List the benchmarks available to this workspace (KEY is what `info` and configs name)."""
    from osmosis_ai.platform.benchmarks import list_benchmarks

    check_limit_all(limit, every)
    with platform_session() as session:
        status("Fetching benchmarks...")
        page = list_benchmarks(session.client, limit=limit, every=every)
    emit_list(
        page.items,
        [("name", "NAME"), ("key", "KEY"), ("task_count", "TASKS"), ("last_run_status", "LAST RUN")],
        total_count=page.total_count,
        has_more=page.has_more,
        next_offset=page.next_offset,
        extra=session.context(),
        empty="No benchmarks in this workspace yet.",
        more_hint="Use --all to see every benchmark.",
    )


def _with_progress(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from osmosis_ai.platform.benchmarks import run_progress

    for run in runs:
        run["progress"] = run_progress(run)
        done = run["progress"]
        run["progress_text"] = f"{done['completed']}/{done['total']}" if done else None
    return runs


@benchmark_group.command("info")
@click.argument("key")
@click.option("--limit", type=_LIMIT, default=50, show_default=True, help="Runs to show (1-50).")
@click.option("--all", "every", is_flag=True, help="Every run of the benchmark.")
def info_cmd(key: str, limit: int, every: bool) -> None:
    """Show a benchmark: what it covers, its task sets, leaderboard and runs."""
    from osmosis_ai.platform.benchmarks import get_benchmark
    from osmosis_ai.platform.runs import BENCHMARK, list_runs

    check_limit_all(limit, every)
    with platform_session() as session:
        status(f'Fetching benchmark "{key}"...')
        detail = get_benchmark(session.client, key)
        bench = detail["benchmark"]
        runs = list_runs(
            session.client, BENCHMARK, limit=limit, every=every, params={"benchmark": bench["id"]}
        )
    items = _with_progress(runs.items)
    data = {**detail, "runs": items, "runs_total_count": runs.total_count, **session.context()}
    sets = ", ".join(f"{t.get('name')} ({t.get('task_count')})" for t in bench["task_sets"]) or None
    board = [
        f"#{i} {e.get('agent') or e.get('name') or e.get('model') or '-'}: pass@1 {e.get('pass_at_1', '-')}"
        for i, e in enumerate(detail["leaderboard"], start=1)
    ]
    lines = [
        ("Name", bench["name"]),
        ("Key", bench["key"]),
        ("Tasks", bench["task_count"]),
        ("Categories", bench["category_count"]),
        ("Task sets", sets),
        ("Judge model", bench.get("judge_model_default")),
        ("Runs", f"{len(items)} of {runs.total_count}"),
        ("URL", bench.get("platform_url")),
    ]
    emit_detail(data, lines, [*board, *(f"run {r['name']}: {r['status']}" for r in items)])


def _summary(config: BenchmarkConfig) -> dict[str, Any]:
    tasks = config.tasks
    selection = tasks.get("task_set") or ", ".join(tasks.get("categories", []) + tasks.get("task_names", []))
    summary: dict[str, Any] = {
        "Benchmark": config.benchmark,
        "Tasks": selection or "all",
        "Agents": len(config.agents),
        "Attempts per task": config.execution.get("attempts_per_task", 1),
    }
    for i, agent in enumerate(config.agents, start=1):
        model = agent["model"]
        label = model.get("model") or model.get("lora_model_name") or model.get("base_model")
        summary[f"agent {i} ({agent.get('harness') or 'default'})"] = f"{model['type']} {label}"
    return summary


def _platform_secrets(
    session: Session, config: BenchmarkConfig, file_values: dict[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``secrets`` part of the body and the per-run values in it (``[secrets]`` names only; the agents',
    judge's and verifier's keys are the platform's stored secrets)."""
    from osmosis_ai.platform.secrets import resolve_submit_secrets

    prompt = (
        (lambda n: click.prompt(f"Value for {n}", hide_input=True, default="", show_default=False))
        if is_interactive()
        else None
    )
    resolved = resolve_submit_secrets(
        session.client, list(config.secrets), file_values, os.environ, prompt=prompt
    )
    required = config.required_secrets
    if not required:
        return {}, {}
    body: dict[str, Any] = {"required": required}
    if resolved.provided:
        body["provided"] = dict(resolved.provided)
    return body, dict(resolved.provided)


@benchmark_group.command("submit")
@click.argument("config_path")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--secrets-file",
    default=None,
    help="dotenv file (or - for stdin) with per-run values of [secrets].required names.",
)
def submit_cmd(config_path: str, yes: bool, secrets_file: str | None) -> None:
    """Check a configs/benchmark/*.toml config, then submit the benchmark run."""
    from osmosis_ai.cli.submit import read_secrets_file
    from osmosis_ai.config import load_benchmark_config
    from osmosis_ai.platform.benchmarks import submit_benchmark_run
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.secrets import redact
    from osmosis_ai.redact import remember
    from osmosis_ai.workspace_layout import check_config_location, resolve_config_path

    path = resolve_config_path(config_path)
    check_config_location(path, "benchmark", "osmosis benchmark submit")
    config = load_benchmark_config(path)
    file_values = read_secrets_file(secrets_file)
    if config.benchmark.lower() == "hle" and config.tasks.get("task_set") != "parity":
        warn(
            "HLE_PARITY_RECOMMENDED",
            'For HLE, [tasks] task_set = "parity" makes results comparable with published scores.',
        )
    body = config.request_body()
    with platform_session() as session:
        secrets, provided = _platform_secrets(session, config, file_values)
        remember(provided.values())
        if secrets:
            body["secrets"] = secrets
        summary = _summary(config)
        for label, value in summary.items():
            status(f"  {label}: {value}")
        if not confirm("Submit this benchmark run?", yes=yes, summary=summary, default=True):
            emit_operation("benchmark.submit", status_="cancelled", message="Cancelled.")
            return
        try:
            created = submit_benchmark_run(session.client, body)
        except PlatformError as exc:
            raise redact(exc, provided.values()) from None
    url = created.get("platform_url")
    resource = {
        **{k: created.get(k) for k in ("id", "name", "status", "workflow_id", "task_count", "created_at")},
        "benchmark_name": config.benchmark,
        **({"platform_url": url} if url else {}),
        **session.context(),
        "config": {"experiment": config.experiment, "tasks": config.tasks, "agents": config.agents,
                   "execution": body.get("execution_config", {})},
    }  # fmt: skip
    steps = [
        (
            f"osmosis benchmark runs info {created['name']}",
            {"action": "benchmark_info", "name": created["name"]},
        ),
        ("osmosis benchmark runs list", {"action": "benchmark_list"}),
    ]
    if url:
        steps.append((f"open {url}", {"action": "open_url", "url": url}))
    emit_operation(
        "benchmark.submit",
        message=f"Benchmark run submitted: {created['name']}",
        resource=resource,
        lines=[("Status", created["status"]), ("Tasks", created.get("task_count")), ("URL", url)],
        next_steps=steps,
    )


@runs_group.command("list")
@click.option("--limit", type=_LIMIT, default=50, show_default=True, help="Runs per page (1-50).")
@click.option("--all", "every", is_flag=True, help="Every run (all pages).")
def runs_list_cmd(limit: int, every: bool) -> None:
    """List the workspace's benchmark runs, newest first."""
    from osmosis_ai.platform.runs import BENCHMARK, list_runs

    check_limit_all(limit, every)
    with platform_session() as session:
        status("Fetching benchmark runs...")
        page = list_runs(session.client, BENCHMARK, limit=limit, every=every)
    _emit_runs(_with_progress(page.items), page, session)


def _emit_runs(items: list[dict[str, Any]], page: Any, session: Any) -> None:
    """The runs list; ``progress_text`` is the text column only (JSON has ``progress``)."""
    from osmosis_ai.cli.output import STATE

    shown = (
        items
        if STATE.mode != "json"
        else [{k: v for k, v in i.items() if k != "progress_text"} for i in items]
    )
    emit_list(
        shown,
        _RUN_COLUMNS,
        total_count=page.total_count,
        has_more=page.has_more,
        next_offset=page.next_offset,
        extra=session.context(),
        empty="No benchmark runs yet. Submit one with `osmosis benchmark submit CONFIG`.",
        more_hint="Use --all to see every run.",
    )


@runs_group.command("info")
@click.argument("name")
def runs_info_cmd(name: str) -> None:
    """Show a benchmark run: configuration, agents, progress and results."""
    from osmosis_ai.platform.benchmarks import run_progress
    from osmosis_ai.platform.runs import BENCHMARK, get_run, run_item

    with platform_session() as session:
        detail = get_run(session.client, BENCHMARK, name)
    run = run_item(BENCHMARK, detail[BENCHMARK.detail_key])
    progress = detail.get("progress") if isinstance(detail.get("progress"), dict) else run_progress(run)
    data = {
        "benchmark_run": run,
        **{k: detail.get(k) for k in ("configuration", "agents", "totals", "agent_metrics")},
        "progress": progress,
        **session.context(),
    }
    lines = [
        ("Name", run["name"]),
        ("Status", run["status"]),
        ("Benchmark", run["benchmark_name"]),
        ("Agents", run["agent_count"]),
        (
            "Progress",
            f"{progress['completed']}/{progress['total']} {progress.get('unit', '')}" if progress else None,
        ),
        ("Best pass@1", run["best_pass_at_1"]),
        ("Created", run["created_at"]),
        ("Completed", run["completed_at"]),
        ("URL", run["platform_url"]),
    ]
    emit_detail(data, lines)


runs_group.add_command(make_logs("benchmark"))
runs_group.add_command(make_stop("benchmark"))


@runs_group.command("download")
@click.argument("name")
@click.option(
    "-o", "--output", default=None, metavar="DIR", help="Directory (default .osmosis/benchmarks/<run>/)."
)
@click.option(
    "--type",
    "types",
    default="summary,results",
    show_default=True,
    help="summary,results,artifacts,logs or all.",
)
@click.option("--overwrite", is_flag=True, help="Replace files already downloaded.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before large downloads.")
def runs_download_cmd(name: str, output: str | None, types: str, overwrite: bool, yes: bool) -> None:
    """Download a benchmark run's outputs (8 at a time, resumable)."""
    from osmosis_ai.platform.eval_outputs import BENCHMARK_OUTPUT_TYPES, parse_types
    from osmosis_ai.platform.runs import BENCHMARK

    wanted = parse_types(types, BENCHMARK_OUTPUT_TYPES)
    download_outputs(BENCHMARK, name, wanted, output=output, overwrite=overwrite, yes=yes, route="outputs")
