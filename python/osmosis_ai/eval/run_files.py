"""The per-item files of an ``osmosis eval run`` directory, and its ``logs.txt``.

Each finished item's conversation is part of its record in the results log (``messages``), so the log
stays the one thing a crash can leave half-written. At the end of every invocation :func:`project_items`
lays out the latest attempt of each item where users read it: ``trajectories/row_<r>_run_<k>.json``, an
ATIF document (:mod:`osmosis_ai.rollout.trajectory`), written for the items this invocation ran and for
each carried item whose file is missing or fails the strict ATIF check or names another rollout, row or run
(so a directory an older version wrote, with ``messages`` instead of ATIF steps, gets ATIF files on its
next invocation). Files are written in place, not renamed into place: a rename per file cost more CPU than
the rest of the item, and a projection that died part-way is redone whole by the next invocation, which
finds its ``.projecting`` marker
and ``artifacts/row_<r>_run_<k>/`` (hard links to what the attempt wrote under
``rollout_trials/<rollout id>/artifacts/``, copies where links fail). A file per item written while the
run goes would cost a directory and a file per rollout on the hot path; superseded attempts' artifacts
stay under ``rollout_trials/``, their conversations in the log.

``logs.txt`` (mode 0600) holds the run's milestones, every failed item and what the user's code logged,
one line each: ``<UTC time, microseconds, Z> <LEVEL> [<step>] <message>[ <sorted JSON details>]``, with
every known secret masked.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import shutil
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from osmosis_ai._version import __version__ as PACKAGE_VERSION
from osmosis_ai.atif import EvalRunItems, check_trajectory_files, write_trajectory
from osmosis_ai.redact import masker, redact, redact_bytes
from osmosis_ai.rollout.trajectory import build_trajectory, trajectory_json
from osmosis_ai.runs.log import latest_run_starts, run_record_at

__all__ = ["LogSource", "RunLogText", "project_items", "trajectory_document"]


def _conversation(record: Mapping[str, Any]) -> Any:
    """The messages a record's trajectory is built from (none when its workflow turned the trajectory off)."""
    if record.get("trajectory") is False:
        return None
    return record.get("messages") or record.get("final_messages")


def trajectory_document(record: Mapping[str, Any], *, model_name: str | None = None) -> dict[str, Any] | None:
    """The ATIF document of one ``osmosis eval run`` record of the results log, or None without a conversation.

    The record gives the conversation (``messages``; a 0.2 agent loop's ``final_messages``), the bridge's
    per-call metrics (``llm_calls``; a 0.2 loop's ``prompt_tokens`` / ``completion_tokens`` totals), and the
    context: ``label``, ``reward``, the workflow's ``metrics``, the row's ``request_metadata``, ``status``,
    ``error_type`` and the request's extra fields (``row_index`` and ``run_index`` unless the record has
    ``request_extra_fields``).

    Example:
        >>> doc = trajectory_document({"rollout_id": "r1", "row_index": 0, "run_index": 1,
        ...                            "messages": [{"role": "user", "content": "hi"}]})
        >>> doc["schema_version"], doc["extra"]["osmosis"]["request_extra_fields"]
        ('ATIF-v1.7', {'row_index': 0, 'run_index': 1})
    """
    messages = _conversation(record)
    if not messages:
        return None
    extra_fields = record.get("request_extra_fields")
    if extra_fields is None:
        extra_fields = {"row_index": record["row_index"], "run_index": record["run_index"]}
    totals = None
    if not record.get("llm_calls") and record.get("prompt_tokens") is not None:
        totals = {
            "total_prompt_tokens": record["prompt_tokens"],
            "total_completion_tokens": record.get("completion_tokens") or 0,
        }
    context = {
        "label": record.get("label"),
        "reward": record.get("reward"),
        "sample_metrics": record.get("metrics") or None,
        "request_metadata": record.get("request_metadata"),
        "request_extra_fields": extra_fields,
        "status": record.get("status"),
        "error_type": record.get("error_type"),
    }
    return build_trajectory(
        messages,
        rollout_id=record["rollout_id"],
        context=context,
        llm_calls=record.get("llm_calls") or (),
        final_metrics=totals,
        model_name=model_name,
    )


def _link(source: Path | str, target: Path | str) -> None:
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


def _write_file(path: str, data: bytes) -> None:
    # os-level calls: open() adds an fstat, an ioctl and an lseek per file.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _sound(trials: str, record: Mapping[str, Any]) -> bool:
    """Whether a carried rollout's trajectory file is valid ATIF naming its rollout, row and run."""
    (check,) = check_trajectory_files([f"{trials}/{record['rollout_id']}/trajectory.json"])
    return check.valid and (check.rollout_id, check.row_index, check.run_index) == (
        record["rollout_id"],
        record["row_index"],
        record["run_index"],
    )


class LogSource:
    """The latest lines of an ``eval run`` results log (:func:`osmosis_ai.runs.log.latest_run_starts`)."""

    def __init__(self, path: Path, runs_per_row: int | None) -> None:
        self.path = path
        self.base, self.starts = latest_run_starts(path, runs_per_row)

    def record(self, start: int) -> dict[str, Any]:
        """A line's whole record, parsed in Python (``trajectory_filename`` set when it has a conversation)."""
        record = run_record_at(self.path, start, self.base)
        if _conversation(record):
            record["trajectory_filename"] = "trajectory.json"
        return record


def _artifacts_of(
    run_path: Path,
    record: Mapping[str, Any],
    rollout_id: Any,
    with_artifacts: set[str],
    carried: Collection[str],
) -> None:
    """Projects ``artifacts/row_<r>_run_<k>/`` of one item (run with attempts that wrote artifacts only)."""
    name = f"row_{record['row_index']}_run_{record['run_index']}"
    if rollout_id in with_artifacts:
        artifacts = f"{run_path}/rollout_trials/{rollout_id}/artifacts"
        if not os.path.islink(artifacts):
            shutil.rmtree(f"{run_path}/artifacts/{name}", ignore_errors=True)
            _project_artifacts(Path(artifacts), run_path / "artifacts" / name)
    elif rollout_id not in carried:
        shutil.rmtree(f"{run_path}/artifacts/{name}", ignore_errors=True)


def _python_document(record: Mapping[str, Any], model_name: Any) -> bytes:
    document = trajectory_document(record, model_name=model_name)
    assert document is not None  # the record has a conversation (checked by the caller)
    return trajectory_json(document)


def project_items(
    run_path: Path,
    source: LogSource,
    carried: Collection[str],
    *,
    model_name: str | None = None,
    index_line: Callable[[dict[str, Any], bool], bytes],
) -> Iterator[tuple[dict[str, Any], bytes]]:
    """Lays out each latest attempt's trajectory and artifacts, yielding its record once done (with
    ``trajectory_filename`` set where it has one) and its ``index.jsonl`` line: records stream through,
    none is kept. The core reads each line (:data:`osmosis_ai.atif.EvalRunItems`: the fields the end of
    a run reads, the document and the index line); Python parses the whole record where the core leaves
    something to it.

    The trajectory goes where the established tool has it, ``rollout_trials/<rollout id>/trajectory.json``
    (``trajectory_filename`` is relative to that folder), and its copy ``trajectories/row_<r>_run_<k>.json``
    is a hard link to it. ``carried`` holds the rollout ids an earlier invocation finished (and projected,
    unless it died first); ``model_name`` is the run's model (each document's ``agent.model_name``);
    ``index_line(record, resumed)`` writes an index line the core left to Python.
    """
    # Plain strings, not Path objects: this loop runs once per item of the run.
    folder = f"{run_path}/trajectories"
    trials = f"{run_path}/rollout_trials"
    os.makedirs(folder, exist_ok=True)
    marker = f"{folder}/.projecting"
    resumed_ids = carried
    if os.path.lexists(marker):
        carried = ()  # the last projection died part-way: any carried file may be torn, rewrite them all
    else:
        _write_file(marker, b"")
    # Every attempt with a trajectory has a folder here; those with an artifacts/ folder wrote artifacts.
    with_artifacts = {d for d in os.listdir(trials) if os.path.isdir(f"{trials}/{d}/artifacts")}
    # The core reads records numbered from 0 (every eval run log) for a model named by text (or none), and
    # writes the documents it makes itself.
    reads: Iterator[tuple[int, dict[str, Any] | None, bool, bytes | None, bytes | None, bool]]
    if source.base == 0 and (model_name is None or type(model_name) is str):
        path = os.fspath(source.path)
        files = (trials, folder)
        reads = EvalRunItems(
            path, source.starts, carried, resumed_ids, model_name, PACKAGE_VERSION, files, masker()
        )
    else:
        reads = ((start, None, False, None, None, False) for start in source.starts)
    for start, fields, conversation, document, line, written in reads:
        full = None  # the whole record, parsed in Python where the core leaves something to it
        if fields is None:  # the core left the line to Python
            fields = full = source.record(start)
            conversation = bool(_conversation(full))
        record = fields
        rollout_id = record.get("rollout_id")
        if not written:  # a document the core wrote is done; anything else is done here
            target = f"{folder}/row_{record['row_index']}_run_{record['run_index']}.json"
            if not conversation:
                if rollout_id not in carried and os.path.lexists(target):
                    os.unlink(target)
            elif document is not None or not (
                rollout_id in carried and os.path.exists(target) and _sound(trials, record)
            ):
                if document is None:
                    full = full or source.record(start)
                    document = _python_document(full, model_name)
                write_trajectory(f"{trials}/{rollout_id}", target, redact_bytes(document))
        if with_artifacts:
            _artifacts_of(run_path, record, rollout_id, with_artifacts, carried)
        if line is None:
            line = index_line(full or source.record(start), rollout_id in resumed_ids)
        yield record, line
    os.unlink(marker)


class RunLogText:
    """Appends redacted lines to ``logs.txt``; :meth:`capture` also routes Python logging there.

    Args:
        path: The file (created 0600).
        echo: Also called with each line as written (``eval run --verbose`` prints them).
    """

    def __init__(self, path: Path, echo: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.echo = echo
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._handle = os.fdopen(fd, "a", encoding="utf-8")
        self._handler: logging.Handler | None = None

    def line(self, level: str, step: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        text = f"{stamp} {level} [{step}] {message}"
        if details:
            text += " " + orjson.dumps(details, option=orjson.OPT_SORT_KEYS, default=str).decode()
        text = redact(text.replace("\n", "\\n"))
        self._handle.write(text + "\n")
        self._handle.flush()
        if self.echo is not None:
            self.echo(text)

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
