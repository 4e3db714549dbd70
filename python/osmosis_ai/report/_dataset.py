"""The dataset rows behind a results log: each row's ground truth, prompt and own fields (``topic``, ...).

A results log names its dataset file in its header (path, size, BLAKE2b fingerprint) but does not copy
the rows. When that file is still there and unchanged, row ``i`` of the log is row ``i`` of the file;
when it changed or moved (``--dataset`` points at a copy), rows are matched by content (the log's
``row_key``). Rows that match nothing are counted, and the page says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DatasetRows", "field_values", "load_dataset_rows"]

# Columns that are the row's text (shown in the card), not a field to group by.
TEXT_COLUMNS = ("system_prompt", "user_prompt", "prompt", "messages", "ground_truth", "solution_str", "label")
_MAX_FIELD_CHARS = 120
_MAX_FIELDS = 40


@dataclass
class DatasetRows:
    """What the page knows about the dataset rows of a log.

    Attributes:
        path: The dataset file read, or None.
        matched_by: ``"position"`` (same file, same bytes), ``"content"`` (row keys) or None.
        rows: ``{row_index: {"truth", "prompt", "fields"}}`` for the rows found.
        note: Why rows are missing (file gone, changed, unreadable), or None.
    """

    path: str | None = None
    matched_by: str | None = None
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    note: str | None = None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    import orjson

    return orjson.dumps(value, default=str).decode()


def field_values(row: Mapping[str, Any]) -> dict[str, str]:
    """The row's scalar fields (and those of a ``metadata`` object, as ``metadata.x``) as short texts."""
    out: dict[str, str] = {}
    sources: list[tuple[str, Mapping[str, Any]]] = [("", row)]
    metadata = row.get("metadata")
    if isinstance(metadata, Mapping):
        sources.append(("metadata.", metadata))
    for prefix, source in sources:
        for name, value in source.items():
            if prefix == "" and (name in TEXT_COLUMNS or name == "metadata"):
                continue
            if value is None or isinstance(value, (dict, list)) or len(out) >= _MAX_FIELDS:
                continue
            text = value if isinstance(value, str) else _text(value)
            out[f"{prefix}{name}"] = text[:_MAX_FIELD_CHARS] if text else ""
    return out


def _prompt(row: Mapping[str, Any]) -> str | None:
    for name in ("user_prompt", "prompt", "solution_str"):
        if isinstance(text := row.get(name), str):
            return text
    messages = row.get("messages")
    if isinstance(messages, list):
        users = [m.get("content") for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
        return _text(users[-1]) if users else None
    return None


def _entry(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"truth": _text(row.get("ground_truth")), "prompt": _prompt(row), "fields": field_values(row)}


def _fingerprint_matches(path: Path, recorded: Mapping[str, Any]) -> bool:
    from osmosis_ai.runs.log import dataset_fingerprint

    if "fingerprint" not in recorded:
        return False
    try:
        return bool(dataset_fingerprint(path)["fingerprint"] == recorded["fingerprint"])
    except OSError:
        return False


def load_dataset_rows(
    header: Mapping[str, Any],
    keys: Mapping[str, int],
    indices: Iterable[int],
    override: str | os.PathLike[str] | None = None,
    results_path: str | os.PathLike[str] = ".",
) -> DatasetRows:
    """The dataset rows of a log whose rows are ``indices`` (``keys``: ``{row_key: row_index}`` of those
    whose records carry a content key).

    Args:
        header: The log header (its ``dataset`` names the file).
        keys: Each keyed row's content key and index in the log.
        indices: Every row index of the log.
        override: A dataset file to read instead of the header's (``--dataset``).
        results_path: The results file (a relative dataset path of an older log is looked for beside it).
    """
    from osmosis_ai.runs.log import recorded_dataset

    wanted = set(indices)
    recorded = found if isinstance(found := header.get("dataset"), Mapping) else {}
    named = Path(os.fspath(override)).expanduser() if override else recorded_dataset(header, results_path)
    if named is None:
        return DatasetRows(note="the log does not name its dataset file (give it with --dataset)")
    path = named
    if not path.is_file():
        return DatasetRows(
            str(path), note=f"dataset file {path} not found: ground truth and fields not shown (--dataset)"
        )
    by_position = override is None and _fingerprint_matches(path, recorded)
    try:
        rows = _read(path, keys, wanted, by_position)
        if not rows and not by_position and override is not None:
            # The file given is the dataset, but no row's content matches the log's keys (an older log,
            # rows edited since): row i of the log is taken to be row i of the file, and the page says so.
            by_position = True
            rows = _read(path, keys, wanted, by_position)
    except (ValueError, OSError) as exc:
        return DatasetRows(str(path), note=f"dataset file {path} could not be read: {exc}")
    found = DatasetRows(str(path), "position" if by_position else "content", rows)
    if by_position and override is not None:
        found.note = f"no row of {path} matches the log's rows by content: rows are matched by position"
    missing = len(wanted - set(rows))
    if missing and found.note is None:
        found.note = f"{missing} of the log's rows were not found in {path} (matched by {found.matched_by})"
    return found


def _read(
    path: Path, keys: Mapping[str, int], wanted: set[int], by_position: bool
) -> dict[int, dict[str, Any]]:
    from osmosis_ai.datasets import iter_batches
    from osmosis_ai.runs.log import row_key

    rows: dict[int, dict[str, Any]] = {}
    position = 0
    for batch in iter_batches(str(path), contract="any"):
        for row in batch:
            if by_position:
                if position in wanted:
                    rows[position] = _entry(row)
            else:
                index = keys.get(row_key(row))
                if index is not None:
                    rows[index] = _entry(row)
            position += 1
    return rows
