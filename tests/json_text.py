"""The text of the JSON files users read (`-o` results, metrics.json, manifests, trajectories): what
``json.dumps(value, indent=2)`` gives their own values (key order, separators, escapes, indentation), as
the established package wrote them; the one encoder's float forms aside (a float below 1e-4 is written in
full, the same number). NaN and infinities are never written: strict JSON has neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from osmosis_ai._files import json_block


def has_tiny_float(value: Any) -> bool:
    """Whether ``value`` holds a float below 1e-4 (written in full by the one encoder, not as ``1e-05``)."""
    if isinstance(value, float):
        return value != 0 and abs(value) < 1e-4
    if isinstance(value, dict):
        return any(has_tiny_float(v) for v in value.values())
    return isinstance(value, list) and any(has_tiny_float(v) for v in value)


def _not_json(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON: a file users read holds null instead")


def assert_json_dumps_text(path: Path, *, ensure_ascii: bool = True) -> Any:
    """The file is ``json.dumps(indent=2)`` text of its own values and a newline; returns the values."""
    text = path.read_text(encoding="utf-8")
    value = json.loads(text, parse_constant=_not_json)
    assert text == json_block(value, ensure_ascii=ensure_ascii) + "\n", path
    if not has_tiny_float(value):
        assert text == json.dumps(value, indent=2, ensure_ascii=ensure_ascii) + "\n", path
    return value
