"""What of an ``osmosis eval run`` directory is imported into the platform, checked before anything is sent.

:func:`build_upload_plan` reads the run as the established client does: ``manifest.json`` (the input lock),
``progress.json`` and ``index.jsonl`` (every work item has its terminal result: a run that is not complete
is refused), ``metrics.json`` (finished, same identity), each indexed trajectory (valid ATIF under the strict
check of :mod:`osmosis_ai.atif`, naming its rollout, row and run) and the artifacts of the indexed attempts. The files sent are ``index.jsonl``,
``progress.json``, those trajectories and artifacts; never the manifest, the results log, the metrics,
the logs or superseded attempts. Each file is hashed and its identity (device, inode, size, times) kept,
so a file that changes before or while it is sent stops the upload.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, TypeGuard

from osmosis_ai.atif import check_trajectory
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.eval_import import ImportFile, ImportPlan, fingerprint

__all__ = ["LocalEvalUploadError", "build_upload_plan"]

_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_TRAJECTORY = re.compile(r"^trajectory[A-Za-z0-9._-]*\.json$")
_STATUSES = ("success", "failed", "skipped")
_PROVENANCE = ("sdk_version", "git_head", "git_branch", "git_dirty", "config_branch", "config_commit_sha")
MAX_PATH = 1024


class LocalEvalUploadError(PlatformError):
    """The run directory cannot be imported (incomplete, changed, or not an ``eval run`` directory)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="VALIDATION")


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _regular(path: Path, where: str) -> bytes:
    try:
        info = path.lstat()
    except OSError as exc:
        raise LocalEvalUploadError(f"{where} is missing or unreadable ({exc.strerror})") from exc
    if not stat.S_ISREG(info.st_mode):
        raise LocalEvalUploadError(f"{where} must be a regular file, not a symlink or directory")
    return path.read_bytes()


def _json_object(raw: bytes, where: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise LocalEvalUploadError(f"{where} is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise LocalEvalUploadError(f"{where} must be a JSON object")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise LocalEvalUploadError(f"{where} must be a non-empty string")
    return value


def _manifest(run_dir: Path) -> tuple[dict[str, Any], str]:
    raw = _regular(run_dir / "manifest.json", "manifest.json")
    manifest = _json_object(raw, "manifest.json")
    if manifest.get("schema_version") != 1:
        raise LocalEvalUploadError("manifest.json schema_version must be 1")
    if not _HEX32.match(str(manifest.get("local_run_id") or "")):
        raise LocalEvalUploadError("manifest.json local_run_id must be 32 lowercase hex characters")
    if manifest.get("run_name") != run_dir.name:
        raise LocalEvalUploadError(
            f"manifest.json run_name {manifest.get('run_name')!r} does not match the directory name "
            f"{run_dir.name!r}; upload the run directory as eval run wrote it"
        )
    inputs = manifest.get("inputs")
    if not isinstance(inputs, dict):
        raise LocalEvalUploadError("manifest.json inputs must be a JSON object")
    _text(inputs.get("model_path"), "manifest.json inputs.model_path")
    for section, keys in (
        ("rollout", ("name", "entrypoint", "source_digest")),
        ("dataset", ("sha256", "selected_source_rows")),
    ):
        block = inputs.get(section)
        for key in keys:
            _text(
                block.get(key) if isinstance(block, dict) else None, f"manifest.json inputs.{section}.{key}"
            )
    n = inputs.get("n")
    if not _is_count(n) or n < 1:
        raise LocalEvalUploadError("manifest.json inputs.n must be a positive integer")
    if not isinstance(inputs.get("versions"), dict):
        raise LocalEvalUploadError("manifest.json inputs.versions must be a JSON object")
    return manifest, hashlib.sha256(raw).hexdigest()


def _progress(run_dir: Path) -> dict[str, int]:
    progress = _json_object(_regular(run_dir / "progress.json", "progress.json"), "progress.json")
    for key in ("total_runs", "sampled_rows", "total_dataset_rows"):
        if not _is_count(progress.get(key)):
            raise LocalEvalUploadError(f"progress.json {key} must be a non-negative integer")
    return progress


def _index_row(line: str, number: int, seen: set[tuple[int, int]], ids: set[str]) -> dict[str, Any]:
    where = f"index.jsonl:{number}"
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise LocalEvalUploadError(f"{where} is not valid JSON ({exc})") from exc
    if not isinstance(row, dict):
        raise LocalEvalUploadError(f"{where} must be a JSON object")
    if not _is_count(row.get("row_index")) or not _is_count(row.get("run_index")):
        raise LocalEvalUploadError(f"{where} row_index and run_index must be non-negative integers")
    key = (row["row_index"], row["run_index"])
    if key in seen:
        raise LocalEvalUploadError(f"{where} repeats row {key[0]} run {key[1]}")
    rollout_id = str(row.get("rollout_id") or "")
    if not _HEX32.match(rollout_id):
        raise LocalEvalUploadError(f"{where} rollout_id must be 32 lowercase hex characters")
    if rollout_id in ids:
        raise LocalEvalUploadError(f"{where} repeats rollout_id {rollout_id}")
    if row.get("status") not in _STATUSES:
        raise LocalEvalUploadError(f"{where} status must be success, failed or skipped")
    name = row.get("trajectory_filename")
    if name is not None and not (isinstance(name, str) and _TRAJECTORY.match(name)):
        raise LocalEvalUploadError(f"{where} trajectory_filename must look like trajectory*.json")
    seen.add(key)
    ids.add(rollout_id)
    return row


def _index(run_dir: Path) -> list[dict[str, Any]]:
    raw = _regular(run_dir / "index.jsonl", "index.jsonl")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LocalEvalUploadError(f"index.jsonl is not UTF-8 ({exc})") from exc
    seen: set[tuple[int, int]] = set()
    ids: set[str] = set()
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            raise LocalEvalUploadError(f"index.jsonl:{number} is blank")
        rows.append(_index_row(line, number, seen, ids))
    return rows


def _check_complete(rows: list[dict[str, Any]], progress: Mapping[str, int], n: int) -> None:
    total, sampled = progress["total_runs"], progress["sampled_rows"]
    if len(rows) != total:
        raise LocalEvalUploadError(
            f"local evaluation is incomplete: index.jsonl has {len(rows)} terminal results but "
            f"progress.json expects {total}; finish it first (osmosis eval run CONFIG --name <run>)"
        )
    if total != sampled * n:
        raise LocalEvalUploadError(
            "progress.json total_runs must equal sampled_rows times manifest.json inputs.n"
        )
    if sampled > progress["total_dataset_rows"]:
        raise LocalEvalUploadError("progress.json sampled_rows exceeds total_dataset_rows")
    runs: dict[int, set[int]] = {}
    for row in rows:
        runs.setdefault(row["row_index"], set()).add(row["run_index"])
    if set(runs) != set(range(sampled)):
        raise LocalEvalUploadError(
            "index.jsonl row_index values must be exactly the selected rows 0..sampled_rows-1"
        )
    for row_index, found in sorted(runs.items()):
        if found != set(range(n)):
            raise LocalEvalUploadError(f"index.jsonl row {row_index} lacks some of its {n} runs")


def _finished_metrics(run_dir: Path, manifest: Mapping[str, Any]) -> tuple[dict[str, Any], float]:
    metrics = _json_object(_regular(run_dir / "metrics.json", "metrics.json"), "metrics.json")
    identity, summary = metrics.get("eval_run"), metrics.get("summary")
    if not isinstance(identity, dict) or not isinstance(summary, dict):
        raise LocalEvalUploadError("metrics.json must hold eval_run and summary objects")
    if identity.get("id") != manifest["local_run_id"] or identity.get("name") != manifest["run_name"]:
        raise LocalEvalUploadError("metrics.json eval_run id or name does not match manifest.json")
    if identity.get("status") != "finished":
        raise LocalEvalUploadError(
            "local evaluation is not completed: metrics.json status must be finished (it is "
            f"{identity.get('status')!r}); finish the run first"
        )
    for key in ("started_at", "completed_at", "dataset_name"):
        _text(identity.get(key), f"metrics.json eval_run.{key}")
    inputs = manifest["inputs"]
    if identity.get("model_name") != inputs["model_path"]:
        raise LocalEvalUploadError("metrics.json eval_run.model_name does not match manifest.json")
    if identity.get("rollout_name") != inputs["rollout"]["name"]:
        raise LocalEvalUploadError("metrics.json eval_run.rollout_name does not match manifest.json")
    threshold = summary.get("pass_threshold")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        raise LocalEvalUploadError("metrics.json summary.pass_threshold must be a finite number")
    return identity, float(threshold)


def _trial_dir(run_dir: Path, rollout_id: str) -> Path:
    trial = run_dir / "rollout_trials" / rollout_id
    if trial.is_symlink() or not trial.is_dir():
        raise LocalEvalUploadError(f"rollout_trials/{rollout_id} must be a directory, not a symlink")
    return trial


def _trajectory(run_dir: Path, row: Mapping[str, Any]) -> tuple[str, Path] | None:
    name = row.get("trajectory_filename")
    if name is None:
        return None
    rollout_id = row["rollout_id"]
    relative = f"rollout_trials/{rollout_id}/{name}"
    path = _trial_dir(run_dir, rollout_id) / name
    check = check_trajectory(_regular(path, relative))
    if not check.valid:
        raise LocalEvalUploadError(
            f"{relative} is not valid ATIF ({check.describe()}); run the evaluation again (the same config "
            "and --name): osmosis eval run rewrites a trajectory that fails this check from its results log"
        )
    if check.rollout_id != rollout_id:
        raise LocalEvalUploadError(
            f"{relative} does not identify rollout_id {rollout_id} (it names {check.rollout_id!r})"
        )
    if (check.row_index, check.run_index) != (row["row_index"], row["run_index"]):
        raise LocalEvalUploadError(
            f"{relative} row/run identity does not match index.jsonl (extra.osmosis.request_extra_fields "
            f"names row {check.row_index} run {check.run_index}, index.jsonl row {row['row_index']} run "
            f"{row['run_index']})"
        )
    return relative, path


def _check_upload_path(path: str) -> None:
    if len(path) > MAX_PATH:
        raise LocalEvalUploadError(f"{path[:80]}...: upload paths may have at most {MAX_PATH} characters")
    if "\\" in path or any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise LocalEvalUploadError(f"{path!r}: a backslash or control character cannot be uploaded")
    segments = path.split("/")
    if any(s in ("", ".", "..") for s in segments) or str(PurePosixPath(path)) != path:
        raise LocalEvalUploadError(f"{path!r} is not a plain relative path")


def _artifacts(run_dir: Path, rollout_id: str) -> list[tuple[str, Path]]:
    trial = run_dir / "rollout_trials" / rollout_id
    root = trial / "artifacts"
    if not trial.exists() and not trial.is_symlink():
        return []
    _trial_dir(run_dir, rollout_id)
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise LocalEvalUploadError(
            f"rollout_trials/{rollout_id}/artifacts must be a directory, not a symlink"
        )
    if not root.exists():
        return []
    found = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            raise LocalEvalUploadError(f"rollout_trials/{rollout_id}/artifacts/{relative} is a symlink")
        if path.is_dir() or relative == "manifest.json":
            continue
        if not path.is_file():
            raise LocalEvalUploadError(
                f"rollout_trials/{rollout_id}/artifacts/{relative} is not a regular file"
            )
        upload_path = f"rollout_trials/{rollout_id}/artifacts/{relative}"
        _check_upload_path(upload_path)
        found.append((upload_path, path))
    return found


def _hashed(relative: str, path: Path) -> ImportFile:
    before = fingerprint(path)
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    if fingerprint(path) != before or size != before[2]:
        raise LocalEvalUploadError(f"{relative} changed while it was being read; run the upload again")
    return ImportFile(relative, path, size, digest.hexdigest(), before)


def _provenance(manifest: Mapping[str, Any]) -> dict[str, Any]:
    source = manifest.get("provenance") or {}
    if not isinstance(source, dict):
        raise LocalEvalUploadError("manifest.json provenance must be a JSON object")
    kept: dict[str, Any] = {}
    for key in _PROVENANCE:
        value = source.get(key)
        if value is None:
            continue
        if key == "git_dirty" and not isinstance(value, bool):
            raise LocalEvalUploadError("manifest.json provenance.git_dirty must be true or false")
        if key != "git_dirty" and (not isinstance(value, str) or not value):
            raise LocalEvalUploadError(f"manifest.json provenance.{key} must be a non-empty string")
        kept[key] = value
    return kept


def _run_description(
    manifest: Mapping[str, Any], identity: Mapping[str, Any], threshold: float, provenance: Mapping[str, Any]
) -> dict[str, Any]:
    inputs = manifest["inputs"]
    rollout = {"name": inputs["rollout"]["name"], "source_digest": inputs["rollout"]["source_digest"]}
    if "config_branch" in provenance:
        rollout["branch"] = provenance["config_branch"]
    if "config_commit_sha" in provenance:
        rollout["commit_sha"] = provenance["config_commit_sha"]
    return {
        "name": manifest["run_name"],
        "started_at": identity["started_at"],
        "completed_at": identity["completed_at"],
        "experiment_config": {
            "rollout": rollout,
            "entrypoint": inputs["rollout"]["entrypoint"],
            "model_path": inputs["model_path"],
            "dataset": {
                "name": identity["dataset_name"],
                "sha256": inputs["dataset"]["sha256"],
                "selected_source_rows": inputs["dataset"]["selected_source_rows"],
            },
        },
        "evaluation_config": {"n": inputs["n"], "pass_threshold": threshold},
    }


def build_upload_plan(run_dir: Path) -> ImportPlan:
    """Checks a finished ``eval run`` directory and lists what its import sends.

    Raises:
        LocalEvalUploadError: Naming the file (and line) at fault; an incomplete run is refused with
            "local evaluation is incomplete".

    Example:
        >>> plan = build_upload_plan(Path(".osmosis/evals/calc-1"))  # doctest: +SKIP
        >>> [f.path for f in plan.files][:2]
        ['index.jsonl', 'progress.json']
    """
    if run_dir.is_symlink() or not run_dir.is_dir():
        raise LocalEvalUploadError(f"{run_dir} is not a run directory (give the folder eval run wrote)")
    if (run_dir / "rollout_trials").is_symlink():
        raise LocalEvalUploadError(f"{run_dir / 'rollout_trials'} must be a directory, not a symlink")
    manifest, digest = _manifest(run_dir)
    progress = _progress(run_dir)
    rows = _index(run_dir)
    _check_complete(rows, progress, manifest["inputs"]["n"])
    identity, threshold = _finished_metrics(run_dir, manifest)
    selected = {"index.jsonl": run_dir / "index.jsonl", "progress.json": run_dir / "progress.json"}
    for row in rows:
        trajectory = _trajectory(run_dir, row)
        if trajectory is not None:
            selected[trajectory[0]] = trajectory[1]
        selected.update(_artifacts(run_dir, row["rollout_id"]))
    provenance = _provenance(manifest)
    return ImportPlan(
        run_dir=run_dir,
        local_run_id=manifest["local_run_id"],
        manifest_digest=digest,
        run=_run_description(manifest, identity, threshold, provenance),
        schema_versions=dict(manifest["inputs"]["versions"]),
        provenance=provenance,
        files=tuple(_hashed(relative, selected[relative]) for relative in sorted(selected)),
    )
