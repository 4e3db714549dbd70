"""Datasets on the platform: local checks, presigned upload (simple or multipart), abort, listing, download.

An upload registers the dataset first (``POST /api/cli/datasets``), sends the bytes straight to storage,
then completes it. Anything that goes wrong after registration, including Ctrl+C, aborts the dataset on
the platform, so no half-registered dataset is left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.platform.client import PlatformClient, segment
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.pages import Page, fetch_all, fetch_logs, fetch_page
from osmosis_ai.platform.transfer import DownloadItem, download_all, storage_client, upload_file

__all__ = [
    "DATASET_FIELDS",
    "LocalDataset",
    "UploadOutcome",
    "check_local_dataset",
    "dataset_item",
    "download_dataset",
    "get_dataset",
    "list_datasets",
    "upload_dataset",
]

PATH = "/api/cli/datasets"
EXTENSIONS = ("csv", "jsonl", "parquet")
MAX_BYTES = 5 * 1024**3
MIN_ROWS = 4
DATASET_FIELDS = (
    "id",
    "file_name",
    "file_size",
    "status",
    "file_format",
    "original_file_format",
    "row_count",
    "original_file_size",
    "creator_name",
    "created_at",
    "updated_at",
)


def dataset_item(record: dict[str, Any]) -> dict[str, Any]:
    """The established list item of a dataset record."""
    item = {k: record.get(k) for k in DATASET_FIELDS}
    if record.get("platform_url"):
        item["platform_url"] = record["platform_url"]
    return item


@dataclass(frozen=True)
class LocalDataset:
    """A file that passed the local checks."""

    path: Path
    extension: str
    size: int
    rows: int


def check_local_dataset(path: Path) -> LocalDataset:
    """The checks the platform would make, run before anything is sent.

    Extension (csv, jsonl, parquet), non-empty, at most 5 GiB, at least 4 rows, every row readable, and the
    columns ``user_prompt`` and ``ground_truth`` (or ``label``) unless a ``metadata`` column is used.

    Raises:
        PlatformError: ``VALIDATION`` listing every problem found (up to 5, then an ellipsis).
    """
    from osmosis_ai.datasets import validate_dataset

    if not path.is_file():
        raise PlatformError(f"{path}: no such file.", code="VALIDATION")
    extension = path.suffix.lower().lstrip(".")
    if extension not in EXTENSIONS:
        raise PlatformError(f"{path}: the platform takes .csv, .jsonl or .parquet files.", code="VALIDATION")
    size = path.stat().st_size
    if size == 0:
        raise PlatformError(f"{path} is empty.", code="VALIDATION")
    if size > MAX_BYTES:
        raise PlatformError(
            f"{path} is {size / 1024**3:.1f} GiB; the platform takes at most 5 GiB.", code="VALIDATION"
        )
    report = validate_dataset(path, contract="any", max_problems=5)
    problems = [f"line {p.line}: {p.message}" if p.line is not None else p.message for p in report.problems]
    columns = set(report.columns)
    if "metadata" not in columns:
        missing = [c for c in ("user_prompt", "ground_truth") if c not in columns]
        if "ground_truth" in missing and "label" in columns:
            missing.remove("ground_truth")
        if missing and report.rows:
            problems.append(f"Missing required columns: {', '.join(missing)} (or use a metadata column)")
    if report.rows < MIN_ROWS:
        problems.append(f"{report.rows} row(s); the platform needs at least {MIN_ROWS}")
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems[:5]) + (
            "\n  - ..." if len(problems) > 5 or report.truncated else ""
        )
        raise PlatformError(f"File validation failed for {path}:\n{lines}", code="VALIDATION")
    return LocalDataset(path, extension, size, report.rows)


@dataclass
class UploadOutcome:
    """The registered dataset and what the user should know about the upload."""

    dataset: dict[str, Any]
    warnings: list[tuple[str, str]] = field(default_factory=list)


def _create(client: PlatformClient, local: LocalDataset, overwrite: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "file_name": local.path.stem,
        "file_size": local.size,
        "extension": local.extension,
    }
    try:
        return client.post(PATH, body, idempotent=False)
    except PlatformError as exc:
        existing = exc.details.get("existing_dataset_id")
        if exc.status_code != 409 or not existing:
            raise
        if not overwrite:
            raise PlatformError(
                f"A dataset named {local.path.stem!r} already exists (id {existing}). Use --overwrite to replace it.",
                code="CONFLICT",
                details=exc.details,
                status_code=409,
            ) from None
        return client.post(PATH, {**body, "overwrite_dataset_id": existing}, idempotent=False)


def upload_dataset(
    client: PlatformClient,
    local: LocalDataset,
    *,
    overwrite: bool = False,
    progress: Callable[[int], None] = lambda n: None,
    sleep: Callable[[float], None] = time.sleep,
) -> UploadOutcome:
    """Registers, uploads and completes a dataset; aborts it on any failure or interrupt.

    Args:
        progress: Called with the byte count of every finished part (or of the whole file).

    Raises:
        PlatformError: ``CONFLICT`` for an existing name without ``overwrite``; any upload failure (after the
            abort), with ``details.dataset_id``.
    """
    created = _create(client, local, overwrite)
    dataset_id = str(created.get("id") or "")
    upload = created.get("upload") if isinstance(created.get("upload"), dict) else None
    if not dataset_id or upload is None:
        raise PlatformError("The platform registered the dataset without upload instructions; try again.")
    try:
        with storage_client() as http:
            parts = upload_file(http, local.path, local.size, upload, progress=progress, sleep=sleep)
        body: dict[str, Any] = {"file_extension": local.extension}
        if parts is not None:
            body["parts"] = [{"PartNumber": number, "ETag": etag} for number, etag in parts]
        timeout = 120.0 if parts is not None else 30.0
        dataset = client.post(
            f"{PATH}/{segment(dataset_id)}/complete", body, idempotent=True, timeout=timeout
        )
    except BaseException as exc:  # KeyboardInterrupt too: never leave a half-registered dataset
        abort_error = _abort(client, dataset_id)
        if isinstance(exc, PlatformError):
            exc.details.setdefault("dataset_id", dataset_id)
            exc.details["aborted"] = abort_error is None
            if abort_error:
                exc.args = (
                    f"{exc} Aborting dataset {dataset_id} failed too ({abort_error}); delete it on the platform.",
                )
        raise
    return UploadOutcome(dataset or created)


def _abort(client: PlatformClient, dataset_id: str) -> str | None:
    """Best-effort abort; returns why it failed, or ``None``."""
    try:
        client.post(f"{PATH}/{segment(dataset_id)}/abort", {}, idempotent=True, timeout=10.0)
    except PlatformError as exc:
        return str(exc)
    return None


def list_datasets(client: PlatformClient, *, limit: int = 50, every: bool = False) -> Page:
    """One page (or ``every`` page) of the workspace's datasets."""
    page = fetch_all(client, PATH, "datasets") if every else fetch_page(client, PATH, "datasets", limit=limit)
    page.items = [dataset_item(d) for d in page.items]
    return page


def get_dataset(client: PlatformClient, name: str) -> dict[str, Any]:
    """A dataset's record (by name or id), including ``data_preview`` and ``df_stats``."""
    return client.get(f"{PATH}/{segment(name)}")


def dataset_logs(client: PlatformClient, name: str, *, limit: int = 50, cursor: str | None = None) -> Page:
    """One page of a dataset's processing log."""
    return fetch_logs(client, f"{PATH}/{segment(name)}/logs", limit=limit, cursor=cursor)


def download_dataset(client: PlatformClient, name: str, output: str | None, *, overwrite: bool) -> Path:
    """Downloads an uploaded dataset (size-checked, via a ``.partial`` file); returns the written path.

    Raises:
        PlatformError: Not yet ``uploaded``; the destination exists without ``overwrite``; a short download.
    """
    record = get_dataset(client, name)
    if record.get("status") != "uploaded":
        raise PlatformError(
            f"Dataset {name} is {record.get('status')!r}; only uploaded datasets can be downloaded.",
            code="VALIDATION",
        )
    link = client.get(f"{PATH}/{segment(name)}/download")
    url = link.get("presigned_url") or link.get("presignedUrl")
    file_name = (
        link.get("file_name")
        or link.get("fileName")
        or link.get("download_file_name")
        or link.get("downloadFileName")
    )
    if not url:
        raise PlatformError(f"The platform sent no download link for dataset {name}.")
    file_name = os.path.basename(
        str(file_name or f"{record.get('file_name') or name}.{record.get('file_format') or 'jsonl'}")
    )
    if output is None:
        target = Path.cwd() / file_name
    elif Path(output).is_dir() or output.endswith(("/", os.sep)):
        target = Path(output) / file_name
    else:
        target = Path(output)
    if target.exists() and not overwrite:
        raise PlatformError(f"{target} already exists. Use --overwrite to replace it.", code="CONFLICT")
    with contextlib.suppress(FileNotFoundError):
        if overwrite:
            target.unlink()
    size = record.get("file_size")
    report = download_all(
        [DownloadItem(target.name, str(url), int(size) if size else None)], target.parent, concurrency=1
    )
    if report.failed:
        raise PlatformError(next(iter(report.failed.values())))
    return target


def describe_stats(record: dict[str, Any]) -> str | None:
    """One line about ``df_stats`` (row and column counts) when the platform computed them."""
    stats = record.get("df_stats")
    if not isinstance(stats, dict):
        return None
    return json.dumps(stats, ensure_ascii=False)[:200]
