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

def validate_config_text(text: str, path: str, kind: str) -> str:
    """Validate eval/training config text (``kind`` is ``"eval"`` or ``"training"``; ``path`` labels the
    report). Returns the report as JSON: ``{path, kind, issues: [{line, column, key, message,
    suggestion?}], config}`` where ``config`` is null unless there are no issues.
    """

def validate_config_files(paths: list[str], kinds: list[str]) -> list[str]:
    """Read and validate many config files (``kinds[i]`` for ``paths[i]``) with the GIL released.
    Returns one JSON report per file; a file that cannot be read gives
    ``{path, io_error: {kind, message}}`` with kind ``not_found``, ``permission_denied``,
    ``is_a_directory`` or ``other``.
    """
