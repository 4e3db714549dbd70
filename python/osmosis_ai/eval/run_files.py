"""The per-item files of an ``osmosis eval run`` directory, and its ``logs.txt``.

Each finished item's conversation goes to ``rollout_trials/<rollout id>/trajectory.json`` (written to a
temporary name and renamed, so it is whole or absent) before the item's record reaches the results log;
the record says ``trajectory: true``. A resume that finds a record without its file simply lists no
trajectory for it. At the end of every invocation :func:`project_items` lays out the latest attempt of each
item where users read it: ``trajectories/row_<r>_run_<k>.json`` and ``artifacts/row_<r>_run_<k>/`` (hard
links to the attempt's files, copies where links fail); superseded attempts stay under ``rollout_trials/``.

``logs.txt`` (mode 0600) holds the run's milestones, every failed item and what the user's code logged,
one line each: ``<UTC time, microseconds, Z> <LEVEL> [<step>] <message>[ <sorted JSON details>]``, with
every known secret masked.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from osmosis_ai.redact import redact

__all__ = ["RunLogText", "project_items", "trajectory_name", "write_trajectory"]

TRAJECTORY = "trajectory.json"


def trajectory_name(row_index: int, run_index: int) -> str:
    return f"row_{row_index}_run_{run_index}"


def write_trajectory(
    trials: Path, record: dict[str, Any], messages: Sequence[Mapping[str, Any]] | None
) -> None:
    """Writes the item's conversation under ``trials/<rollout id>/`` and marks the record; no messages, no file.

    The document names its rollout three ways readers look for it (``session_id``, ``trajectory_id``,
    ``extra.osmosis.rollout_id``) and carries the item's indices, outcome and token count.
    """
    if not messages:
        return
    rollout_id = record["rollout_id"]
    folder = trials / rollout_id
    folder.mkdir(parents=True, exist_ok=True)
    document = {
        "session_id": rollout_id,
        "trajectory_id": f"{rollout_id}/0",
        "messages": list(messages),
        "extra": {
            "osmosis": {
                "rollout_id": rollout_id,
                "request_extra_fields": {"row_index": record["row_index"], "run_index": record["run_index"]},
                "status": record.get("status"),
                "reward": record.get("reward"),
                "error_type": record.get("error_type"),
            }
        },
        "final_metrics": {"total_tokens": record.get("tokens") or 0},
    }
    tmp = folder / f".{TRAJECTORY}.tmp"
    tmp.write_bytes(redact(orjson.dumps(document, default=str).decode()).encode())
    os.replace(tmp, folder / TRAJECTORY)
    record["trajectory"] = True


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _project_artifacts(source: Path, target: Path) -> None:
    root = source.resolve()
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if relative.parts == ("manifest.json",) or path.is_symlink() or not path.is_file():
            continue
        if not path.resolve().is_relative_to(root):
            continue
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        _link(path, destination)


def project_items(run_path: Path, records: Sequence[dict[str, Any]]) -> None:
    """Lays out each latest attempt's trajectory and artifacts; sets ``trajectory_filename`` on its record."""
    trials = run_path / "rollout_trials"
    trajectories = run_path / "trajectories"
    trajectories.mkdir(exist_ok=True)
    for record in records:
        rollout_id = record.get("rollout_id")
        if not rollout_id:
            continue
        name = trajectory_name(record["row_index"], record["run_index"])
        target = trajectories / f"{name}.json"
        source = trials / rollout_id / TRAJECTORY
        if record.get("trajectory"):
            try:
                if not (target.exists() and os.path.samefile(source, target)):
                    target.unlink(missing_ok=True)
                    _link(source, target)
                record["trajectory_filename"] = TRAJECTORY
            except FileNotFoundError:  # the run died between the file and the record
                target.unlink(missing_ok=True)
        else:
            target.unlink(missing_ok=True)
        artifacts = trials / rollout_id / "artifacts"
        projected = run_path / "artifacts" / name
        if artifacts.is_dir() and not artifacts.is_symlink():
            shutil.rmtree(projected, ignore_errors=True)
            _project_artifacts(artifacts, projected)
        elif projected.exists():
            shutil.rmtree(projected, ignore_errors=True)


class RunLogText:
    """Appends redacted lines to ``logs.txt``; :meth:`capture` also routes Python logging there."""

    def __init__(self, path: Path) -> None:
        self.path = path
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._handle = os.fdopen(fd, "a", encoding="utf-8")
        self._handler: logging.Handler | None = None

    def line(self, level: str, step: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        text = f"{stamp} {level} [{step}] {message}"
        if details:
            text += " " + orjson.dumps(details, option=orjson.OPT_SORT_KEYS, default=str).decode()
        self._handle.write(redact(text.replace("\n", "\\n")) + "\n")
        self._handle.flush()

    def capture(self) -> None:
        """Sends what the user's workflow and grader (and libraries) log through Python logging here too."""
        log = self

        class _Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                try:
                    log.line(record.levelname, record.name, record.getMessage())
                except Exception:  # a log line must never fail an item
                    self.handleError(record)

        # The root logger's level still decides (WARNING unless the user's code set another): raising it
        # here would also send every library's INFO lines to the terminal handlers.
        self._handler = _Handler(logging.INFO)
        logging.getLogger().addHandler(self._handler)

    def close(self) -> None:
        if self._handler is not None:
            logging.getLogger().removeHandler(self._handler)
            self._handler = None
        if not self._handle.closed:
            self._handle.close()
