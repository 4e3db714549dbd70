"""Listing and calling the tools of an in-process MCP server, whichever library built it.

Every call runs on its own event loop in a daemon thread. The reason is the per-call timeout: both SDKs run
a synchronous tool in a worker thread that cannot be cancelled, so a hanging tool would block an ``await``
on the caller's loop forever. Here the caller stops waiting after the timeout (an async tool is also
cancelled), the run goes on, and a thread stuck in user code cannot keep the process from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

__all__ = ["MCPTool", "MCPToolHost", "ToolCallFailed", "to_function_tool"]

T = TypeVar("T")


class ToolCallFailed(Exception):
    """A tool call did not produce a result; the message is what the model is told."""


@dataclass(frozen=True)
class MCPTool:
    """One tool as the server lists it.

    Attributes:
        name: The tool name.
        description: Its description (may be empty).
        input_schema: The JSON Schema of its arguments, as the server declares it.
    """

    name: str
    description: str
    input_schema: dict[str, Any]


def _inline_refs(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline_refs(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref[len("#/$defs/") :]
        if name in defs and name not in seen:
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**_inline_refs(defs[name], defs, (*seen, name)), **rest}
        raise _Recursive
    return {k: _inline_refs(v, defs, seen) for k, v in node.items() if k != "$defs"}


class _Recursive(Exception):
    pass


def to_function_tool(tool: MCPTool) -> dict[str, Any]:
    """Turns an MCP tool into an OpenAI function tool, keeping its full JSON Schema.

    Local ``$ref``s into ``$defs`` are inlined (several providers reject ``$ref``) unless the schema is
    recursive, in which case it is passed on unchanged. Array ``items``, nested objects and non-string
    enums are kept as declared, unlike the established lossy conversion.

    Example:
        >>> to_function_tool(MCPTool("add", "Adds.", {"type": "object", "properties": {}}))["function"]["name"]
        'add'
    """
    schema = copy.deepcopy(tool.input_schema) if tool.input_schema else {}
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    if defs:
        with contextlib.suppress(_Recursive):  # a recursive schema keeps its $defs and $refs
            schema = _inline_refs(schema, defs, ())
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description or f"Tool: {tool.name}",
            "parameters": schema,
        },
    }


async def run_in_thread(factory: Callable[[], Awaitable[T]], timeout: float | None) -> T:
    """Awaits ``factory()`` run on a fresh event loop in a daemon thread, giving up after ``timeout`` seconds.

    Raises:
        TimeoutError: The call did not finish in time (an async call is cancelled, a sync one abandoned).
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    inner: dict[str, Any] = {}

    def deliver(setter: Callable[[Any], None], value: Any) -> None:
        if not done.done():
            setter(value)

    async def body() -> T:
        inner["loop"], inner["task"] = asyncio.get_running_loop(), asyncio.current_task()
        return await factory()

    def work() -> None:
        try:
            value = asyncio.run(body())
        except BaseException as exc:
            loop.call_soon_threadsafe(deliver, done.set_exception, exc)
        else:
            loop.call_soon_threadsafe(deliver, done.set_result, value)

    threading.Thread(target=work, name="osmosis-mcp-tool", daemon=True).start()
    try:
        return await asyncio.wait_for(done, timeout)
    except (TimeoutError, asyncio.TimeoutError):
        if "task" in inner:
            inner["loop"].call_soon_threadsafe(inner["task"].cancel)
        raise TimeoutError from None


def run_sync(factory: Callable[[], Awaitable[T]], timeout: float | None) -> T:
    """``run_in_thread`` for synchronous callers (also from inside a running event loop)."""

    async def wait() -> T:
        return await run_in_thread(factory, timeout)

    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(wait())
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=work, name="osmosis-mcp-sync", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return cast(T, box["value"])  # what wait() returned


def _text_of(content: Any) -> str:
    parts = []
    for item in content or []:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            parts.append(text)
        elif getattr(item, "type", None) in ("image", "audio"):
            parts.append(f"[{item.type} content omitted]")
    return "\n".join(parts)


def _result_value(result: Any) -> Any:
    """The established conversion: structured content (a sole ``result`` key unwrapped), else the texts."""
    if getattr(result, "is_error", False):
        raise ToolCallFailed(_text_of(getattr(result, "content", None)) or "the tool reported an error")
    if not hasattr(result, "content"):
        raise ToolCallFailed(
            f"the tool asked for client input ({type(result).__name__}), which local runs cannot give"
        )
    structured = getattr(result, "structured_content", None)
    if isinstance(structured, dict) and structured:
        return structured["result"] if set(structured) == {"result"} else structured
    return _text_of(result.content)


def _clean_message(exc: BaseException) -> str:
    """The exception's message without pydantic's documentation links."""
    lines = [line for line in str(exc).splitlines() if "errors.pydantic.dev" not in line]
    text = "\n".join(lines).strip()
    cause = exc.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text}: {type(cause).__name__}: {cause}" if text else f"{type(cause).__name__}: {cause}"
    return text or type(exc).__name__


class MCPToolHost:
    """The tools of one MCP server object, listed and called in-process (no port, no subprocess).

    Args:
        server: A ``fastmcp.FastMCP`` or ``mcp.server.mcpserver.MCPServer`` instance.
        kind: ``"fastmcp"`` or ``"mcp"``.

    Example:
        >>> host = MCPToolHost(server, "fastmcp")  # doctest: +SKIP
        >>> await host.call("add", {"a": 1, "b": 2}, timeout=30)  # doctest: +SKIP
        3
    """

    def __init__(self, server: Any, kind: str) -> None:
        self.server = server
        self.kind = kind
        # fastmcp logs every failing call with a full traceback; the failure reaches the model and the
        # results log instead, so the terminal stays readable.
        logging.getLogger("fastmcp").setLevel(logging.CRITICAL)

    def list_tools(self, timeout: float = 60.0) -> list[MCPTool]:
        """Lists the server's tools (name, description, input JSON Schema)."""
        listed = run_sync(self.server.list_tools, timeout)
        tools = []
        for tool in listed:
            schema = getattr(tool, "parameters", None)
            if schema is None:
                schema = getattr(tool, "input_schema", None)
            tools.append(MCPTool(tool.name, tool.description or "", dict(schema or {})))
        return tools

    async def call(self, name: str, arguments: dict[str, Any], timeout: float | None) -> Any:
        """Calls one tool and returns its value (structured content, else its text).

        Raises:
            ToolCallFailed: The tool raised, rejected the arguments, reported an error, or timed out.
        """

        async def invoke() -> Any:
            return await self.server.call_tool(name, arguments)

        try:
            result = await run_in_thread(invoke, timeout)
        except TimeoutError:
            raise ToolCallFailed(f"tool '{name}' timed out after {timeout:g}s") from None
        except Exception as exc:
            raise ToolCallFailed(_clean_message(exc)) from exc
        return _result_value(result)
