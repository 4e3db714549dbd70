"""A session's results log: where a new one goes, the choice between a new log and a resumed one, opening.

Every run kind on the engine (``eval``, the rubric evaluations, ``grade``, the probes) opens its log here,
so ``log_path`` / ``resume_path`` mean the same everywhere.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from osmosis_ai.errors import OptionsError
from osmosis_ai.runs.log import ResultsLog, dataset_fingerprint
from osmosis_ai.runs.observer import RunObserver

__all__ = ["LOG_DIR_ENV", "check_log_choice", "default_log_path", "open_session_log"]

LOG_DIR_ENV = "OSMOSIS_LOG_DIR"


def default_log_path(kind: str) -> Path:
    """``$OSMOSIS_LOG_DIR`` or ``~/.cache/osmosis/eval_logs``, then ``<kind>-<time>-<pid>-<random>.jsonl``."""
    folder = os.environ.get(LOG_DIR_ENV, "").strip()
    root = Path(folder) if folder else Path.home() / ".cache" / "osmosis" / "eval_logs"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return root / f"{kind}-{stamp}-{os.getpid()}-{secrets.token_hex(3)}.jsonl"


def check_log_choice(
    log_path: str | os.PathLike[str] | None, resume_path: str | os.PathLike[str] | None
) -> None:
    """Refuses a new log and a resumed one at once (cheap: checked before anything slow).

    Example:
        >>> check_log_choice("a.jsonl", "b.jsonl")
        Traceback (most recent call last):
        osmosis_ai.errors.OptionsError: Use either log_path (a new results log) or resume_path (an existing one), not both.
    """
    if log_path and resume_path:
        raise OptionsError(
            "Use either {log_path} (a new results log) or {resume_path} (an existing one), not both.",
            fields=("log_path", "resume_path"),
        )


def open_session_log(
    kind: str,
    config: Mapping[str, Any],
    dataset: Path,
    log_path: str | os.PathLike[str] | None,
    resume_path: str | os.PathLike[str] | None,
    observer: RunObserver,
    planned: Mapping[str, int] | None = None,
) -> ResultsLog:
    """Creates the session's results log, or reopens the one being resumed after checking it matches.

    ``planned`` (``{"rows": ..., "runs": ...}``) goes into a new log's header: what never ran stays countable.
    """
    check_log_choice(log_path, resume_path)
    fingerprint = dataset_fingerprint(dataset)
    if resume_path:
        log = ResultsLog.resume(Path(resume_path), config, kind=kind, dataset=fingerprint)
        observer.message(f"Resuming results log: {log.path} ({len(log.done)} runs already done)")
        if log.dropped_line is not None:
            observer.notice(
                f"Note: {log.path}:{log.dropped_line}: dropped an incomplete last line (a write cut off by "
                "the previous session's end); that run runs again."
            )
        return log
    path = Path(log_path) if log_path else default_log_path(kind)
    log = ResultsLog.create(path, config, kind=kind, dataset=fingerprint, planned=planned)
    observer.message(f"Results log: {log.path}")
    return log
