"""Dataset files: streamed rows, fast row counts and a validation pass, all parsed in the Rust core.

Formats, chosen by extension (case-insensitive): ``.jsonl`` (one JSON object per line; blank lines
skipped), ``.json`` (a top-level array of objects), ``.csv`` (a header row; values are strings) and
``.parquet``. Rows reach Python in batches; memory stays flat however long the file is.

Row contracts (``contract=``):

- ``"eval"`` (default; ``osmosis eval`` / ``osmosis test``): ``system_prompt``, ``user_prompt`` and
  ``ground_truth``, matched case-insensitively and handed out lower-cased, each a non-blank string.
  Every other column is kept unchanged (it becomes the row's metadata).
- ``"rubric"`` (``eval-rubric`` records): ``solution_str`` a non-blank string; ``score_min`` /
  ``score_max`` numbers; ``metadata`` / ``extra_info`` objects, when present.
- ``"eval_run"`` (``osmosis eval run`` on a local file, spec 4.3): ``system_prompt``, ``user_prompt``,
  ``ground_truth`` (alias ``label``) and ``metadata``, names as written. A row with a ``metadata`` key needs
  a prompt or non-empty metadata; any other row needs ``user_prompt`` and a label. Only null and ``""`` are
  absent; ``metadata`` is an object or a string holding one.
- ``"any"``: every row is a JSON object; nothing else is checked.

Errors name the file, the line (Parquet: the row number), the 0-based row index and the field:
``FileNotFoundError`` for a missing file, :class:`~osmosis_ai.errors.DatasetParseError` for bad syntax,
an unsupported extension or an empty file, :class:`~osmosis_ai.errors.DatasetValidationError` for a row
that breaks its contract.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from osmosis_ai import _core

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "Contract",
    "DatasetProblem",
    "DatasetReader",
    "ValidationReport",
    "check_rows",
    "count_rows",
    "iter_batches",
    "read_dataset",
    "validate_dataset",
]

Contract = Literal["eval", "rubric", "eval_run", "any"]
SUPPORTED_EXTENSIONS = (".jsonl", ".json", ".csv", ".parquet")
DEFAULT_BATCH_SIZE = 1024
# Rows per list behind read_dataset's one-row-at-a-time iterator. The core parses larger batches either way
# (ahead, on its own thread, unless read_ahead is off); short lists keep few rows alive at once, and a
# thousand 2 KB rows made and freed together cost more in fresh memory pages than in building them.
ROWS_PER_LIST = 32

Row = dict[str, Any]


def _path(path: str | os.PathLike[str]) -> str:
    return os.fspath(Path(path).expanduser())


def iter_batches(
    path: str | os.PathLike[str],
    *,
    limit: int | None = None,
    offset: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    contract: Contract = "eval",
    read_ahead: bool = True,
) -> Iterator[list[Row]]:
    """Streams the rows of a dataset file in lists of up to ``batch_size`` rows.

    The file is opened (and the ``offset`` rows skipped) before this returns, so a missing file or an
    unsupported extension raises here, not at the first ``next()``.

    Args:
        path: The dataset file; ``~`` is expanded.
        limit: Read at most this many rows (after ``offset``); ``None`` reads to the end.
        offset: Skip this many rows first. Skipped rows are not checked, and not parsed where the format
            allows (JSONL lines are only located; Parquet row groups are skipped from the footer).
        batch_size: Rows per list.
        contract: The row contract checked on every row read (see the module docs).
        read_ahead: Parse the next rows on a thread of the core's own while these are used (False: in
            the caller's thread, one parsed batch at a time, for a caller much slower per row than the
            parse: its memory then does not grow with the file).

    Returns:
        An iterator of lists of row dicts.

    Raises:
        FileNotFoundError: The file does not exist.
        DatasetParseError: Unsupported extension, bad syntax, or no rows at all.
        DatasetValidationError: A row in the window breaks the contract (raised when it is reached).

    Example:
        >>> for batch in iter_batches("data.jsonl", batch_size=512):  # doctest: +SKIP
        ...     print(len(batch))
    """
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    return iter(_core.DatasetBatches(_path(path), contract, offset, limit, batch_size, read_ahead))


def read_dataset(
    path: str | os.PathLike[str],
    *,
    limit: int | None = None,
    offset: int = 0,
    batch_size: int = ROWS_PER_LIST,
    contract: Contract = "eval",
    read_ahead: bool = True,
) -> Iterator[Row]:
    """Streams the rows of a dataset file, checked against ``contract``, one dict at a time.

    Rows are parsed in the Rust core, in batches with the GIL released (ahead, on a thread of its own,
    unless ``read_ahead`` is off), and turned into dicts ``batch_size`` at a time; the row index of a yielded row is ``offset`` plus its position in
    the iteration.

    Args:
        path: The dataset file (``.jsonl``, ``.json``, ``.csv`` or ``.parquet``); ``~`` is expanded.
        limit: Read at most this many rows (after ``offset``); ``None`` reads to the end.
        offset: Skip this many rows first (not checked).
        batch_size: Rows turned into dicts per call into the core.
        contract: ``"eval"`` (default), ``"rubric"``, ``"eval_run"`` or ``"any"``.
        read_ahead: As for :func:`iter_batches`.

    Returns:
        An iterator of row dicts. For the eval contract the three required columns are lower-cased.

    Raises:
        FileNotFoundError: The file does not exist.
        DatasetParseError: Unsupported extension, bad syntax, or no rows at all.
        DatasetValidationError: A row breaks the contract; ``.path``, ``.line``, ``.row`` and ``.field``
            say where.

    Example:
        >>> for row in read_dataset("data.jsonl", limit=10):  # doctest: +SKIP
        ...     print(row["user_prompt"])
    """
    batches = iter_batches(
        path, limit=limit, offset=offset, batch_size=batch_size, contract=contract, read_ahead=read_ahead
    )
    return (row for batch in batches for row in batch)


def check_rows(
    path: str | os.PathLike[str], *, limit: int | None = None, offset: int = 0, contract: Contract = "eval"
) -> int:
    """Checks the rows :func:`read_dataset` would read against ``contract`` without building them.

    Args:
        path: The dataset file; ``~`` is expanded.
        limit: Check at most this many rows (after ``offset``); ``None`` checks to the end.
        offset: Skip this many rows first (not checked).
        contract: As for :func:`read_dataset`.

    Returns:
        The number of rows checked.

    Raises:
        FileNotFoundError: The file does not exist.
        DatasetParseError: Unsupported extension, bad syntax, or no rows at all.
        DatasetValidationError: The first row that breaks the contract, as reading it would raise.

    Example:
        >>> check_rows("data.jsonl", contract="eval_run")  # doctest: +SKIP
        10000
    """
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    return _core.check_rows(_path(path), contract, offset, limit)


def count_rows(path: str | os.PathLike[str]) -> int:
    """Counts the rows of a dataset file without building them.

    JSONL: non-blank lines (no JSON parsing). Parquet: the footer's row count (no page read). JSON and
    CSV: one syntax-only pass.

    Args:
        path: The dataset file.

    Returns:
        The number of rows.

    Raises:
        FileNotFoundError: The file does not exist.
        DatasetParseError: Unsupported extension, or JSON / CSV / Parquet syntax too broken to count.

    Example:
        >>> count_rows("data.parquet")  # doctest: +SKIP
        100000
    """
    return _core.count_rows(_path(path))


@dataclass(frozen=True)
class DatasetProblem:
    """One problem found by :func:`validate_dataset`.

    Attributes:
        line: 1-based line (text formats) or row number (Parquet), when known.
        unit: ``"line"`` or ``"row"``: what ``line`` counts.
        row: 0-based row index (blank lines not counted), when known.
        field: The column at fault, when one is.
        message: What is wrong and what was expected.
        kind: ``"parse"``, ``"validation"`` or ``"empty"``.
        location: ``"<path>, line 7 (row 5)"``, ready to print.
    """

    line: int | None
    unit: str
    row: int | None
    field: str | None
    message: str
    kind: str
    location: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


@dataclass(frozen=True)
class ValidationReport:
    """What :func:`validate_dataset` found in a whole file.

    Attributes:
        path: The file checked.
        format: ``"jsonl"``, ``"json"``, ``"csv"`` or ``"parquet"``.
        rows: Rows in the file (a row that failed to parse counts).
        columns: Column names in order of first appearance (required eval columns lower-cased).
        problems: The first ``max_problems`` problems, in file order.
        total_problems: Every problem found, including those not kept.
        bad_rows: Rows with at least one problem.
    """

    path: str
    format: str
    rows: int
    columns: list[str]
    problems: list[DatasetProblem]
    total_problems: int
    bad_rows: int

    @property
    def ok(self) -> bool:
        """True when the file has rows and none has a problem."""
        return self.total_problems == 0

    @property
    def truncated(self) -> bool:
        """True when more problems were found than kept."""
        return self.total_problems > len(self.problems)


def validate_dataset(
    path: str | os.PathLike[str],
    *,
    contract: Contract = "eval",
    max_problems: int = 100,
) -> ValidationReport:
    """Checks every row of a dataset file and reports every problem (up to ``max_problems``).

    Rows are parsed in the core without building Python objects (JSONL rows are not even built as
    values: only their keys and value types are read), so this is much faster than reading.

    Args:
        path: The dataset file.
        contract: ``"eval"`` (default), ``"rubric"``, ``"eval_run"`` or ``"any"``.
        max_problems: How many problems to keep; all are counted.

    Returns:
        A :class:`ValidationReport`. An empty file is one problem of kind ``"empty"``.

    Raises:
        FileNotFoundError: The file does not exist.
        DatasetParseError: Unsupported extension, or a file too broken to open (a corrupt Parquet
            footer, an unreadable CSV header).

    Example:
        >>> report = validate_dataset("data.jsonl")  # doctest: +SKIP
        >>> report.ok, report.rows
        (True, 1000)
    """
    if max_problems < 0:
        raise ValueError(f"max_problems must be >= 0, got {max_problems}")
    raw = _core.validate_dataset(_path(path), contract, max_problems)
    problems = [DatasetProblem(**p) for p in raw["problems"]]
    return ValidationReport(
        path=raw["path"],
        format=raw["format"],
        rows=raw["rows"],
        columns=list(raw["columns"]),
        problems=problems,
        total_problems=raw["total_problems"],
        bad_rows=raw["bad_rows"],
    )


class DatasetReader:
    """A dataset file as an object: its length and a window of its rows (the 0.2 ``DatasetReader`` shape).

    A thin handle over :func:`read_dataset` and :func:`count_rows`; nothing is read until asked.

    Args:
        file_path: The dataset file (``.jsonl``, ``.json``, ``.csv`` or ``.parquet``).
        contract: The row contract checked on every row read (default ``"eval"``).

    Example:
        >>> reader = DatasetReader("test_data.jsonl")  # doctest: +SKIP
        >>> len(reader), reader.read(limit=2)[0]["user_prompt"]  # doctest: +SKIP
        (10, 'What is 25 + 17?')
    """

    def __init__(self, file_path: str | os.PathLike[str], *, contract: Contract = "eval") -> None:
        self.file_path = Path(file_path)
        self.contract: Contract = contract

    def __len__(self) -> int:
        return count_rows(self.file_path)

    def __iter__(self) -> Iterator[Row]:
        return read_dataset(self.file_path, contract=self.contract)

    def read(self, limit: int | None = None, offset: int = 0) -> list[Row]:
        """Returns up to ``limit`` rows after skipping ``offset``, each checked against the contract."""
        return list(read_dataset(self.file_path, limit=limit, offset=offset, contract=self.contract))
