"""Turns the array-likes users hand to :mod:`osmosis_ai.stats` into what the core reads.

The core's abi3 build targets Python 3.10, whose limited API has no buffer protocol, so arrays travel
as ``(bytes, code)``: native-endian packed values plus a type code (``"i8"``, ``"u4"``, ``"f8"``, ...).
Buffers (numpy arrays, ``array.array``, ``memoryview``) are read through a ``memoryview`` and copied
to bytes in chunks of :data:`CHUNK` rows, so the copies stay small and in warm memory; objects with a
``to_numpy()`` method (polars and pandas Series) go through it; other iterables through ``array``.
Nothing here imports numpy or polars.
"""

from __future__ import annotations

import math
import operator
import sys
from array import array
from typing import Any

from osmosis_ai.errors import StatsError

Packed = tuple[bytes, str]
View = tuple[memoryview, str]

#: Rows per call into the core: 64K rows of 8 bytes = 512 KiB per copy.
CHUNK = 1 << 16

_INT_KINDS = {
    "b": "i",
    "h": "i",
    "i": "i",
    "l": "i",
    "q": "i",
    "n": "i",
    "B": "u",
    "H": "u",
    "I": "u",
    "L": "u",
    "Q": "u",
    "N": "u",
}
_NATIVE_ORDER = "<" if sys.byteorder == "little" else ">"
_I64 = (-(2**63), 2**63 - 1)


def _code(fmt: str, itemsize: int) -> str | None:
    """The core's type code for a buffer format, or None when the core cannot read it directly."""
    if fmt[:1] in ("@", "="):
        fmt = fmt[1:]
    elif fmt[:1] in ("<", ">", "!"):
        if fmt[0] != _NATIVE_ORDER:
            return None
        fmt = fmt[1:]
    if fmt == "?":
        return "b1"
    if fmt in ("d", "f"):
        return f"f{itemsize}"
    if fmt in _INT_KINDS and itemsize in (1, 2, 4, 8):
        return f"{_INT_KINDS[fmt]}{itemsize}"
    return None


def _buffer(values: Any, name: str) -> memoryview | None:
    if not isinstance(values, (memoryview, bytes, bytearray, array)) and hasattr(values, "to_numpy"):
        values = values.to_numpy()
    try:
        view = memoryview(values)
    except TypeError:
        return None
    if view.ndim != 1:
        raise StatsError(f"{name} must be one-dimensional, got {view.ndim} dimensions", field=name)
    return view


def _as_list(values: Any, view: memoryview, name: str) -> list[Any]:
    """The items of a buffer the core cannot read directly (another byte order, float16, ...)."""
    if hasattr(values, "to_numpy"):
        values = values.to_numpy()
    try:
        return values.tolist() if hasattr(values, "tolist") else view.tolist()
    except NotImplementedError:
        raise StatsError(f"{name}: unsupported array format {view.format!r}", field=name) from None


def as_int(value: Any, name: str) -> int:
    """An integer argument: ints, numpy integers and whole floats pass; anything else is refused."""
    try:
        result = operator.index(value)
    except TypeError:
        if isinstance(value, float) and value.is_integer():
            result = int(value)
        else:
            raise StatsError(f"{name} must be a whole number, got {value!r}", field=name) from None
    if not _I64[0] <= result <= _I64[1]:
        raise StatsError(f"{name} = {result} is out of range", field=name)
    return result


def _bad_row(values: list[Any], name: str, check: Any, expected: str) -> StatsError:
    for row, value in enumerate(values):
        try:
            check(value)
        except (TypeError, ValueError, OverflowError, StatsError):
            return StatsError(f"row {row}: {name} = {value!r} is not {expected}", row=row, field=name)
    return StatsError(f"{name} must hold {expected} values", field=name)


def count_view(values: Any, name: str) -> View:
    """Per-row counts (attempts or passes) as a 1-D memoryview the core can read, and its code."""
    view = _buffer(values, name)
    if view is not None:
        code = _code(view.format, view.itemsize)
        if code is not None:
            return view, code
        values = _as_list(values, view, name)
    seq = values if isinstance(values, list) else list(values)
    try:
        return memoryview(array("q", seq)), "i8"
    except (TypeError, OverflowError):
        pass
    try:
        return memoryview(array("q", [as_int(v, name) for v in seq])), "i8"
    except StatsError:
        raise _bad_row(seq, name, lambda v: as_int(v, name), "a whole number") from None


def pack_values(values: Any, name: str) -> Packed:
    """Packs per-row real values (floats); non-finite values are the core's to refuse, by row."""
    view = _buffer(values, name)
    if view is not None:
        code = _code(view.format, view.itemsize)
        if code is not None:
            return view.tobytes(), code
        values = _as_list(values, view, name)
    seq = values if isinstance(values, list) else list(values)
    try:
        return array("d", seq).tobytes(), "f8"
    except TypeError:
        raise _bad_row(seq, name, lambda v: math.isfinite(v), "a number") from None


def matrix(values: Any) -> tuple[memoryview, str, int, int] | None:
    """A 2-D buffer (rows x attempts) of numbers as a flat byte view in row-major order (copied once
    if it is not C-contiguous), its code, rows and columns; None for anything else."""
    if not isinstance(values, (memoryview, array)) and not hasattr(values, "__array_interface__"):
        return None
    try:
        view = memoryview(values)
    except TypeError:
        return None
    if view.ndim != 2:
        return None
    code = _code(view.format, view.itemsize)
    if code is None:
        return None
    rows, cols = view.shape or (0, 0)
    flat = view.cast("B") if view.c_contiguous else memoryview(view.tobytes())
    return flat, code, rows, cols
