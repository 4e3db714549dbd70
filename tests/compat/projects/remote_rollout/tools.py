"""The calculator's tools, built with the schema classes and helpers of the established import paths."""

from __future__ import annotations

import time

from osmosis_ai.rollout.core.exceptions import ToolArgumentError
from osmosis_ai.rollout.core.schemas import (
    OpenAIFunctionParametersSchema,
    OpenAIFunctionPropertySchema,
    OpenAIFunctionSchema,
    OpenAIFunctionToolSchema,
)
from osmosis_ai.rollout.tools import (
    create_tool_error_result,
    create_tool_result,
    execute_tool_calls,
    get_tool_call_info,
    serialize_tool_result,
)

OPERATIONS = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
}


def _schema(name: str, verb: str) -> OpenAIFunctionToolSchema:
    return OpenAIFunctionToolSchema(
        type="function",
        function=OpenAIFunctionSchema(
            name=name,
            description=f"{verb} two numbers",
            parameters=OpenAIFunctionParametersSchema(
                type="object",
                properties={
                    "a": OpenAIFunctionPropertySchema(type="number", description="The first number"),
                    "b": OpenAIFunctionPropertySchema(type="number", description="The second number"),
                },
                required=["a", "b"],
            ),
        ),
    )


TOOL_SCHEMAS = [_schema("add", "Add"), _schema("subtract", "Subtract"), _schema("multiply", "Multiply")]


async def _run_one(tool_call: dict) -> dict:
    try:
        call_id, name, arguments = get_tool_call_info(tool_call)
    except ToolArgumentError as exc:
        return create_tool_error_result(exc.tool_call_id or "unknown", str(exc))
    operation = OPERATIONS.get(name)
    if operation is None:
        return create_tool_error_result(call_id, f"unknown tool {name}")
    try:
        value = operation(float(arguments["a"]), float(arguments["b"]))
    except (KeyError, TypeError, ValueError) as exc:
        return create_tool_error_result(call_id, f"bad arguments: {exc}")
    return create_tool_result(call_id, serialize_tool_result(value))


async def run_tool_calls(tool_calls: list[dict]) -> tuple[list[dict], float]:
    """Runs the calls concurrently; returns the tool messages (in call order) and the time taken in ms."""
    started = time.monotonic()
    results = await execute_tool_calls(tool_calls, _run_one)
    return results, (time.monotonic() - started) * 1000.0
