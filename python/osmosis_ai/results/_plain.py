"""The JSON form of the result model to typed frozen dataclasses and back (one generic converter)."""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from functools import cache
from typing import Any, ClassVar, Protocol, TypeVar, Union, overload

__all__ = ["from_plain", "to_plain"]

T = TypeVar("T")


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if dataclasses.is_dataclass(hint):
        return from_plain(hint, value)  # type: ignore[arg-type]
    if origin is tuple:
        (item, *_) = typing.get_args(hint)
        return tuple(_convert(item, v) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint)
        return {key(k) if key in (int, float) else k: _convert(item, v) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    return value


def from_plain(cls: type[T], data: dict[str, Any]) -> T:
    """``cls`` (a dataclass) from its JSON form; keys the class does not know are ignored (a newer
    minor layout adds fields)."""
    hints = _hints(cls)  # type: ignore[arg-type]  # a class is hashable; mypy cannot tell for type[T]
    kwargs = {f.name: _convert(hints[f.name], data.get(f.name)) for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**kwargs)


class _Dataclass(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]


@overload
def to_plain(value: _Dataclass) -> dict[str, Any]: ...
@overload
def to_plain(value: Any) -> Any: ...
def to_plain(value: Any) -> Any:
    """JSON-ready data: dataclasses to objects, mapping keys to strings, tuples to lists, enums to values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    return value
