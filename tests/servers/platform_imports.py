"""The eval-import routes of the platform stand-in (``/api/cli/eval-runs/imports...``).

A session is keyed by ``local_run_id`` + ``manifest_digest``: starting again returns the same session with
the files already ``uploaded``, so an interrupted upload resumes. Completing a file checks the bytes that
reached ``/_storage/`` (size and SHA-256, and the ETags of a multipart upload); finalizing creates the
platform's eval run. Answers can be corrupted from a test with ``/_control/fail`` (status 200, any body).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any
from urllib.parse import quote

from platform_state import BLOBS, NOW, STATE, ApiError

_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _state(session: dict[str, Any]) -> dict[str, Any]:
    files = [dict(f) for f in session["files"]]
    return {
        "session_id": session["session_id"],
        "status": session["status"],
        "expected_files": len(files),
        "uploaded_files": sum(f["state"] == "uploaded" for f in files),
        "files": files,
        "expires_at": "2099-01-01T00:00:00+00:00",
        "eval_run_id": session.get("eval_run_id"),
        "eval_run_name": session.get("eval_run_name"),
        "platform_url": session.get("platform_url"),
    }


def _check_start(body: dict[str, Any]) -> None:
    problems = []
    if body.get("schema_version") != 1:
        problems.append("schema_version must be 1")
    if not _HEX32.match(str(body.get("local_run_id") or "")):
        problems.append("local_run_id must be 32 hex")
    if not _HEX64.match(str(body.get("manifest_digest") or "")):
        problems.append("manifest_digest must be 64 hex")
    run = body.get("run") or {}
    for key in ("name", "started_at", "completed_at", "experiment_config", "evaluation_config"):
        if not run.get(key):
            problems.append(f"run.{key} is required")
    files = body.get("files")
    paths = [f.get("path") for f in files] if isinstance(files, list) else None
    if paths is None or paths != sorted(set(paths)):
        problems.append("files must be sorted by path, each once")
    if problems:
        raise ApiError(
            400, {"error": "Invalid eval import", "issues": [{"key": "body", "message": p} for p in problems]}
        )


def start(h: Any, body: Any, query: dict, token: dict) -> dict:
    _check_start(body)
    imports = STATE.data["imports"]
    for session in imports.values():
        if session["local_run_id"] != body["local_run_id"]:
            continue
        if session["manifest_digest"] != body["manifest_digest"]:
            raise ApiError(
                409, {"error": "This local run was imported with another manifest", "code": "CONFLICT"}
            )
        return _state(session)
    session_id = STATE.next_id("imp")
    imports[session_id] = {
        "session_id": session_id,
        "local_run_id": body["local_run_id"],
        "manifest_digest": body["manifest_digest"],
        "status": "uploading",
        "run": body["run"],
        "provenance": body.get("provenance"),
        "schema_versions": body.get("schema_versions"),
        "files": [{**f, "state": "pending"} for f in body["files"]],
    }
    return _state(imports[session_id])


def _session(session_id: str) -> dict[str, Any]:
    session = STATE.data["imports"].get(session_id)
    if session is None:
        raise ApiError(404, {"error": f"Import session '{session_id}' not found", "code": "NOT_FOUND"})
    return session


def _file(session: dict[str, Any], path: Any) -> dict[str, Any]:
    for entry in session["files"]:
        if entry["path"] == path:
            return entry
    raise ApiError(400, {"error": f"{path!r} is not a file of this import", "field": "path"})


def uploads(h: Any, body: Any, query: dict, token: dict, session_id: str) -> dict:
    session = _session(session_id)
    if session["status"] != "uploading":
        raise ApiError(409, {"error": "The import is finalized", "code": "CONFLICT"})
    paths = body.get("paths")
    if not isinstance(paths, list) or not 1 <= len(paths) <= 100:
        raise ApiError(400, {"error": "paths must list 1 to 100 files", "field": "paths"})
    port = h.server.server_address[1]
    answer = []
    for path in paths:
        entry = _file(session, path)
        base = f"http://127.0.0.1:{port}/_storage/imports/{session_id}/{quote(path)}"
        if entry["size"] <= STATE.data["multipart_threshold"]:
            upload = {"method": "simple", "presigned_url": base, "expires_in": 600, "upload_headers": {}}
        else:
            part = STATE.data["part_size"]
            total = -(-entry["size"] // part)
            urls = [{"part_number": n, "presigned_url": f"{base}.part-{n}"} for n in range(1, total + 1)]
            upload = {"method": "multipart", "part_size": part, "total_parts": total, "presigned_urls": urls}
        answer.append({"path": path, "size": entry["size"], "sha256": entry["sha256"], "upload": upload})
    return {"files": answer}


def _stored(session_id: str, entry: dict[str, Any], parts: Any) -> bytes:
    key = f"imports/{session_id}/{entry['path']}"
    if parts is None:
        return BLOBS.get(key, b"")
    numbers = [p.get("part_number") for p in parts]
    if numbers != sorted(set(numbers)) or numbers != list(range(1, len(numbers) + 1)):
        raise ApiError(400, {"error": "parts must be numbered 1..n, each once", "field": "parts"})
    data = b""
    for part in parts:
        blob = BLOBS.get(f"{key}.part-{part['part_number']}", b"")
        if hashlib.md5(blob).hexdigest() != part.get("etag"):
            raise ApiError(
                400, {"error": f"ETag of part {part['part_number']} does not match", "field": "parts"}
            )
        data += blob
    return data


def complete(h: Any, body: Any, query: dict, token: dict, session_id: str) -> dict:
    session = _session(session_id)
    entry = _file(session, body.get("path"))
    data = _stored(session_id, entry, body.get("parts"))
    if len(data) != entry["size"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise ApiError(400, {"error": f"{entry['path']}: the stored bytes do not match size and sha256"})
    entry["state"] = "uploaded"
    return {}


def finalize(h: Any, body: Any, query: dict, token: dict, session_id: str) -> dict:
    session = _session(session_id)
    if session["status"] == "finalized":
        return _state(session)
    pending = [f["path"] for f in session["files"] if f["state"] != "uploaded"]
    if pending:
        raise ApiError(
            409, {"error": f"{len(pending)} file(s) not uploaded: {pending[:3]}", "code": "CONFLICT"}
        )
    run_id = STATE.next_id("eval")
    name = session["run"]["name"]
    session.update(
        status="finalized",
        eval_run_id=run_id,
        eval_run_name=name,
        platform_url=f"https://platform.test/eval/{run_id}",
    )
    experiment = session["run"]["experiment_config"]
    STATE.data["eval_runs"].append(
        {
            "id": run_id,
            "name": name,
            "status": "finished",
            "created_at": NOW,
            "platform_url": session["platform_url"],
            "model": {"id": "m-1", "model_name": experiment["model_path"]},
            "dataset": {"id": "d-1", "file_name": experiment["dataset"]["name"]},
            "rollout": {"id": "r-1", "name": experiment["rollout"]["name"]},
            "source": "local_import",
        }
    )
    return _state(session)


ROUTES: list[tuple[str, Any]] = [
    ("POST /api/cli/eval-runs/imports", start),
    ("POST /api/cli/eval-runs/imports/([^/]+)/uploads", uploads),
    ("POST /api/cli/eval-runs/imports/([^/]+)/uploads/complete", complete),
    ("POST /api/cli/eval-runs/imports/([^/]+)/finalize", finalize),
]
