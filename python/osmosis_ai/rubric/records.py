"""JSONL records for ``eval-rubric`` and ``eval rubric``.

All file reading goes through :func:`read_jsonl` so it can later be pointed at the Rust dataset engine.
Every error names the file, the 1-based line and the field, and says what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from osmosis_ai.errors import (
    DatasetFormatError,
    DatasetParseError,
    DatasetValidationError,
    RubricRecordsError,
)

__all__ = [
    "RecordSource",
    "RubricRecord",
    "RubricRecordLoader",
    "load_all_records",
    "load_chat_records",
    "load_rubric_records",
    "read_jsonl",
    "record_identity",
]


@dataclass
class RubricRecord:
    """One record to judge, with where it came from."""

    line: int
    data: dict[str, Any]
    solution_str: str
    label: str
    record_id: str
    ground_truth: str | None = None
    original_input: str | None = None
    metadata: dict[str, Any] | None = None
    extra_info: dict[str, Any] = field(default_factory=dict)
    score_min: float | None = None
    score_max: float | None = None
    rubric_id: str | None = None
    conversation_id: str | None = None


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yields ``(line_number, object)`` for every non-blank line of a JSONL file.

    Raises:
        DatasetParseError: A line is not UTF-8, not JSON, or not a JSON object.

    Example:
        >>> for line, row in read_jsonl(Path("records.jsonl")):  # doctest: +SKIP
        ...     print(line, row["solution_str"])
    """
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                value = None
            if not isinstance(value, dict):
                if not raw.strip():
                    continue
                value = _object_line(path, number, raw)
            yield number, value


def _object_line(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    """The JSON object of a non-blank line the fast readers did not take: what orjson refuses and json
    takes (NaN, integers past 64 bits, lone surrogates), else the error that names the line."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = _parse_line(path, number, raw)
    if not isinstance(value, dict):
        raise DatasetParseError(
            f"Expected JSON object on line {number} of '{path}', got {type(value).__name__}",
            path=str(path),
            line=number,
        )
    return value


def _parse_line(path: Path, number: int, raw: bytes) -> Any:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetParseError(
            f"Invalid UTF-8 on line {number} of '{path}': byte 0x{raw[exc.start]:02x} at column {exc.start + 1}",
            path=str(path),
            line=number,
        ) from None
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetParseError(
            f"Invalid JSON on line {number} of '{path}': {exc.msg} (column {exc.colno})",
            path=str(path),
            line=number,
        ) from None
    except ValueError as exc:  # valid JSON Python will not build: an integer past its digit limit
        raise DatasetParseError(
            f"Invalid JSON on line {number} of '{path}': {exc}", path=str(path), line=number
        ) from None


def _check_path(path: Path) -> None:
    if not path.exists():
        raise DatasetFormatError(f"Data path '{path}' does not exist.", path=str(path))
    if path.is_dir():
        raise DatasetFormatError(f"Expected a JSONL file but received directory '{path}'.", path=str(path))


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _bad(path: Path, line: int, key: str, expected: str, value: Any) -> DatasetValidationError:
    got = _kind(value)
    return DatasetValidationError(
        f"{path}:{line}: field '{key}' must be {expected}, got {got}", path=str(path), line=line, field=key
    )


def _optional_text(path: Path, line: int, data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None or isinstance(value, str):
        return value
    raise _bad(path, line, key, "a string", value)


def _optional_number(path: Path, line: int, data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(path, line, key, "a number", value)
    return float(value)


def _optional_object(path: Path, line: int, data: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None or isinstance(value, dict):
        return value
    raise _bad(path, line, key, "a JSON object", value)


def record_identity(data: Mapping[str, Any], index: int) -> tuple[str, str]:
    """``(label, record id)`` of a record at 1-based ``index``: its ``conversation_id`` (else
    ``record[<index>]``), and its ``id`` (else the label): the one numbering of rubric records."""
    conversation = data.get("conversation_id")
    label = (
        conversation.strip() if isinstance(conversation, str) and conversation.strip() else f"record[{index}]"
    )
    raw_id = data.get("id")
    if isinstance(raw_id, str) and raw_id.strip():
        return label, raw_id.strip()
    return label, (str(raw_id) if raw_id is not None else label)


def _label_text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _record(path: Path, line: int, data: dict[str, Any], index: int) -> RubricRecord:
    """Checks one ``eval-rubric`` record and builds it; ``index`` (1-based) names an unlabelled one."""
    label, record_id = record_identity(data, index)
    solution = data.get("solution_str")
    if not isinstance(solution, str) or not solution.strip():
        got = "an empty string" if isinstance(solution, str) else _kind(solution)
        raise DatasetValidationError(
            f"Record '{label}' must include a non-empty 'solution_str' string (line {line} of '{path}', got {got})",
            path=str(path),
            line=line,
            field="solution_str",
        )
    extra_info = _optional_object(path, line, data, "extra_info") or {}
    original = _optional_text(path, line, data, "original_input")
    if original is None and isinstance(extra_info.get("original_input"), str):
        original = extra_info["original_input"]
    return RubricRecord(
        line=line,
        data=data,
        solution_str=solution,
        label=label,
        record_id=record_id,
        ground_truth=_optional_text(path, line, data, "ground_truth"),
        original_input=original,
        metadata=_optional_object(path, line, data, "metadata"),
        extra_info=extra_info,
        score_min=_optional_number(path, line, data, "score_min"),
        score_max=_optional_number(path, line, data, "score_max"),
        # Labels only: a non-string id never matched a rubric and is not an error of the record.
        rubric_id=_label_text(data.get("rubric_id")),
        conversation_id=_label_text(data.get("conversation_id")),
    )


def load_rubric_records(path: Path, rubric_id: str) -> tuple[list[RubricRecord], int, int]:
    """Records of ``rubric_id`` (matched case-insensitively) from an ``eval-rubric`` JSONL file.

    Only matching records are validated (the established CLI rejected the whole file for a bad record of
    another rubric).

    Returns:
        ``(records, other_rubric_count, no_rubric_id_count)``.

    Raises:
        DatasetFormatError: The file is missing, empty or malformed, or a matching record is invalid.

    Example:
        >>> records, _, _ = load_rubric_records(Path("records.jsonl"), "helpfulness")  # doctest: +SKIP
    """
    source = RecordSource(path, rubric_id)
    _, others, unlabelled = source.scan()
    return list(source), others, unlabelled


def load_all_records(path: Path) -> list[RubricRecord]:
    """Every record of an ``eval-rubric`` JSONL file, whatever its ``rubric_id``, each checked.

    Raises:
        DatasetFormatError: The file is missing, empty or malformed, or a record is invalid.

    Example:
        >>> {r.rubric_id for r in load_all_records(Path("records.jsonl"))}  # doctest: +SKIP
        {'helpfulness', 'tone'}
    """
    _check_path(path)
    records = [_record(path, line, data, index) for index, (line, data) in enumerate(read_jsonl(path), 1)]
    if not records:
        raise DatasetFormatError(f"No JSON records found in '{path}'.", path=str(path))
    return records


class RubricRecordLoader:
    """Loads ``eval-rubric`` JSONL files (the established ``DatasetLoader().load(path)`` shape).

    Example:
        >>> records = RubricRecordLoader().load("records.jsonl")  # doctest: +SKIP
    """

    def load(self, path: str | Path) -> list[RubricRecord]:
        """Every record of the file; see :func:`load_all_records`.

        Raises:
            RubricRecordsError: A :class:`DatasetFormatError` that is also a ``CLIError``, as the
                established loader raised.
        """
        try:
            return load_all_records(Path(path))
        except DatasetFormatError as exc:
            raise RubricRecordsError(str(exc), path=exc.path, line=exc.line, field=exc.field) from exc


def _last_assistant_text(messages: Any) -> str | None:
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, list):
            parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
            content = "".join(part for part in parts if isinstance(part, str))
        return content if isinstance(content, str) and content.strip() else None
    return None


# The fields that name a chat record (see _chat_label): all the results document reads of its rows.
_CHAT_LABEL_FIELDS = ["id", "conversation_id"]


def _chat_label(data: Mapping[str, Any], index: int) -> str:
    """The label (and id) of a chat record at 1-based ``index``: its ``id``, else its ``conversation_id``
    (as text), else ``record[<index>]``."""
    raw_label = data.get("id", data.get("conversation_id"))
    text = str(raw_label).strip() if raw_label is not None else ""
    return text or f"record[{index}]"


def _chat_record(path: Path, line: int, data: dict[str, Any], index: int) -> RubricRecord:
    """Checks one ``eval rubric`` record and builds it; ``index`` (1-based) names an unlabelled one."""
    candidate = _last_assistant_text(data.get("messages"))
    if candidate is None:
        legacy = data.get("solution_str")
        if not isinstance(legacy, str) or not legacy.strip():
            raise DatasetValidationError(
                f"{path}:{line}: no candidate text: expected a non-empty last 'assistant' message in "
                "'messages' or a non-empty 'solution_str' string",
                path=str(path),
                line=line,
                field="messages",
            )
        candidate = legacy
    label = _chat_label(data, index)
    ground_truth, original_input = data.get("ground_truth"), data.get("original_input")
    metadata = data.get("metadata")
    # The checks' usual outcome at a glance (a session builds a record per row); anything else is named
    # by them.
    if not (
        (ground_truth is None or type(ground_truth) is str)
        and (original_input is None or type(original_input) is str)
        and (metadata is None or type(metadata) is dict)
    ):
        ground_truth = _optional_text(path, line, data, "ground_truth")
        original_input = _optional_text(path, line, data, "original_input")
        metadata = _optional_object(path, line, data, "metadata")
    # By position, in RubricRecord's order: line, data, solution_str, label, record_id, ground_truth, ...
    return RubricRecord(line, data, candidate, label, label, ground_truth, original_input, metadata)


def load_chat_records(path: Path) -> list[RubricRecord]:
    """Records for ``eval rubric``: the candidate is the last assistant message, else ``solution_str``.

    Raises:
        DatasetFormatError: The file is missing or empty, or a record has no candidate text.

    Example:
        >>> [r.solution_str for r in load_chat_records(Path("chats.jsonl"))]  # doctest: +SKIP
        ['Hello!']
    """
    source = RecordSource(path)
    source.scan()
    return list(source)


@dataclass(frozen=True)
class RecordSource:
    """The records a rubric session judges, read from their file whenever they are needed, never all held.

    ``rubric_id`` set: the ``eval-rubric`` records of that rubric (matched case-insensitively); None: the
    chat records of ``eval rubric``. Picklable, so a remote worker gets the source and not the records.

    Example:
        >>> source = RecordSource(Path("records.jsonl"), "helpfulness")  # doctest: +SKIP
        >>> count, others, unlabelled = source.scan()  # doctest: +SKIP
        >>> [r.label for r in source][:1]  # doctest: +SKIP
        ['record[1]']
    """

    path: Path
    rubric_id: str | None = None

    def _matching(self, skipped: list[int] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(line, row)`` of every record of the session; ``skipped`` counts [other rubrics, unlabelled]."""
        if self.rubric_id is None:
            yield from read_jsonl(self.path)
            return
        wanted = self.rubric_id.strip().lower()
        for line, data in read_jsonl(self.path):
            rid = data.get("rubric_id")
            if isinstance(rid, str) and rid.strip().lower() == wanted:
                yield line, data
            elif skipped is not None:
                skipped[0 if isinstance(rid, str) and rid.strip() else 1] += 1

    def record(self, index: int, data: dict[str, Any], line: int = 0) -> RubricRecord:
        """The record at ``index`` (from 0) built from its row (a row :meth:`scan` checked: no error)."""
        build = _chat_record if self.rubric_id is None else _record
        return build(self.path, line, data, index + 1)

    def __iter__(self) -> Iterator[RubricRecord]:
        build = _chat_record if self.rubric_id is None else _record
        for index, (line, data) in enumerate(self._matching(), start=1):
            yield build(self.path, line, data, index)  # self.record, without its call per record

    def chat_labels(self) -> Iterator[str]:
        """The label of each chat record (``rubric_id`` None), in order, for a reader that needs no more
        of them (the ``eval rubric -o`` document): only the fields that name a record are built, by the
        Rust field reader; a line it does not take is read the whole way (which raises naming a bad line).
        The records are not checked again: :meth:`scan` did before the session.
        """
        from osmosis_ai import _core

        if self.rubric_id is not None:
            raise ValueError("chat_labels reads chat records (a source without rubric_id)")
        lines = _core.LogRecordFields(str(self.path), _CHAT_LABEL_FIELDS, dataset=True)
        for index, (line, named) in enumerate(lines, start=1):
            if not isinstance(named, dict):
                named = _object_line(self.path, line, named)
            yield _chat_label(named, index)

    def scan(self) -> tuple[int, int, int]:
        """Checks every record of the session, holding none.

        Returns:
            ``(records, other_rubric_count, no_rubric_id_count)`` (the last two 0 for chat records).

        Raises:
            DatasetFormatError: The file is missing, empty or malformed, or a record is invalid.
        """
        _check_path(self.path)
        skipped = [0, 0]
        count = 0
        if self.rubric_id is None:
            count = self._scan_chat()
        else:
            for line, data in self._matching(skipped):
                self.record(count, data, line)
                count += 1
        if count + skipped[0] + skipped[1] == 0:
            raise DatasetFormatError(f"No JSON records found in '{self.path}'.", path=str(self.path))
        return count, skipped[0], skipped[1]

    def _scan_chat(self) -> int:
        """:meth:`scan` of chat records: the Rust core checks each line without building it, and hands
        back the lines it cannot vouch for; those are read here the whole way (a bad one raises naming its
        file, line and field). Returns the records."""
        from osmosis_ai import _core

        count, unsure = _core.scan_chat_records(str(self.path))
        if unsure:
            numbers = memoryview(unsure).cast("Q")
            with self.path.open("rb") as handle:
                for at in range(0, len(numbers), 3):
                    line, index, offset = numbers[at : at + 3]
                    handle.seek(offset)
                    _chat_record(self.path, line, _object_line(self.path, line, handle.readline()), index)
        return count
