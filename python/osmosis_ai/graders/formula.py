"""The ``calculate_output`` formula of a ``multi`` grader, evaluated without ``eval``.

Allowed: numbers, the sub-graders' names, ``+ - * / %``, ``**`` (``^`` is read as a power too, as
formula authors often write it), parentheses and ``min max abs floor ceil exp sqrt log``. Anything
else (attributes, subscripts, other calls) is refused when the config is loaded.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Collection, Mapping
from typing import Any

from osmosis_ai.errors import ConfigError, EvalFnError

__all__ = ["check_formula", "evaluate"]

_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[float], float]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "floor": math.floor,
    "ceil": math.ceil,
    "exp": math.exp,
    "sqrt": math.sqrt,
    "log": math.log,
}


def _parse(formula: str) -> ast.expr:
    try:
        # `^` is rewritten, not mapped: Python's `^` binds looser than `*` and `+`, a power binds tighter.
        return ast.parse(formula.strip().replace("^", "**"), mode="eval").body
    except SyntaxError as exc:
        raise ConfigError(f"calculate_output {formula!r} is not a formula ({exc.msg})") from None


def _check(node: ast.AST, names: Collection[str], formula: str) -> None:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    ):
        return
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ConfigError(f"calculate_output {formula!r} names '{node.id}', which is not a sub-grader")
        return
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left, names, formula)
        _check(node.right, names, formula)
        return
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        _check(node.operand, names, formula)
        return
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if node.keywords or not node.args:
            raise ConfigError(f"calculate_output {formula!r}: {node.func.id}() takes positional arguments")
        for arg in node.args:
            _check(arg, names, formula)
        return
    raise ConfigError(f"calculate_output {formula!r}: '{ast.unparse(node)}' is not allowed in a formula")


def check_formula(formula: str, names: Collection[str]) -> None:
    """Raises :class:`ConfigError` unless ``formula`` only uses what the module docstring allows."""
    _check(_parse(formula), set(names), formula)


def _eval(node: ast.AST, values: Mapping[str, float]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_eval(node.left, values), _eval(node.right, values))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, values))
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return _FUNCTIONS[node.func.id](*(_eval(arg, values) for arg in node.args))


def evaluate(formula: str, values: Mapping[str, float]) -> float:
    """The formula's value for the sub-graders' scores.

    Example:
        >>> evaluate("0.5 * a + max(b, 0.2)", {"a": 1.0, "b": 0.0})
        0.7
    """
    try:
        return float(_eval(_parse(formula), values))
    except (ArithmeticError, ValueError) as exc:
        raise EvalFnError(f"calculate_output {formula!r} failed: {type(exc).__name__}: {exc}") from None
