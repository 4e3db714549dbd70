"""The dataset of an ``osmosis eval run`` named on the platform (``experiment.dataset``), cached locally.

A local ``--dataset-file`` needs no login; a platform dataset needs one (and the workspace's ``origin``).
The file is kept under ``~/.cache/osmosis/datasets/<dataset id>/`` with a ``metadata.json`` recording the
platform's version (``updated_at``) and size: the same version is used from the cache without a download.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from pathlib import Path
from typing import Any

from osmosis_ai._files import write_json_atomic
from osmosis_ai.errors import RunError

__all__ = ["cache_root", "resolve_platform_dataset"]

_IN_PROGRESS = ("pending", "uploading", "processing")


def cache_root() -> Path:
    """Where platform datasets are cached."""
    return Path.home() / ".cache" / "osmosis" / "datasets"


def _cached(folder: Path, version: Any) -> Path | None:
    try:
        meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    path = folder / str(meta.get("file_name", ""))
    if meta.get("version") != version or not path.is_file() or path.stat().st_size != meta.get("file_size"):
        return None
    return path


def resolve_platform_dataset(client: Any, name: str) -> tuple[Path, str]:
    """The local file of platform dataset ``name`` and where it came from (``cache`` or ``download``).

    Raises:
        RunError: The dataset is not uploaded (yet), or the download failed; the message suggests
            a local ``dataset_file``.
    """
    from osmosis_ai.platform.datasets import download_dataset, get_dataset

    try:
        record = get_dataset(client, name)
    except Exception as exc:  # platform errors carry their own message; add the way out
        raise RunError(
            f"Could not resolve dataset '{name}': {exc}; pass {{dataset_file}} to run against a local file",
            fields=("dataset_file",),
        ) from exc
    status = record.get("status")
    if status != "uploaded":
        hint = " Try again after it finishes uploading." if status in _IN_PROGRESS else ""
        raise RunError(f"Dataset '{name}' is not available (status: {status}).{hint}")
    version = record.get("updated_at")
    folder = cache_root() / re.sub(r"[^A-Za-z0-9_.-]", "_", str(record.get("id") or name))
    hit = _cached(folder, version)
    if hit is not None:
        return hit, "cache"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        path = download_dataset(client, name, f"{folder}/", overwrite=True)
    except Exception as exc:
        raise RunError(
            f"Could not download dataset '{name}': {str(exc).rstrip('.')}; re-run to retry, or pass {{dataset_file}}",
            fields=("dataset_file",),
        ) from exc
    meta = {
        "dataset_id": record.get("id"),
        "dataset_name": name,
        "version": version,
        "file_name": path.name,
        "file_size": path.stat().st_size,
        "cached_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
    }
    write_json_atomic(folder / "metadata.json", meta)  # a failed write keeps the previous metadata whole
    return path, "download"
