"""Presigned transfers to and from storage: uploads (PUT) and resumable, size-checked downloads (GET).

Presigned URLs carry their own authorisation, so these requests never send the platform token. They must
be HTTPS unless they point at a loopback address (a local test server). Retries use the package's one
:class:`~osmosis_ai.llm.retry.RetryPolicy`: a transfer is idempotent, so 429/5xx and dropped connections
are retried.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import httpx

from osmosis_ai.llm.httpx_clients import http_client
from osmosis_ai.llm.retry import (
    RETRYABLE_STATUS,
    RetryLater,
    RetryPolicy,
    retry_after_from_headers,
    retry_blocking,
)
from osmosis_ai.platform.client import USER_AGENT
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.settings import is_loopback_host

__all__ = [
    "DownloadItem",
    "DownloadReport",
    "check_presigned_url",
    "download_all",
    "put_bytes",
    "safe_relative",
    "storage_client",
    "upload_file",
]

TRANSFER_RETRY = RetryPolicy(max_retries=4, base_delay=1.0, max_delay=8.0, max_retry_after=60.0)
_RETRY_STATUS = RETRYABLE_STATUS - {409}
CHUNK = 1 << 20


def check_presigned_url(url: str) -> str:
    """Refuses a storage URL that is not HTTPS (loopback hosts excepted).

    Example:
        >>> check_presigned_url("https://bucket.example/x?sig=1")
        'https://bucket.example/x?sig=1'
    """
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback_host(parts.hostname or "")):
        return url
    raise PlatformError(
        f"The platform sent a storage URL that is not HTTPS ({parts.scheme}://{parts.hostname})."
    )


def _storage_attempt(action: Callable[[], httpx.Response], what: str) -> Callable[[], httpx.Response]:
    """One storage request as a :func:`retry_blocking` attempt: 429/5xx and dropped connections retry."""

    def attempt() -> httpx.Response:
        try:
            response = action()
        except httpx.TransportError as exc:
            raise RetryLater(PlatformError(f"{what}: connection failed ({type(exc).__name__})")) from None
        if response.status_code < 400:
            return response
        error = PlatformError(
            f"{what}: storage answered HTTP {response.status_code}", status_code=response.status_code
        )
        if response.status_code not in _RETRY_STATUS:
            raise error
        raise RetryLater(error, retry_after_from_headers(response.headers))

    return attempt


def _after_attempts(error: BaseException, attempts: int) -> BaseException:
    return PlatformError(f"{error} (after {attempts} attempts)")


def put_bytes(
    http: httpx.Client,
    url: str,
    data: bytes | Path,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 300.0,
    what: str = "upload",
    policy: RetryPolicy = TRANSFER_RETRY,
    sleep: Callable[[float], None] = time.sleep,
) -> httpx.Response:
    """PUTs ``data`` (bytes, or a whole file streamed from disk) to a presigned URL, retrying transient
    failures; returns the storage's answer."""
    check_presigned_url(url)
    size = data.stat().st_size if isinstance(data, Path) else len(data)
    sent_headers = {**(headers or {}), "Content-Length": str(size)}

    def send() -> httpx.Response:
        if isinstance(data, Path):
            with open(data, "rb") as handle:  # reopened per attempt: a retry starts from the first byte
                return http.put(url, content=_chunks(handle), headers=sent_headers, timeout=timeout)
        return http.put(url, content=data, headers=sent_headers, timeout=timeout)

    return retry_blocking(policy, _storage_attempt(send, what), sleep=sleep, give_up=_after_attempts)


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    while chunk := handle.read(CHUNK):
        yield chunk


def storage_client() -> httpx.Client:
    """The client storage uploads go through (it sends no platform token: presigned URLs carry their own
    authorisation); proxies and certificate authorities as for every client (llm/network.py)."""
    return http_client()


def _put_parts(
    http: httpx.Client,
    path: Path,
    size: int,
    upload: Mapping[str, Any],
    label: str,
    progress: Callable[[int], None],
    sleep: Callable[[float], None],
) -> list[tuple[int, str]]:
    part_size, total = int(upload.get("part_size") or 0), int(upload.get("total_parts") or 0)
    urls = {}
    for entry in upload.get("presigned_urls") or []:
        if isinstance(entry, Mapping) and entry.get("presigned_url"):
            urls[int(entry.get("part_number") or 0)] = str(entry["presigned_url"])
    fits = part_size > 0 and part_size * (total - 1) < size <= part_size * total
    if not fits or set(urls) != set(range(1, total + 1)):
        raise PlatformError(f"The platform's multipart upload plan does not fit {label}; try again.")
    parts = []
    with open(path, "rb") as handle:
        for number in range(1, total + 1):
            chunk = handle.read(part_size)
            what = f"{label}: part {number}/{total}"
            response = put_bytes(http, urls[number], chunk, what=what, sleep=sleep)
            etag = response.headers.get("etag", "").strip('"')
            if not etag:
                raise PlatformError(f"Storage sent no ETag for {what}; the upload cannot be completed.")
            parts.append((number, etag))
            progress(len(chunk))
    return parts


def upload_file(
    http: httpx.Client,
    path: Path,
    size: int,
    upload: Mapping[str, Any],
    *,
    label: str = "upload",
    progress: Callable[[int], None] = lambda n: None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[tuple[int, str]] | None:
    """Sends a file the way the platform's upload instructions say; returns ``(part number, ETag)`` of each
    part of a multipart upload, ``None`` for a simple one.

    ``upload`` is the platform's one upload shape (datasets and eval imports): ``method: "simple"`` with
    ``presigned_url`` and ``upload_headers``, or ``method: "multipart"`` with ``part_size``, ``total_parts``
    and ``presigned_urls[{part_number, presigned_url}]``. ``progress`` gets the byte count of every part sent
    (or of the whole file).

    Raises:
        PlatformError: A plan that does not fit the file, an upload that failed after its retries, a part
            without an ETag.
    """
    if upload.get("method") == "multipart":
        return _put_parts(http, path, size, upload, label, progress, sleep)
    url = upload.get("presigned_url")
    if not url:
        raise PlatformError(f"The platform sent no upload URL for {label}; try again.")
    headers = {str(k): str(v) for k, v in (upload.get("upload_headers") or {}).items()}
    put_bytes(http, str(url), path, headers=headers, timeout=600.0, what=label, sleep=sleep)
    progress(size)
    return None


def safe_relative(path: str) -> PurePosixPath:
    """A storage path as a relative path that stays inside the output directory.

    Raises:
        PlatformError: For absolute paths or ``..`` components.
    """
    relative = PurePosixPath(path)
    if relative.is_absolute() or not relative.parts or ".." in relative.parts:
        raise PlatformError(f"The platform listed an unsafe file path {path!r}; refusing to write it.")
    return relative


@dataclass(frozen=True)
class DownloadItem:
    """One file to fetch: where it goes (relative), its presigned URL and its expected size."""

    path: str
    url: str
    size: int | None


@dataclass
class DownloadReport:
    """What :func:`download_all` did."""

    downloaded: list[str]
    skipped: list[str]
    failed: dict[str, str]
    bytes: int = 0


def _fetch_one(
    http: httpx.Client,
    item: DownloadItem,
    root: Path,
    overwrite: bool,
    policy: RetryPolicy,
    sleep: Callable[[float], None],
) -> tuple[str, int]:
    """Downloads one file via ``<name>.partial`` (resumed with a Range request), then renames it."""
    target = root / safe_relative(item.path)
    if target.exists() and not overwrite and (item.size is None or target.stat().st_size == item.size):
        return "skipped", 0
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    check_presigned_url(item.url)

    def attempt() -> None:
        have = partial.stat().st_size if partial.exists() else 0
        headers = {"User-Agent": USER_AGENT}
        if have and item.size and have < item.size:
            headers["Range"] = f"bytes={have}-"
        try:
            with http.stream("GET", item.url, headers=headers, timeout=300.0) as response:
                if response.status_code >= 400:
                    error = PlatformError(f"{item.path}: download failed ({response.status_code})")
                    if response.status_code not in _RETRY_STATUS:
                        raise error
                    raise RetryLater(error, retry_after_from_headers(response.headers))
                mode = "ab" if response.status_code == 206 else "wb"  # a server that ignores Range restarts
                with open(partial, mode) as handle:
                    for chunk in response.iter_bytes(CHUNK):
                        handle.write(chunk)
        except httpx.TransportError as exc:
            raise RetryLater(PlatformError(f"{item.path}: download failed ({type(exc).__name__})")) from None

    retry_blocking(policy, attempt, sleep=sleep)
    size = partial.stat().st_size
    if item.size is not None and size != item.size:
        partial.unlink()
        raise PlatformError(f"{item.path}: got {size} bytes, expected {item.size}; the file was discarded.")
    os.replace(partial, target)
    return "downloaded", size


def download_all(
    items: list[DownloadItem],
    root: Path,
    *,
    overwrite: bool = False,
    concurrency: int = 8,
    policy: RetryPolicy = TRANSFER_RETRY,
    sleep: Callable[[float], None] = time.sleep,
) -> DownloadReport:
    """Downloads ``items`` under ``root``, ``concurrency`` at a time; failures are reported, not raised.

    A file already present with the expected size is skipped unless ``overwrite``. Each file is written
    to ``<name>.partial`` and renamed only after its size matches, so an interrupted download never leaves
    a truncated file under the real name (and the next run resumes the ``.partial``).
    """
    report = DownloadReport([], [], {})
    # Storage may redirect; every hop must meet the same HTTPS-or-loopback rule as the first URL.
    hooks = {"request": [lambda request: check_presigned_url(str(request.url))]}
    with (
        http_client(follow_redirects=True, event_hooks=hooks) as http,
        ThreadPoolExecutor(max_workers=concurrency) as pool,
    ):
        futures = {
            pool.submit(_fetch_one, http, item, root, overwrite, policy, sleep): item for item in items
        }
        for future, item in futures.items():
            try:
                outcome, size = future.result()
            except PlatformError as exc:
                report.failed[item.path] = str(exc)
                continue
            (report.downloaded if outcome == "downloaded" else report.skipped).append(item.path)
            report.bytes += size
    return report
