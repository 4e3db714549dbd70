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
