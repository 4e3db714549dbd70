"""Strict checks of ATIF trajectory documents (the Agent Trajectory Interchange Format, versions 1.0 to 1.7).

The Rust core parses and checks a document the way the established package checks one before uploading it:
no type is coerced, every object of the format refuses fields it does not define (``extra`` objects hold
anything), and the cross-field rules hold (step ids count from 1, agent-only fields on agent steps,
observation results naming a tool call of their step, unique embedded subagent ids, ISO 8601 timestamps).
A problem is reported with the field at fault (``steps[2].tool_calls[0].arguments``). This module is the
only one that imports ``_core`` for trajectories; :mod:`osmosis_ai.rollout.trajectory` builds documents
(and :data:`EvalRunItems` builds the same document, byte for byte, from a record's results log line).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from osmosis_ai import _core

__all__ = [
    "ATIF_VERSION",
    "EvalRunItems",
    "TrajectoryCheck",
    "check_trajectory",
    "check_trajectory_files",
    "write_trajectory",
]

ATIF_VERSION: str = _core.ATIF_VERSION

EvalRunItems = _core.EvalRunItems
"""The end of one ``eval run`` invocation, in the core: ``EvalRunItems(log_path, starts, carried,
resumed_ids, model_name, version, files=None, masker=None)`` iterates over the results log lines at
``starts`` (:func:`osmosis_ai.runs.log.latest_run_starts`, a log counted from 0), giving for each ``(offset,
fields, conversation, document, index_line, written)``: where the line starts; the record's ``row_index``,
``run_index``, ``source_row_index``, ``rollout_id``, ``status``, ``reward``, ``error_type`` and ``error``
(and ``trajectory_filename`` with a conversation); whether it has one; its ATIF document's JSON text, as
:func:`osmosis_ai.eval.run_files.trajectory_document` and ``trajectory_json`` make it; its ``index.jsonl``
line (``resumed`` when its rollout is in ``resumed_ids``); and whether the core wrote the document itself.
With ``files`` (``(rollout_trials_dir, trajectories_dir)``) the core writes each document it makes, masked
by ``masker`` (:func:`osmosis_ai.redact.masker`), as :func:`write_trajectory` does with
:func:`~osmosis_ai.redact.redact_bytes` (``written``, and no document returned), except one whose masked
text holds ``@`` and ``://`` (a URL's user info is Python's to hide) or whose rollout id or indices are
not plain text and integers. ``fields`` is None for a line
that is not one JSON object (parse it in Python, which says what is wrong); the document is None for a
rollout in ``carried`` and, like the index line, for what only Python writes byte for byte (uncommon
values: a float outside ``[1e-4, 1e15)``, a message's own timestamp, ...)."""


def write_trajectory(trial_dir: str, target: str, data: bytes) -> None:
    """Writes ``data`` to ``<trial_dir>/trajectory.json`` (making the folder) and hard-links ``target`` to it,
    replacing an earlier file there (a copy where hard links fail); one call, without holding the GIL.

    Raises:
        OSError: A file could not be written (naming ``trial_dir``).
    """
    _core.write_trajectory(trial_dir, target, data)


@dataclass(frozen=True)
class TrajectoryCheck:
    """The outcome of checking one trajectory document.

    Attributes:
        valid: Whether the document is valid ATIF.
        rollout_id: The rollout a valid document names (``extra.osmosis.rollout_id``, else ``session_id``,
            else the part of ``trajectory_id`` before its first ``/``), or None.
        row_index: ``extra.osmosis.request_extra_fields.row_index`` of a valid document, when an integer.
        run_index: Likewise ``run_index``.
        field: The field at fault when invalid (``""``: the document as a whole).
        problem: What is wrong when invalid (or why the file could not be read).
        missing: The file does not exist.
    """

    valid: bool
    rollout_id: str | None = None
    row_index: int | None = None
    run_index: int | None = None
    field: str | None = None
    problem: str | None = None
    missing: bool = False

    def describe(self) -> str:
        """The problem as one phrase naming its field (``steps[1].source: must be one of ...``)."""
        if self.valid:
            return "valid ATIF"
        return f"{self.field}: {self.problem}" if self.field else str(self.problem)


def _outcome(raw: tuple[str, Any, Any, Any]) -> TrajectoryCheck:
    status, first, second, third = raw
    if status == "valid":
        return TrajectoryCheck(True, rollout_id=first, row_index=second, run_index=third)
    if status == "invalid":
        return TrajectoryCheck(False, field=first, problem=second)
    return TrajectoryCheck(False, problem=second, missing=first == "not_found")


def check_trajectory(document: bytes | str | Mapping[str, Any]) -> TrajectoryCheck:
    """Checks one ATIF document: JSON text (bytes or str) or an already built mapping.

    Example:
        >>> check_trajectory(b'{"agent": {"name": "a", "version": "1"}, "steps": []}').describe()
        'steps: must hold at least one step'
    """
    if isinstance(document, Mapping):
        try:
            # Not orjson: it would write NaN as null, and a NaN where a number belongs must not pass.
            document = json.dumps(document, allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            return TrajectoryCheck(False, field="", problem=f"is not JSON data ({exc})")
    elif isinstance(document, str):
        document = document.encode()
    return _outcome(_core.check_atif(document))


def check_trajectory_files(paths: Sequence[str | os.PathLike[str]]) -> list[TrajectoryCheck]:
    """Reads and checks each file (in the core, without holding the GIL); one result per path, in order.

    Example:
        >>> [c.valid for c in check_trajectory_files(["run/rollout_trials/ab12/trajectory.json"])]  # doctest: +SKIP
        [True]
    """
    return [_outcome(raw) for raw in _core.check_atif_files([os.fspath(p) for p in paths])]
