"""The 0.3 local dataset contract for ``osmosis eval run``: row selection and row normalisation.

Rows are read by the Rust reader (any of JSONL, JSON, CSV, Parquet); only ``system_prompt``,
``user_prompt``, ``ground_truth`` (alias ``label``) and ``metadata`` are consulted. A row with a
``metadata`` key is in metadata mode (prompt and label optional); otherwise ``user_prompt`` and a label are
required. The Rust reader checks that contract (``"eval_run"``) on the selected rows, so its errors name the
file, the line (Parquet: the row) and the field; this module only turns checked rows into messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "RunRow",
    "check_rows",
    "compact_selector",
    "item_prompt",
    "item_row",
    "normalize_row",
    "parse_rows_selector",
    "select_rows",
]

_SELECTOR = re.compile(r"^\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*$")


@dataclass(frozen=True)
class RunRow:
    """One selected row, normalised: the initial messages, the label, the metadata, where it came from."""

    prompt: list[dict[str, Any]]
    label: str | None
    metadata: dict[str, Any] | None
    source_row_index: int


def item_prompt(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The initial messages of a work item's row (see :func:`item_row`)."""
    prompt = [{"role": "system", "content": item["system_prompt"]}] if item.get("system_prompt") else []
    if item.get("user_prompt") is not None:
        prompt.append({"role": "user", "content": item["user_prompt"]})
    return prompt


def parse_rows_selector(text: str) -> list[int]:
    """``"3,7,10-12"`` -> ``[3, 7, 10, 11, 12]`` (sorted, duplicates merged, ranges inclusive).

    Example:
        >>> parse_rows_selector("7,3,2-4")
        [2, 3, 4, 7]
    """
    text = text.strip()
    if not _SELECTOR.match(text):
        raise ValueError(f"--rows {text!r}: expected indices and inclusive ranges, e.g. 3,7,10-20")
    chosen: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        start, stop = int(low), int(high or low)
        if stop < start:
            raise ValueError(f"--rows: range {part} is inverted; did you mean {stop}-{start}?")
        chosen.update(range(start, stop + 1))
    return sorted(chosen)


def _runs(indices: Iterable[int]) -> Iterator[tuple[int, int]]:
    """Sorted indices as ``(first, last)`` runs of consecutive rows."""
    start = prev = None
    for index in indices:
        if prev is not None and index == prev + 1:
            prev = index
            continue
        if start is not None and prev is not None:
            yield start, prev
        start = prev = index
    if start is not None and prev is not None:
        yield start, prev


def compact_selector(indices: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"`` (what the results log records about the selection).

    Example:
        >>> compact_selector([0, 1, 2, 5])
        '0-2,5'
    """
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in _runs(indices))


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if text != "" else None


def _metadata(value: Any) -> dict[str, Any] | None:
    # The reader's contract admitted only an object or a string holding one (blank: absent).
    if value is None:  # most rows: no Mapping ABC check
        return None
    if isinstance(value, Mapping):
        return dict(value) or None
    if isinstance(value, str) and value.strip():
        return orjson.loads(value) or None
    return None


def item_row(source: int, row: Mapping[str, Any]) -> dict[str, Any]:
    """The work item's row of a row the reader checked (contract ``"eval_run"``): the 0.2 column names (what
    a ``RolloutAgentLoop`` and eval functions read; ``system_prompt`` ``""`` when there is none) plus the
    metadata and the source position. Its content is what a resume recognises the row by.

    Example:
        >>> item_row(4, {"user_prompt": "2+2?", "label": 4})
        {'source_row_index': 4, 'user_prompt': '2+2?', 'system_prompt': '', 'ground_truth': '4'}
    """
    item: dict[str, Any] = {"source_row_index": source}
    system, user = _text(row.get("system_prompt")), _text(row.get("user_prompt"))
    if system is not None:
        item["system_prompt"] = system
    if user is not None:
        item["user_prompt"] = user
    if system is None:  # after the prompts, as the key order of the log's rows always had it
        item["system_prompt"] = ""
    label = _text(row.get("ground_truth"))
    if label is None:
        label = _text(row.get("label"))
    if label is not None:
        item["ground_truth"] = label
    metadata = _metadata(row.get("metadata"))
    if metadata is not None:
        item["metadata"] = metadata
    return item


def normalize_row(source: int, row: Mapping[str, Any]) -> RunRow:
    """The initial messages, label and metadata of a row the reader checked (contract ``"eval_run"``).

    Example:
        >>> normalize_row(4, {"user_prompt": "2+2?", "label": 4}).label
        '4'
    """
    item = item_row(source, row)
    return RunRow(item_prompt(item), item.get("ground_truth"), item.get("metadata"), source)


def _windows(indices: list[int] | None, limit: int | None) -> Iterator[tuple[int, int | None]]:
    """``(offset, count)`` read windows of a selection: one per run of consecutive ``indices``, else the
    first ``limit`` rows (all of them when ``limit`` is None or <= 0)."""
    if indices is None:
        yield 0, limit if limit is not None and limit > 0 else None
        return
    for first, last in _runs(indices):
        yield first, last - first + 1


def select_rows(
    path: Path, indices: list[int] | None, limit: int | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(source_row_index, raw row)`` of the selected rows, streamed from the Rust reader.

    ``indices`` (from ``--rows``, sorted) wins over ``limit``; ``limit`` <= 0 or None means every row.
    Only the selected rows are checked against the ``"eval_run"`` contract: each run of consecutive
    indices is its own read window, so a bad row outside the selection is skipped unchecked.

    Raises:
        DatasetValidationError: A selected row breaks the contract; the message names the file, the line
            (Parquet: the row) and the field.
    """
    from osmosis_ai.datasets import read_dataset

    for offset, count in _windows(indices, limit):
        yield from enumerate(
            read_dataset(path, offset=offset, limit=count, contract="eval_run", read_ahead=False),
            start=offset,
        )


def check_rows(path: Path, indices: list[int] | None, limit: int | None) -> None:
    """Reads the rows :func:`select_rows` selects through the same contract check, keeping nothing.

    What passes the check also normalises (:func:`normalize_row` cannot fail on a checked row), so the
    check before a run builds no rows.

    Raises:
        DatasetValidationError: As :func:`select_rows`, for the first selected row that breaks the contract.
    """
    from osmosis_ai.datasets import check_rows as check

    for offset, count in _windows(indices, limit):
        check(path, offset=offset, limit=count, contract="eval_run")
