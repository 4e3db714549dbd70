"""Tool helpers: building tool messages, parsing arguments, running calls, and checking tool definitions.

``check_tool`` is the one rule set for tool definitions: ``osmosis validate`` reports its findings and
``validate_tools`` (run before every local or served rollout) raises on its errors, so an agent that
validates also runs — whether its tools are pydantic objects or plain dicts.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from osmosis_ai.errors import ToolArgumentError, ToolValidationError

__all__ = [
    "ToolIssue",
    "check_tool",
    "create_tool_error_result",
    "create_tool_result",
    "execute_tool_calls",
    "get_tool_call_info",
    "parse_tool_arguments",
    "serialize_tool_result",
    "tool_to_dict",
    "validate_tools",
]

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def create_tool_result(tool_call_id: str, content: Any) -> dict[str, Any]:
    """Builds the ``tool`` message answering one tool call.

    Example:
        >>> create_tool_result("call_1", "8")
        {'role': 'tool', 'content': '8', 'tool_call_id': 'call_1'}
    """
    text = content if isinstance(content, str) else serialize_tool_result(content)
    return {"role": "tool", "content": text, "tool_call_id": tool_call_id}


def create_tool_error_result(tool_call_id: str, error_message: str) -> dict[str, Any]:
    """Builds a ``tool`` message reporting a failed call (content ``Error: <message>``).

    Example:
        >>> create_tool_error_result("call_1", "division by zero")["content"]
        'Error: division by zero'
    """
    return create_tool_result(tool_call_id, f"Error: {error_message}")


def serialize_tool_result(result: Any) -> str:
    """Turns a tool's return value into message text: bools as JSON, numbers via ``str``, str unchanged.

    Example:
        >>> serialize_tool_result(True), serialize_tool_result(2.5), serialize_tool_result({"a": 1})
        ('true', '2.5', '{"a": 1}')
    """
    if isinstance(result, bool):
        return json.dumps(result)
    if isinstance(result, (int, float)):
        return str(result)
    if isinstance(result, str):
        return result
    return json.dumps(result, default=str)


def parse_tool_arguments(arguments: str | dict[str, Any]) -> dict[str, Any]:
    """Decodes a tool call's arguments into a dict.

    Raises:
        ToolArgumentError: The arguments are bad JSON, JSON other than an object, or another type.

    Example:
        >>> parse_tool_arguments('{"a": 5}')
        {'a': 5}
    """
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            decoded = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ToolArgumentError(f"Invalid JSON arguments ({exc}): {arguments[:200]!r}") from None
        if not isinstance(decoded, dict):
            raise ToolArgumentError(f"Expected dict from JSON tool arguments, got {type(decoded).__name__}")
        return decoded
    raise ToolArgumentError(f"Expected str or dict arguments, got {type(arguments).__name__}")


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def get_tool_call_info(tool_call: Any) -> tuple[str, str, dict[str, Any]]:
    """Returns ``(id, function name, decoded arguments)`` of a tool call (dict or object).

    A missing id becomes ``"unknown"`` and a missing name ``""``.

    Raises:
        ToolArgumentError: The arguments cannot be decoded; the error carries the call's id and name.

    Example:
        >>> get_tool_call_info({"id": "c1", "function": {"name": "add", "arguments": '{"a": 1}'}})
        ('c1', 'add', {'a': 1})
    """
    call_id = _field(tool_call, "id") or "unknown"
    function = _field(tool_call, "function") or {}
    name = _field(function, "name") or ""
    raw = _field(function, "arguments")
    try:
        arguments = parse_tool_arguments({} if raw is None else raw)
    except ToolArgumentError as exc:
        raise ToolArgumentError(f"{exc} (tool '{name}', call '{call_id}')", call_id, name) from None
    return call_id, name, arguments


async def execute_tool_calls(
    tool_calls: Sequence[Any], executor: Callable[[Any], Awaitable[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Runs ``executor`` on every call concurrently; results keep the calls' order.

    Example:
        >>> async def run(call):
        ...     return create_tool_result(call["id"], "ok")
        >>> asyncio.run(execute_tool_calls([{"id": "a"}, {"id": "b"}], run))[1]["tool_call_id"]
        'b'
    """
    if not tool_calls:
        return []
    return list(await asyncio.gather(*(executor(call) for call in tool_calls)))


# --- tool definitions -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolIssue:
    """One finding about a tool definition; ``error=False`` marks a warning."""

    code: str
    message: str
    field: str
    error: bool = True


def tool_to_dict(tool: Any) -> Any:
    """Returns a tool definition as the dict an LLM API takes (pydantic objects dumped without ``None``)."""
    dump = getattr(tool, "model_dump", None)
    return dump(exclude_none=True) if callable(dump) else tool


def check_tool(tool: Any, index: int) -> Iterator[ToolIssue]:
    """Yields what is wrong with one tool definition (a pydantic tool object or a plain dict)."""
    where = f"tools[{index}]"
    tool = tool_to_dict(tool)
    if not isinstance(tool, dict):
        yield ToolIssue(
            "INVALID_TOOL_TYPE", f"expected a dict or a tool object, got {type(tool).__name__}", where
        )
        return
    if "type" not in tool:
        yield ToolIssue("MISSING_TOOL_TYPE", "a tool needs 'type' (\"function\")", f"{where}.type")
    elif tool["type"] != "function":
        yield ToolIssue(
            "UNKNOWN_TOOL_TYPE", f"expected type 'function', got {tool['type']!r}", f"{where}.type", False
        )
    if "function" not in tool:
        yield ToolIssue("MISSING_FUNCTION", "a tool needs a 'function' object", f"{where}.function")
        return
    function = tool["function"]
    if not isinstance(function, dict):
        yield ToolIssue(
            "INVALID_FUNCTION_TYPE",
            f"'function' must be an object, got {type(function).__name__}",
            f"{where}.function",
        )
        return
    name = function.get("name")
    if name is None or (isinstance(name, str) and not name.strip()):
        yield ToolIssue(
            "MISSING_FUNCTION_NAME", "the function needs a non-empty 'name'", f"{where}.function.name"
        )
    elif not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name):
        yield ToolIssue(
            "INVALID_FUNCTION_NAME",
            f"name {name!r} must be letters, digits and underscores, not starting with a digit",
            f"{where}.function.name",
        )
    if not function.get("description"):
        yield ToolIssue(
            "MISSING_FUNCTION_DESCRIPTION",
            "no description: the model will not know when to call this tool",
            f"{where}.function.description",
            False,
        )
    parameters = function.get("parameters")
    if parameters is not None:
        if not isinstance(parameters, dict):
            yield ToolIssue(
                "INVALID_PARAMETERS_TYPE",
                f"'parameters' must be a JSON-schema object, got {type(parameters).__name__}",
                f"{where}.function.parameters",
            )
        elif parameters.get("type") != "object":
            yield ToolIssue(
                "PARAMETERS_TYPE_NOT_OBJECT",
                f"parameters.type should be 'object', got {parameters.get('type')!r}",
                f"{where}.function.parameters.type",
                False,
            )


def validate_tools(tools: Sequence[Any]) -> None:
    """Checks an agent's tool definitions (pydantic tool objects or dicts) before a rollout.

    Raises:
        ToolValidationError: A definition has an error (warnings pass); the message lists every error.

    Example:
        >>> validate_tools([{"type": "function", "function": {"name": "add", "description": "Adds."}}])
    """
    if not isinstance(tools, (list, tuple)):
        raise ToolValidationError(f"get_tools must return a list of tools, got {type(tools).__name__}")
    errors = [issue for i, tool in enumerate(tools) for issue in check_tool(tool, i) if issue.error]
    if errors:
        detail = "; ".join(f"{issue.field}: {issue.message}" for issue in errors)
        raise ToolValidationError(f"invalid tool definition: {detail}")
