"""``manifest.json`` of an ``osmosis eval run`` directory: the resolved-input lock and the run's provenance.

The lock (``inputs``) is what makes two invocations' results one run: the model, the dataset's bytes and
the selected source rows, the runs per row, the rollout (name, entrypoint, a digest of its source files),
the ``[env]`` mapping, the secret names (never values), both timeouts and the format versions. Reopening a
run whose lock differs is refused, naming each changed key. Not in the lock, so changing them never blocks
a resume: the run name, output path, concurrency, ``pass_threshold``, display flags, SDK version, branch and
commit (provenance only). The manifest is written once, when the run is created.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from osmosis_ai.errors import RunError

__all__ = ["VERSIONS", "file_sha256", "open_manifest", "resolved_inputs", "source_digest"]

VERSIONS = {"rollout_protocol": "0.3", "dataset_normalization": 1, "state_schema": 1}
_SKIP_DIRS = frozenset(
    {"__pycache__", ".git", ".venv", "venv", "dist", "build", "node_modules", ".pytest_cache", ".ruff_cache"}
)


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _skipped(parts: tuple[str, ...]) -> bool:
    return any(p in _SKIP_DIRS or p == "uv.lock" or p.endswith(".egg-info") for p in parts)


def source_digest(rollout_dir: Path, output_root: Path | None = None) -> str:
    """SHA-256 over the rollout's files in path order (relative path bytes, then file bytes).

    Build and cache directories (``__pycache__``, ``.venv``, ``node_modules``...), ``uv.lock``,
    ``*.egg-info`` and an output root inside the rollout are left out. A directory symlink or a broken
    symlink inside the rollout is refused: the digest must cover what the run imports.

    Example:
        >>> len(source_digest(Path("rollouts/calc")))  # doctest: +SKIP
        64
    """
    rollout_dir = rollout_dir.resolve()
    if output_root is not None and output_root.resolve() == rollout_dir:
        raise RunError(
            f"{{output}} {output_root}: the output root cannot be the rollout directory itself",
            fields=("output",),
        )
    inside = None
    if output_root is not None and output_root.resolve().is_relative_to(rollout_dir):
        inside = output_root.resolve().relative_to(rollout_dir).parts
    files: list[tuple[str, Path]] = []
    for path in rollout_dir.rglob("*"):
        parts = path.relative_to(rollout_dir).parts
        if _skipped(parts) or (inside is not None and parts[: len(inside)] == inside):
            continue
        if path.is_symlink() and (path.is_dir() or not path.exists()):
            raise RunError(f"{path}: a directory or broken symlink inside the rollout cannot be digested")
        if path.is_file():
            files.append(("/".join(parts), path))
    digest = hashlib.sha256()
    for relative, path in sorted(files):
        digest.update(relative.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def resolved_inputs(
    config: Any,
    settings: Mapping[str, Any],
    dataset: Path,
    selection: Iterable[int],
    rollout_dir: Path,
    out_root: Path,
    eval_fns: list[str],
    base_url: str | None = None,
) -> dict[str, Any]:
    """The run's input lock (``manifest.json`` ``inputs``) from the loaded config and the command's choices.

    ``settings`` holds ``n`` and the two timeouts as the command interpreted ``[evaluation]``; ``selection``
    the selected source rows; ``eval_fns`` a 0.2 loop's scorer (it decides the rewards, so it is locked too);
    ``base_url`` the ``--base-url`` given. The endpoint is locked with the model: the base URL the model's
    calls go to (credentials masked), recorded when one is set (``--base-url`` or the provider's
    ``*_BASE_URL`` variable), so a resume against another server is refused instead of mixing two servers'
    results in one run.
    """
    from osmosis_ai.eval.run_rows import compact_selector
    from osmosis_ai.llm.providers import base_url_from_env, provider_of
    from osmosis_ai.redact import safe_url

    inputs: dict[str, Any] = {
        "model_path": config.experiment.model_path,
        "dataset": {"sha256": file_sha256(dataset), "selected_source_rows": compact_selector(selection)},
        "n": settings["n"],
        "rollout": {
            "name": config.experiment.rollout,
            "entrypoint": config.experiment.entrypoint,
            "source_digest": source_digest(rollout_dir, out_root),
        },
        "env": dict(sorted(config.env.items())),
        "secret_names": sorted(config.secrets),
        "timeouts": {
            "agent_timeout_sec": settings["agent_timeout"],
            "grader_timeout_sec": settings["grader_timeout"],
        },
        "versions": VERSIONS,
    }
    if eval_fns:
        inputs["eval_fns"] = eval_fns
    endpoint = base_url or base_url_from_env(provider_of(config.experiment.model_path))
    if endpoint:  # absent, not null, without one: manifests written before this key still resume
        inputs["base_url"] = safe_url(endpoint.rstrip("/"))
    return inputs


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return "; ".join(f"{k}: {json.dumps(old.get(k))} -> {json.dumps(new.get(k))}" for k in keys)


def open_manifest(
    run_path: Path, run_name: str, inputs: Mapping[str, Any], provenance: Mapping[str, Any]
) -> dict[str, Any]:
    """The run's manifest: read and checked against ``inputs`` when it exists, else written.

    Raises:
        RunError: The manifest is unreadable, or its lock differs from ``inputs`` (the message lists every
            changed key with its old and new value and suggests ``fresh``).
    """
    from osmosis_ai._files import write_json_atomic

    path = run_path / "manifest.json"
    inputs = json.loads(json.dumps(inputs))  # the form it takes on disk (tuples -> lists), for the comparison
    if path.exists():
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RunError(
                f"{path}: unreadable ({exc}); start a new run with {{fresh}}", fields=("fresh",)
            ) from exc
        if (
            not isinstance(manifest, dict)
            or manifest.get("schema_version") != 1
            or not isinstance(manifest.get("inputs"), dict)
        ):
            raise RunError(
                f"{path}: not a version 1 run manifest; start a new run with {{fresh}}", fields=("fresh",)
            )
        if manifest["inputs"] != inputs:
            raise RunError(
                f"Cannot resume run '{run_name}': its inputs changed ({_changes(manifest['inputs'], inputs)}). "
                "Pass {fresh} to archive it and start over, or use another {name}.",
                fields=("fresh", "name"),
            )
        return manifest
    manifest = {
        "schema_version": 1,
        "local_run_id": uuid.uuid4().hex,
        "run_name": run_name,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z"),
        "inputs": inputs,
        "provenance": {k: v for k, v in provenance.items() if v is not None},
    }
    write_json_atomic(path, manifest)
    return manifest
