"""A run's output files on the platform: which exist (manifest) and where to fetch them.

``GET /api/cli/eval-runs/{id}/samples/manifest?types=...&rows=...`` lists an eval run's files; ``POST
.../samples/download-urls`` turns up to 500 of them at a time into presigned URLs. Benchmark runs have the
same two routes under ``/api/cli/benchmark-runs/{id}/outputs/``.
"""

from __future__ import annotations

import re
from typing import Any

from osmosis_ai.platform.client import PlatformClient, segment
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.transfer import DownloadItem, safe_relative

__all__ = ["BENCHMARK_OUTPUT_TYPES", "OUTPUT_TYPES", "download_items", "parse_rows", "parse_types"]

OUTPUT_TYPES = ("metrics", "trajectories", "artifacts", "logs")
BENCHMARK_OUTPUT_TYPES = ("summary", "results", "artifacts", "logs")
URL_BATCH = 500
_ROWS = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


def parse_types(text: str, allowed: tuple[str, ...] = OUTPUT_TYPES) -> list[str]:
    """``metrics,logs`` or ``all`` as a list of output types (of an eval run, or those ``allowed``).

    Example:
        >>> parse_types("logs, metrics")
        ['logs', 'metrics']
    """
    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    if names == ["all"]:
        return list(allowed)
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        raise PlatformError(
            f"Unknown output type(s) {', '.join(unknown) or '(none)'}: use a comma list of "
            f"{', '.join(allowed)}, or all.",
            code="VALIDATION",
        )
    return list(dict.fromkeys(names))


def parse_rows(text: str) -> str:
    """Validates a row selection such as ``0-9,42`` (ranges need start <= end).

    Example:
        >>> parse_rows("0-9,42")
        '0-9,42'
    """
    compact = text.replace(" ", "")
    if not _ROWS.match(compact):
        raise PlatformError(
            f"Invalid --rows {text!r}: expected numbers and ranges like 0-9,42.", code="VALIDATION"
        )
    for part in compact.split(","):
        if "-" in part:
            start, end = (int(x) for x in part.split("-"))
            if start > end:
                raise PlatformError(
                    f"Invalid --rows range {part}: the start is after the end.", code="VALIDATION"
                )
    return compact


def _url(entry: dict[str, Any]) -> str | None:
    for key in ("url", "presignedUrl", "presigned_url"):
        if entry.get(key):
            return str(entry[key])
    return None


def download_items(
    client: PlatformClient,
    run_id: str,
    types: list[str],
    rows: str | None = None,
    *,
    resource: str = "/api/cli/eval-runs",
    route: str = "samples",
) -> list[DownloadItem]:
    """The run's files of ``types`` with presigned URLs.

    ``resource``/``route`` name the run kind's output routes: an eval run's ``samples``, a benchmark run's
    ``/api/cli/benchmark-runs`` ``outputs``.

    Raises:
        PlatformError: ``NOT_FOUND`` with a hint when the platform has no download route for the run.
    """
    base = f"{resource}/{segment(run_id)}/{route}"
    try:
        manifest = client.get(f"{base}/manifest", params={"types": ",".join(types), "rows": rows})
    except PlatformError as exc:
        if exc.status_code == 404:
            raise PlatformError(
                f"The download route was not found for run {run_id}: the run may have no outputs yet.",
                code="NOT_FOUND",
                details=exc.details,
                status_code=404,
            ) from None
        raise
    files = [f for f in manifest.get("files") or [] if isinstance(f, dict) and f.get("path")]
    sizes = {}
    for entry in files:
        safe_relative(str(entry["path"]))
        sizes[str(entry["path"])] = entry.get("size")
    items: list[DownloadItem] = []
    for start in range(0, len(files), URL_BATCH):
        batch = [
            {k: f[k] for k in ("path", "token") if f.get(k) is not None}
            for f in files[start : start + URL_BATCH]
        ]
        answer = client.post(f"{base}/download-urls", {"items": batch}, idempotent=True)
        entries = answer.get("items") or answer.get("files") or answer.get("urls") or []
        for entry in entries:
            url = _url(entry) if isinstance(entry, dict) else None
            if url is None or entry.get("path") not in sizes:
                continue
            size = sizes[entry["path"]]
            items.append(DownloadItem(str(entry["path"]), url, int(size) if size is not None else None))
    return items
