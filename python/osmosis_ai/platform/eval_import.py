"""Importing a finished local evaluation run into the platform (``eval upload``, ``eval run --upload``).

The calls: start (or resume) a session with the run's identity and file list, ask for upload instructions
(at most 100 paths a call), send each file to storage, mark it complete, finalize. The platform keeps the
session, keyed by the local run id and the manifest's digest: a second start after an interrupted upload
answers which files are already ``uploaded``, and only the ``pending`` ones are sent again. Nothing is kept
on this side, so an interrupt (Ctrl+C included) loses nothing: the next invocation resumes.

Every answer is checked before it is acted on; one that does not fit the plan (another file set, a size or
digest that differs, counts that do not add up, an unknown state) stops the import with what was wrong.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.platform.client import PlatformClient, segment
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.transfer import storage_client, upload_file

__all__ = [
    "IMPORTS_PATH",
    "ImportFile",
    "ImportPlan",
    "ImportState",
    "finalize_import",
    "import_run",
    "pending_files",
    "send_files",
    "start_import",
]

IMPORTS_PATH = "/api/cli/eval-runs/imports"
BATCH = 100
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_STATUSES = ("uploading", "finalized")
_FILE_STATES = ("pending", "uploaded")


def fingerprint(path: Path) -> tuple[int, ...]:
    """What says a file is the one that was hashed: device, inode, size, mtime and ctime (nanoseconds)."""
    st = path.stat(follow_symlinks=False)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class ImportFile:
    """One file of the run: its upload path (POSIX, relative to the run directory) and what it held."""

    path: str
    local: Path
    size: int
    sha256: str
    stat: tuple[int, ...]

    def check_unchanged(self) -> None:
        """Raises when the file is no longer the one the plan hashed (edited, replaced, removed)."""
        try:
            same = fingerprint(self.local) == self.stat
        except OSError:
            same = False
        if not same:
            raise PlatformError(
                f"{self.local} changed after the upload was planned; run the upload again.", code="VALIDATION"
            )


@dataclass(frozen=True)
class ImportPlan:
    """What is imported: the run's identity, its description, and its files sorted by path."""

    run_dir: Path
    local_run_id: str
    manifest_digest: str
    run: dict[str, Any]
    schema_versions: dict[str, Any]
    provenance: dict[str, Any]
    files: tuple[ImportFile, ...]

    def start_body(self) -> dict[str, Any]:
        """The body of the start call."""
        return {
            "schema_version": 1,
            "local_run_id": self.local_run_id,
            "manifest_digest": self.manifest_digest,
            "run": self.run,
            "schema_versions": self.schema_versions,
            "provenance": self.provenance,
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files],
        }

    @property
    def by_path(self) -> dict[str, ImportFile]:
        return {f.path: f for f in self.files}


@dataclass(frozen=True)
class ImportState:
    """The platform's view of an import session.

    Attributes:
        files: ``path -> (size, sha256, state)`` with state ``pending`` or ``uploaded``.
    """

    session_id: str
    status: str
    expected_files: int
    uploaded_files: int
    files: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    expires_at: str | None = None
    eval_run_id: str | None = None
    eval_run_name: str | None = None
    platform_url: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The fields a command reports."""
        keys = ("session_id", "eval_run_id", "eval_run_name", "status", "expected_files", "uploaded_files")
        return {key: getattr(self, key) for key in keys}


def _malformed(what: str) -> PlatformError:
    return PlatformError(
        f"The platform's eval import answer is malformed ({what}); nothing more was sent. Run the upload "
        "again; if this repeats, the platform is at fault.",
        details={"malformed": what},
    )


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _malformed(f"{key} is {value!r}, not a count")
    return value


def _optional_text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise _malformed(f"{key} is {value!r}, not text")
    return value


def _files(entries: Any) -> dict[str, tuple[int, str, str]]:
    if not isinstance(entries, list):
        raise _malformed("files is not a list")
    files: dict[str, tuple[int, str, str]] = {}
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str):
            raise _malformed(f"file entry {entry!r} has no path")
        path = entry["path"]
        if path in files:
            raise _malformed(f"file {path!r} is listed twice")
        size, sha, state = entry.get("size"), entry.get("sha256"), entry.get("state")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise _malformed(f"file {path!r} has size {size!r}")
        if not isinstance(sha, str) or not _SHA256.match(sha):
            raise _malformed(f"file {path!r} has sha256 {sha!r}")
        if state not in _FILE_STATES:
            raise _malformed(f"file {path!r} has state {state!r}")
        files[path] = (size, sha, state)
    return files


def parse_state(data: Mapping[str, Any]) -> ImportState:
    """An import-state answer, checked field by field.

    Raises:
        PlatformError: Any field missing or of the wrong kind, an unknown status or file state, a file
            listed twice, more files uploaded than expected.
    """
    session_id = data.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        raise _malformed("no session_id")
    status = data.get("status")
    if status not in _STATUSES:
        raise _malformed(f"status {status!r}")
    expected, uploaded = _count(data, "expected_files"), _count(data, "uploaded_files")
    if uploaded > expected:
        raise _malformed(f"{uploaded} files uploaded of {expected} expected")
    return ImportState(
        session_id=session_id,
        status=status,
        expected_files=expected,
        uploaded_files=uploaded,
        files=_files(data.get("files")),
        expires_at=_optional_text(data, "expires_at"),
        eval_run_id=_optional_text(data, "eval_run_id"),
        eval_run_name=_optional_text(data, "eval_run_name"),
        platform_url=_optional_text(data, "platform_url"),
    )


def _check_against_plan(state: ImportState, plan: ImportPlan) -> None:
    local = plan.by_path
    missing, unknown = sorted(set(local) - set(state.files)), sorted(set(state.files) - set(local))
    if missing or unknown:
        parts = [f"missing {missing[:5]}"] if missing else []
        parts += [f"unknown {unknown[:5]}"] if unknown else []
        raise _malformed("Server returned a different eval import file set: " + "; ".join(parts))
    for path, (size, sha, _) in state.files.items():
        if (size, sha) != (local[path].size, local[path].sha256):
            raise _malformed(f"size or sha256 of {path!r} differs from the local file")
    uploaded = sum(entry[2] == "uploaded" for entry in state.files.values())
    if state.expected_files != len(local) or state.uploaded_files != uploaded:
        raise _malformed(
            f"counts expected_files={state.expected_files}, uploaded_files={state.uploaded_files} do not "
            f"match {len(local)} files, {uploaded} uploaded"
        )


def start_import(client: PlatformClient, plan: ImportPlan) -> ImportState:
    """Starts the session, or resumes the one an earlier upload of the same run left."""
    data = client.post(IMPORTS_PATH, plan.start_body(), idempotent=True)
    state = parse_state(data)
    _check_against_plan(state, plan)
    return state


def pending_files(plan: ImportPlan, state: ImportState) -> list[ImportFile]:
    """The files still to send, in path order (none once the session is finalized)."""
    if state.status == "finalized":
        return []
    return [f for f in plan.files if state.files[f.path][2] == "pending"]


def _instructions(
    client: PlatformClient, session: str, batch: list[ImportFile]
) -> dict[str, Mapping[str, Any]]:
    answer = client.post(
        f"{IMPORTS_PATH}/{segment(session)}/uploads", {"paths": [f.path for f in batch]}, idempotent=True
    )
    entries = answer.get("files")
    if not isinstance(entries, list):
        raise _malformed("upload instructions without a files list")
    asked = {f.path: f for f in batch}
    found: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        path = entry.get("path") if isinstance(entry, Mapping) else None
        if path not in asked:
            raise _malformed(f"upload instructions for {path!r}, which was not asked for")
        if (entry.get("size"), entry.get("sha256")) != (asked[path].size, asked[path].sha256):
            raise _malformed(f"upload instructions for {path!r} name another size or sha256")
        if not isinstance(entry.get("upload"), Mapping):
            raise _malformed(f"upload instructions for {path!r} have no upload")
        found[path] = entry["upload"]
    absent = [p for p in asked if p not in found]
    if absent:
        raise _malformed(f"no upload instructions for {absent[:5]}")
    return found


def send_files(
    client: PlatformClient,
    state: ImportState,
    files: list[ImportFile],
    *,
    progress: Callable[[str, int], None] = lambda path, n: None,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Sends ``files`` (each checked unchanged before and after) and marks each complete as it lands.

    ``progress(path, n)`` is called with the bytes of every part or file sent.
    """
    session = segment(state.session_id)
    with storage_client() as http:
        for start in range(0, len(files), BATCH):
            batch = files[start : start + BATCH]
            instructions = _instructions(client, state.session_id, batch)
            for file in batch:
                file.check_unchanged()
                parts = upload_file(
                    http,
                    file.local,
                    file.size,
                    instructions[file.path],
                    label=file.path,
                    progress=functools.partial(progress, file.path),
                    sleep=sleep,
                )
                file.check_unchanged()
                body: dict[str, Any] = {"path": file.path}
                if parts is not None:
                    body["parts"] = [{"part_number": number, "etag": etag} for number, etag in parts]
                timeout = 120.0 if parts is not None else 30.0
                client.post(
                    f"{IMPORTS_PATH}/{session}/uploads/complete", body, idempotent=True, timeout=timeout
                )


def finalize_import(client: PlatformClient, plan: ImportPlan, state: ImportState) -> ImportState:
    """Finalizes the session (a no-op on the platform for one already finalized); returns the final state.

    Raises:
        PlatformError: The answer is not a finalized import of every file with the run's id, name and URL.
    """
    data = client.post(
        f"{IMPORTS_PATH}/{segment(state.session_id)}/finalize", {}, idempotent=True, timeout=300.0
    )
    final = parse_state(data)
    _check_against_plan(final, plan)
    if final.status != "finalized":
        raise _malformed(f"the finalize answer has status {final.status!r}")
    if not (final.eval_run_id and final.eval_run_name and final.platform_url):
        raise _malformed("the finalized import lacks eval_run_id, eval_run_name or platform_url")
    if final.uploaded_files != final.expected_files or any(e[2] != "uploaded" for e in final.files.values()):
        raise _malformed("the finalized import has files that are not uploaded")
    return final


def import_run(
    client: PlatformClient,
    plan: ImportPlan,
    *,
    on_pending: Callable[[list[ImportFile]], None] = lambda files: None,
    progress: Callable[[str, int], None] = lambda path, n: None,
    sleep: Callable[[float], None] = time.sleep,
) -> ImportState:
    """The whole import: start (or resume), send what is pending, finalize.

    Args:
        on_pending: Called once with the files about to be sent (empty when all are on the platform).
        progress: Called with ``(path, bytes)`` as bytes land in storage.

    Example:
        >>> state = import_run(client, build_upload_plan(Path(".osmosis/evals/calc-1")))  # doctest: +SKIP
        >>> state.status
        'finalized'
    """
    state = start_import(client, plan)
    pending = pending_files(plan, state)
    on_pending(pending)
    if pending:
        send_files(client, state, pending, progress=progress, sleep=sleep)
    return finalize_import(client, plan, state)


def total_bytes(files: list[ImportFile]) -> int:
    """The bytes ``files`` hold."""
    return sum(f.size for f in files)
