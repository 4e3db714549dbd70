"""The 0.3 local dataset contract for ``osmosis eval run``: row selection and row normalisation.

Rows are read by the Rust reader (any of JSONL, JSON, CSV, Parquet); only ``system_prompt``,
``user_prompt``, ``ground_truth`` (alias ``label``) and ``metadata`` are consulted. A row with a
``metadata`` key is in metadata mode (prompt and label optional); otherwise ``user_prompt`` and a label are
required. Errors name the file and the 0-based source row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from osmosis_ai.errors import DatasetValidationError

__all__ = ["RunRow", "compact_selector", "item_prompt", "normalize_row", "parse_rows_selector", "select_rows"]

_SELECTOR = re.compile(r"^\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*$")


@dataclass(frozen=True)
class RunRow:
    """One selected row, normalised: the initial messages, the label, the metadata, where it came from."""

    prompt: list[dict[str, Any]]
    label: str | None
    metadata: dict[str, Any] | None
    source_row_index: int

    def as_item(self) -> dict[str, Any]:
        """The work item's row: the 0.2 column names (what a ``RolloutAgentLoop`` and eval functions read)
        plus the metadata and the source position. Its content is what a resume recognises the row by."""
        item: dict[str, Any] = {"source_row_index": self.source_row_index}
        for message in self.prompt:
            item[f"{message['role']}_prompt"] = message["content"]
        item.setdefault("system_prompt", "")
        if self.label is not None:
            item["ground_truth"] = self.label
        if self.metadata is not None:
            item["metadata"] = self.metadata
        return item


def item_prompt(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The initial messages of a work item's row (inverse of :meth:`RunRow.as_item`)."""
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


def compact_selector(indices: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"`` (what the results log records about the selection).

    Example:
        >>> compact_selector([0, 1, 2, 5])
        '0-2,5'
    """
    parts: list[str] = []
    start = prev = None
    for index in indices:
        if prev is not None and index == prev + 1:
            prev = index
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = index
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text if text != "" else None


def _metadata(path: Path, source: int, value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value) or None
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise DatasetValidationError(f"{path}: row {source}: metadata is not valid JSON ({exc})") from exc
        if isinstance(parsed, dict):
            return parsed or None
    raise DatasetValidationError(
        f"{path}: row {source}: metadata must be a JSON object, got {type(value).__name__}"
    )


def normalize_row(path: Path, source: int, row: Mapping[str, Any]) -> RunRow:
    """The row's initial messages, label and metadata; raises DatasetValidationError naming the row."""
    system, user = _text(row.get("system_prompt")), _text(row.get("user_prompt"))
    label = _text(row.get("ground_truth"))
    if label is None:
        label = _text(row.get("label"))
    metadata = _metadata(path, source, row.get("metadata"))
    if "metadata" not in row:
        missing = [name for name, value in (("user_prompt", user), ("ground_truth", label)) if value is None]
        if missing:
            raise DatasetValidationError(
                f"{path}: row {source}: missing {' and '.join(missing)} (or give a metadata column)"
            )
    elif user is None and system is None and metadata is None:
        raise DatasetValidationError(f"{path}: row {source}: no prompt and no metadata")
    prompt = [{"role": "system", "content": system}] if system is not None else []
    if user is not None:
        prompt.append({"role": "user", "content": user})
    return RunRow(prompt, label, metadata, source)


def select_rows(
    path: Path, indices: list[int] | None, limit: int | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(source_row_index, raw row)`` of the selected rows, streamed from the Rust reader.

    ``indices`` (from ``--rows``, sorted) wins over ``limit``; ``limit`` <= 0 or None means every row.
    """
    from osmosis_ai.datasets import read_dataset

    if indices is None:
        cap = limit if limit is not None and limit > 0 else None
        yield from enumerate(read_dataset(path, limit=cap, contract="any"))
        return
    wanted = iter(indices)
    target = next(wanted, None)
    for source, row in enumerate(read_dataset(path, limit=indices[-1] + 1 if indices else 0, contract="any")):
        if source == target:
            yield source, row
            target = next(wanted, None)
            if target is None:
                return
