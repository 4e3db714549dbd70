"""Signature contracts for reward, rubric and eval functions.

Python turns a function into plain data (parameter names, kinds, resolved annotations, defaults); the
Rust core checks that data against its rule tables (``rust/src/signature.rs``). Postponed
annotations are evaluated first, so modules using ``from __future__ import annotations`` work.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import json
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from osmosis_ai import _core

__all__ = ["Contract", "Family", "check_function", "describe_function"]

Family = Literal["reward", "rubric", "eval"]
Contract = Literal["reward", "rubric", "eval_simple", "eval_full", "custom"]

_UNION_TYPES: tuple[Any, ...] = (typing.Union, types.UnionType)


def _canonical_name(cls: type) -> str:
    if cls is type(None):
        return "None"
    module = getattr(cls, "__module__", "")
    qualname = getattr(cls, "__qualname__", getattr(cls, "__name__", repr(cls)))
    return qualname if module == "builtins" else f"{module}.{qualname}"


def _describe_annotation(annotation: Any) -> dict[str, Any]:
    if annotation is inspect.Parameter.empty:
        return {"kind": "missing"}
    if annotation is None:
        return {"kind": "type", "name": "None", "bases": []}
    if annotation is Any:
        return {"kind": "any"}
    if isinstance(annotation, str):
        return {"kind": "text", "text": annotation}
    if isinstance(annotation, typing.ForwardRef):
        return {"kind": "text", "text": annotation.__forward_arg__}
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _describe_annotation(typing.get_args(annotation)[0])
    if origin in _UNION_TYPES:
        return {"kind": "union", "members": [_describe_annotation(a) for a in typing.get_args(annotation)]}
    if origin is not None:
        return {"kind": "generic", "origin": _canonical_name(origin), "text": _annotation_text(annotation)}
    if isinstance(annotation, type):
        return {
            "kind": "type",
            "name": _canonical_name(annotation),
            "bases": [_canonical_name(b) for b in annotation.__mro__[1:]],
        }
    return {"kind": "other", "text": _annotation_text(annotation)}


def _annotation_text(annotation: Any) -> str:
    return repr(annotation).replace("typing.", "")


def _signature(func: Callable[..., Any]) -> inspect.Signature:
    """The signature with postponed (string) annotations evaluated where they can be.

    ``inspect.signature(eval_str=True)`` is used rather than ``typing.get_type_hints``, which on Python 3.10
    rewrites ``extra_info: dict = None`` into ``Optional[dict]``. If one name cannot be resolved, the others
    still are, and the unresolved one stays a string for the core to read.
    """
    try:
        return inspect.signature(func, eval_str=True)
    except NameError:
        pass
    signature = inspect.signature(func)
    target = inspect.unwrap(func)
    namespace = {**vars(builtins), **getattr(target, "__globals__", {})}
    params = []
    for param in signature.parameters.values():
        annotation = param.annotation
        if isinstance(annotation, str):
            with contextlib.suppress(Exception):
                annotation = eval(annotation, namespace)
        params.append(param.replace(annotation=annotation))
    return signature.replace(parameters=params)


def describe_function(func: Callable[..., Any]) -> dict[str, Any]:
    """Describes a callable as the plain data the core's signature check reads.

    Args:
        func: Any callable that ``inspect.signature`` understands.

    Returns:
        ``{"name": ..., "params": [{"name", "kind", "annotation", "has_default"}, ...]}``.

    Raises:
        SignatureError: If the callable has no inspectable signature.

    Example:
        >>> describe_function(lambda solution_str: 0.0)["params"][0]["name"]
        'solution_str'
    """
    from osmosis_ai.errors import SignatureError

    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    try:
        signature = _signature(func)
    except (TypeError, ValueError) as exc:
        raise SignatureError(f"Function '{name}': cannot read its signature ({exc})", function=name) from exc
    params = [
        {
            "name": p.name,
            "kind": p.kind.name.lower(),
            "annotation": _describe_annotation(p.annotation),
            "has_default": p.default is not inspect.Parameter.empty,
        }
        for p in signature.parameters.values()
    ]
    return {"name": name, "params": params}


def check_function(func: Callable[..., Any], family: Family) -> Contract:
    """Checks ``func`` against the contract of ``family`` selected by its first parameter.

    Args:
        func: The reward, rubric or eval function.
        family: ``"reward"`` (``@osmosis_reward``), ``"rubric"`` (``@osmosis_rubric``) or ``"eval"``
            (``--eval-fn``).

    Returns:
        The contract the function meets: ``"reward"``, ``"rubric"``, ``"eval_simple"`` or ``"eval_full"``;
        for the decorators, ``"custom"`` when the first parameter is not ``solution_str`` and the function
        is no full-mode eval function (accepted unchecked, as in the established 0.2.15+ decorators).

    Raises:
        SignatureError: A ``TypeError`` naming the function, the parameter and what was expected.

    Example:
        >>> def score(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
        ...     return 1.0
        >>> check_function(score, "reward")
        'reward'
    """
    shape = describe_function(func)
    return _core.check_signature(json.dumps(shape), family)
