"""The one rule that turns what a user's function returned into a score.

Two strictnesses of the same rule:

- **strict** (functions decorated with ``@osmosis_reward`` / ``@osmosis_rubric``): the value must be a
  Python ``float``, exactly as the training platform requires. ``1``, ``True``, ``None``, ``"1.0"`` and
  numpy scalars are refused here, at call time, instead of passing locally and failing at training time.
- **lenient** (plain ``--eval-fn`` functions and ``eval-rubric -f`` functions): an ``int`` or ``float``
  (numpy's included) is the score. ``bool`` is refused (``True`` is an answer, not a score), as are
  ``None``, strings and anything else.

In both, a NaN or infinite value is refused: it would poison every mean it entered.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from osmosis_ai.errors import SignatureError

__all__ = ["coerce_score"]


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def coerce_score(value: Any, *, function: str, strict: bool) -> float:
    """Returns ``value`` as a float score, or raises naming the function, the value and its type.

    Args:
        value: What the function returned.
        function: The function's name, for the message.
        strict: Require an exact ``float`` (decorated reward/rubric functions); else ``int`` or ``float``.

    Returns:
        The score as a built-in ``float``.

    Raises:
        SignatureError: (a ``TypeError``) the value breaks the rule; the message says how to fix it.

    Example:
        >>> coerce_score(1, function="exact", strict=False)
        1.0
        >>> coerce_score(1, function="exact", strict=True)
        Traceback (most recent call last):
        ...
        osmosis_ai.errors.SignatureError: Function 'exact' must return a float, got int (1). Return float(x) (e.g. `return float(score)`); the training platform rejects other types.
    """
    if type(value) is float and math.isfinite(value):
        return value  # what nearly every call returns, under either rule: no ABC check, no float()
    kind = type(value).__name__
    if strict:
        ok = type(value) is float
        expected = "float"
        fix = "Return float(x) (e.g. `return float(score)`); the training platform rejects other types."
    else:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        expected = "number (int or float)"
        fix = "Return an int or a float (e.g. `return float(score)`)."
    if not ok:
        raise SignatureError(
            f"Function '{function}' must return a {expected}, got {kind} ({_describe(value)}). {fix}",
            function=function,
            expected=expected,
        )
    score = float(value)
    if not math.isfinite(score):
        raise SignatureError(
            f"Function '{function}' returned {score}, which is not a finite number",
            function=function,
            expected="a finite number",
        )
    return score
