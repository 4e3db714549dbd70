"""`osmosis dataset upload|list|info|logs|preview|download`: datasets on the platform."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli.bounds import check_limit_all
from osmosis_ai.cli.output import (
    STATE,
    confirm,
    emit_detail,
    emit_list,
    emit_operation,
    is_interactive,
    status,
    warn,
)
from osmosis_ai.cli.platform_context import platform_session


@click.command("upload")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--overwrite", is_flag=True, help="Replace a dataset of the same name.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def upload_cmd(file: Path, overwrite: bool, yes: bool) -> None:
    """Check FILE locally, then upload it (interrupting aborts the upload on the platform)."""
    from osmosis_ai.platform.datasets import check_local_dataset, dataset_item, upload_dataset

    local = check_local_dataset(file)
    with platform_session() as session:
        summary = {"file": str(file), "name": file.stem, "size": f"{local.size} bytes", "rows": local.rows}
        if overwrite:
            warn("OVERWRITE", f"An existing dataset named {file.stem!r} will be replaced.")
        if not confirm("Proceed with upload?", yes=yes, summary=summary, default=not overwrite):
            emit_operation("dataset.upload", status_="cancelled", message="Cancelled.")
            return
        status(f"Uploading {file} ({local.size} bytes)...")
        if STATE.mode == "rich" and is_interactive():
            with click.progressbar(length=local.size, label="Uploading", file=sys.stderr) as bar:
                outcome = upload_dataset(session.client, local, overwrite=overwrite, progress=bar.update)
        else:
            outcome = upload_dataset(session.client, local, overwrite=overwrite)
    for code, message in outcome.warnings:
        warn(code, message)
    dataset = dataset_item(outcome.dataset)
    emit_operation(
        "dataset.upload",
        message=f"Uploaded {file.name} as dataset {dataset['file_name']} ({dataset['status']}).",
        resource={**dataset, **session.context()},
        next_steps=[
            (
                f"osmosis dataset info {dataset['file_name']}",
                {"action": "dataset_info", "name": dataset["file_name"]},
            )
        ],
    )


@click.command("list")
@click.option("--limit", type=click.IntRange(1, 50), default=50, show_default=True, help="Datasets per page.")
@click.option("--all", "every", is_flag=True, help="Every dataset (all pages).")
def list_cmd(limit: int, every: bool) -> None:
    """List the workspace's datasets."""
    from osmosis_ai.platform.datasets import list_datasets

    check_limit_all(limit, every)
    with platform_session() as session:
        page = list_datasets(session.client, limit=limit, every=every)
    emit_list(
        page.items,
        [
            ("file_name", "NAME"),
            ("status", "STATUS"),
            ("row_count", "ROWS"),
            ("file_size", "BYTES"),
            ("created_at", "CREATED"),
        ],
        total_count=page.total_count,
        has_more=page.has_more,
        next_offset=page.next_offset,
        extra=session.context(),
        empty="No datasets yet. Upload one with `osmosis dataset upload FILE`.",
        more_hint="Use --all to see every dataset.",
    )


@click.command("info")
@click.argument("name")
def info_cmd(name: str) -> None:
    """Show a dataset's status and statistics."""
    from osmosis_ai.platform.datasets import describe_stats, get_dataset

    with platform_session() as session:
        record = get_dataset(session.client, name)
    data = {k: v for k, v in record.items() if k != "data_preview"}
    emit_detail(
        {**data, **session.context()},
        [
            ("Name", record.get("file_name")),
            ("ID", record.get("id")),
            ("Status", record.get("status")),
            ("Format", record.get("file_format")),
            ("Rows", record.get("row_count")),
            ("Size", record.get("file_size")),
            ("Created", record.get("created_at")),
            ("Stats", describe_stats(record)),
        ],
    )


@click.command("logs")
@click.argument("name")
@click.option("--limit", type=click.IntRange(1, 200), default=50, show_default=True)
@click.option("--cursor", default=None, help="Continue with older entries.")
def logs_cmd(name: str, limit: int, cursor: str | None) -> None:
    """Show a dataset's processing log."""
    from osmosis_ai.platform.datasets import dataset_logs

    with platform_session() as session:
        page = dataset_logs(session.client, name, limit=limit, cursor=cursor)
    next_cursor = page.extra.get("next_cursor")
    emit_list(
        page.items,
        [("timestamp", "TIME"), ("level", "LEVEL"), ("message", "MESSAGE")],
        has_more=page.has_more,
        extra={**session.context(), "next_cursor": next_cursor},
        empty="No log entries.",
        more_hint=f"Older entries: --cursor {next_cursor}",
    )


@click.command("preview")
@click.argument("name")
@click.option("--rows", type=click.IntRange(1, 100), default=5, show_default=True)
def preview_cmd(name: str, rows: int) -> None:
    """Show a dataset's first rows (from the platform's preview)."""
    import json

    from osmosis_ai.platform.datasets import dataset_item, get_dataset

    with platform_session() as session:
        record = get_dataset(session.client, name)
    preview: list[Any] = record.get("data_preview") or []
    shown = preview[:rows]
    data = {
        "dataset": dataset_item(record),
        "rows": shown,
        "requested_rows": rows,
        "returned_rows": len(shown),
        "available": len(preview),
    }
    sections = [json.dumps(row, ensure_ascii=False) for row in shown] or ["(no preview yet)"]
    emit_detail(
        data,
        [("Dataset", record.get("file_name")), ("Rows shown", f"{len(shown)} of {len(preview)}")],
        sections,
    )


@click.command("download")
@click.argument("name")
@click.option("-o", "--output", default=None, help="File, or directory (an existing one, or ending in /).")
@click.option("--overwrite", is_flag=True, help="Replace an existing file.")
def download_cmd(name: str, output: str | None, overwrite: bool) -> None:
    """Download a dataset's file (size-checked; written via a .partial file)."""
    from osmosis_ai.platform.datasets import download_dataset

    with platform_session() as session:
        target = download_dataset(session.client, name, output, overwrite=overwrite)
    emit_operation(
        "dataset.download",
        message=f"Downloaded dataset {name} to {target}",
        resource={"name": name, "path": str(target), **session.context()},
    )
