"""Type stub of the compiled core `osmosis_ai._core` (built from `rust/src/py/`)."""

from typing import Any

__version__: str

def build_profile() -> str:
    """``"release"`` or ``"debug"``: how the core was compiled."""

def check_signature(shape_json: str, family: str) -> str:
    """Check a function shape (JSON from ``signatures.describe_function``) against the contract its family
    (``"reward"``, ``"rubric"`` or ``"eval"``) selects by first parameter name.

    Returns the contract name (``"reward"``, ``"rubric"``, ``"eval_simple"`` or ``"eval_full"``).
    Raises ``osmosis_ai.errors.SignatureError`` when the function breaks it.
    """

def validate_config_text(text: str, path: str, kind: str) -> dict[str, Any]:
    """Validate eval/training config text (``kind`` is ``"eval"`` or ``"training"``; ``path`` labels the
    report). Returns the report as a dict: ``{path, kind, issues: [{line, column, key, message,
    suggestion?}], config, positions}`` where ``config`` is None unless there are no issues and
    ``positions`` maps checked keys (``"experiment.rollout"``) to ``[line, column]``.
    """

def validate_config_files(paths: list[str], kinds: list[str]) -> list[dict[str, Any]]:
    """Read and validate many config files (``kinds[i]`` for ``paths[i]``) with the GIL released.
    Returns one report dict per file; a file that cannot be read gives
    ``{path, io_error: {kind, message}}`` with kind ``not_found``, ``permission_denied``,
    ``is_a_directory`` or ``other``.
    """
