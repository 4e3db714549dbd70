"""The template variables of grader configs: ``{{sample.output_text}}``, ``{{item.field.sub}}``, ...

``sample`` is the model's output (``output_text``, ``output_json`` when the text is a JSON value) and
``item`` the dataset record. A variable that names nothing is an error (a silently empty string would
grade every sample against nothing); a value that is not a string is inserted as compact JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from osmosis_ai.errors import EvalFnError

__all__ = ["lookup", "make_sample", "render"]

_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][\w]*(?:\.[\w]+)*)\s*\}\}")


def make_sample(output_text: str) -> dict[str, Any]:
    """The ``sample`` namespace of one model output.

    Example:
        >>> make_sample('{"a": 1}')["output_json"]
        {'a': 1}
    """
    try:
        parsed = json.loads(output_text)
    except (json.JSONDecodeError, TypeError):
        parsed = None
    return {"output_text": output_text, "output_json": parsed}


def lookup(path: str, context: Mapping[str, Any]) -> Any:
    """The value at a dotted ``path`` (``item.answer.value``; list positions as numbers)."""
    value: Any = context
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise EvalFnError(f"Template variable '{{{{{path}}}}}' names nothing in the {path.split('.')[0]}")
    return value


def render(template: str, sample: Mapping[str, Any], item: Mapping[str, Any]) -> str:
    """``template`` with every ``{{sample.*}}`` / ``{{item.*}}`` replaced.

    Example:
        >>> render("{{sample.output_text}} vs {{item.answer}}", make_sample("4"), {"answer": 4})
        '4 vs 4'
    """
    context = {"sample": sample, "item": item}

    def value(match: re.Match[str]) -> str:
        found = lookup(match.group(1), context)
        return found if isinstance(found, str) else json.dumps(found, separators=(",", ":"))

    return _VARIABLE.sub(value, template)
