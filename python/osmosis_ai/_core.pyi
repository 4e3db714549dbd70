"""Type stub of the compiled core `osmosis_ai._core` (built from `rust/src/py/`)."""

__version__: str

def build_profile() -> str:
    """``"release"`` or ``"debug"``: how the core was compiled."""

def check_signature(shape_json: str, family: str) -> str:
    """Check a function shape (JSON from ``signatures.describe_function``) against the contract its family
    (``"reward"``, ``"rubric"`` or ``"eval"``) selects by first parameter name.

    Returns the contract name (``"reward"``, ``"rubric"``, ``"eval_simple"`` or ``"eval_full"``).
    Raises ``osmosis_ai.errors.SignatureError`` when the function breaks it.
    """

# --- datasets (rust/src/py/dataset.rs) ------------------------------------------------------------------

class DatasetBatches:
    """Iterator over batches (lists of row dicts) of a dataset file, checked against a row contract.

    ``contract`` is ``"eval"``, ``"rubric"`` or ``"any"``. Opening skips ``offset`` rows; at most
    ``limit`` rows are read. Raises ``FileNotFoundError``, ``osmosis_ai.errors.DatasetParseError`` or
    ``osmosis_ai.errors.DatasetValidationError``.
    """

    def __init__(
        self,
        path: str,
        contract: str = "eval",
        offset: int = 0,
        limit: int | None = None,
        batch_size: int = 1024,
    ) -> None: ...
    @property
    def format(self) -> str:
        """``"jsonl"``, ``"json"``, ``"csv"`` or ``"parquet"``."""
    def __iter__(self) -> DatasetBatches: ...
    def __next__(self) -> list[dict[str, object]]: ...

def count_rows(path: str) -> int:
    """Rows in a dataset file: non-blank lines (JSONL), the footer (Parquet), a syntax pass (JSON, CSV)."""

def validate_dataset(path: str, contract: str = "eval", max_problems: int = 100) -> dict[str, object]:
    """Checks every row; returns ``{path, format, rows, columns, problems, total_problems, bad_rows}``.

    Each problem is a dict ``{line, unit, row, field, message, kind, location}``.
    """
