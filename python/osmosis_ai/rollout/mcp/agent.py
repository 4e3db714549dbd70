"""The built-in agent loop over an MCP tool folder: chat, run the requested tools, feed results back."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from osmosis_ai.errors import MCPLoadError, ToolArgumentError
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop, RolloutContext, RolloutResult
from osmosis_ai.rollout.mcp.host import MCPTool, MCPToolHost, ToolCallFailed, to_function_tool
from osmosis_ai.rollout.mcp.loader import find_server, import_tool_folder, server_kind
from osmosis_ai.rollout.schemas import RolloutRequest
from osmosis_ai.rollout.tools import (
    create_tool_error_result,
    create_tool_result,
    get_tool_call_info,
    serialize_tool_result,
)

__all__ = ["DEFAULT_TOOL_TIMEOUT", "MCPAgentLoop", "load_mcp_agent"]

DEFAULT_TOOL_TIMEOUT = 60.0
TOOL_TIMEOUT_ENV = "OSMOSIS_MCP_TOOL_TIMEOUT"


class MCPAgentLoop(RolloutAgentLoop):
    """Offers an MCP server's tools to the model and runs the calls it asks for until a final answer.

    Each turn: chat; no tool calls → done (``finish_reason`` ``"stop"``); otherwise every requested call
    runs concurrently, each with ``tool_timeout`` seconds, and its result (or ``Error: ...`` for a tool
    that raised, timed out, is unknown or got bad arguments) goes back as a ``tool`` message. After
    ``request.max_turns`` turns that still asked for tools the run completes with ``"max_turns"``. Every
    call is recorded on the context (name, arguments, result or error, duration).

    Args:
        mcp_server: A loaded ``FastMCP`` / ``MCPServer`` object (the established form,
            ``MCPAgentLoop(load_mcp_server("./mcp"))``), or an :class:`MCPToolHost` over one.
        agent_name: The agent's name.
        tools: The server's tools, when already listed; else they are listed here, once.
        tool_timeout: Seconds one tool call may take.

    Raises:
        MCPLoadError: ``mcp_server`` is not an MCP server, or listing its tools failed.

    Example:
        >>> agent = load_mcp_agent("./mcp")  # doctest: +SKIP
        >>> [t["function"]["name"] for t in agent.get_tools(request)]  # doctest: +SKIP
        ['add', 'multiply']
    """

    name = "mcp_agent"

    def __init__(
        self,
        mcp_server: Any,
        agent_name: str = "mcp_agent",
        *,
        tools: list[MCPTool] | None = None,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
    ) -> None:
        host = (
            mcp_server
            if isinstance(mcp_server, MCPToolHost)
            else MCPToolHost(mcp_server, server_kind(mcp_server))
        )
        if tools is None:
            tools = _list_tools(host, "the MCP server")
        self.host = host
        self.tool_timeout = tool_timeout
        self.name = agent_name
        self._schemas = [to_function_tool(tool) for tool in tools]
        self.tool_names = [tool.name for tool in tools]

    def get_tools(self, request: RolloutRequest | None = None) -> list[dict[str, Any]]:
        """The server's tools as OpenAI function tools (the same list for every request, or without one)."""
        return self._schemas

    async def run(self, ctx: RolloutContext) -> RolloutResult:
        """Runs the chat / tool-call loop described in the class docstring."""
        messages = list(ctx.request.messages)
        params = dict(ctx.request.completion_params)
        for _ in range(max(1, ctx.request.max_turns)):
            reply = await ctx.chat(messages, **params)
            messages.append(reply.message)
            if not reply.has_tool_calls:
                return ctx.complete(messages, finish_reason="stop")

            outcomes = await asyncio.gather(*(self._run_call(call) for call in reply.tool_calls))
            # Recorded in the calls' order, not in the order they finished.
            for message, duration_ms, record in outcomes:
                ctx.record_tool_call(duration_ms, **record)
                messages.append(message)
        return ctx.complete(messages, finish_reason="max_turns")

    async def _run_call(self, call: Any) -> tuple[dict[str, Any], float, dict[str, Any]]:
        """Runs one call; returns its ``tool`` message, its duration and its record fields."""
        started = time.monotonic()
        # What the record shows if the call cannot even be decoded.
        raw = (call.get("function") if isinstance(call, dict) else None) or {}
        raw = raw if isinstance(raw, dict) else {}
        call_id = (call.get("id") if isinstance(call, dict) else None) or "unknown"
        name, arguments = str(raw.get("name") or ""), raw.get("arguments")
        value: Any = None
        error: str | None = None
        try:
            call_id, name, arguments = get_tool_call_info(call)
            if name not in self.tool_names:
                raise ToolCallFailed(f"unknown tool '{name}'. Available: {', '.join(self.tool_names)}")
            value = await self.host.call(name, arguments, self.tool_timeout)
        except (ToolArgumentError, ToolCallFailed) as exc:
            error = str(exc)
        duration_ms = (time.monotonic() - started) * 1000.0
        text = None if error is not None else serialize_tool_result(value)
        message = (
            create_tool_error_result(call_id, error)
            if error is not None
            else create_tool_result(call_id, text)
        )
        record = {"name": name, "arguments": arguments, "result": text, "error": error, "started": started}
        return message, duration_ms, record


def _list_tools(host: MCPToolHost, where: str) -> list[MCPTool]:
    try:
        return host.list_tools()
    except Exception as exc:
        raise MCPLoadError(f"Listing the tools of {where} failed: {type(exc).__name__}: {exc}") from exc


def _timeout_from_env() -> float:
    raw = os.environ.get(TOOL_TIMEOUT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_TOOL_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise MCPLoadError(f"{TOOL_TIMEOUT_ENV} must be a positive number of seconds, got {raw!r}")
    return value


def load_mcp_agent(mcp_dir: str | Path, *, tool_timeout: float | None = None) -> MCPAgentLoop:
    """Loads a tool folder and returns the built-in MCP agent over its tools.

    Imports ``<mcp_dir>/main.py`` in isolation, finds the server object (standalone ``fastmcp`` or the
    official ``mcp`` SDK), and lists its tools in-process; no port is bound.

    Args:
        mcp_dir: The tool folder (``./mcp`` in the local-rollout layout).
        tool_timeout: Seconds one tool call may take; default ``$OSMOSIS_MCP_TOOL_TIMEOUT`` or 60.

    Returns:
        The agent loop; ``agent.tool_names`` lists the discovered tools.

    Raises:
        MCPLoadError: The folder, its ``main.py`` or its server cannot be loaded, or listing tools failed.

    Example:
        >>> agent = load_mcp_agent("./mcp")  # doctest: +SKIP
        >>> agent.tool_names  # doctest: +SKIP
        ['add', 'multiply']
    """
    timeout = _timeout_from_env() if tool_timeout is None else tool_timeout
    folder, module = import_tool_folder(mcp_dir)
    main = folder / "main.py"
    kind, server = find_server(module, main)
    host = MCPToolHost(server, kind)
    tools = _list_tools(host, f"the server in {main}")
    return MCPAgentLoop(host, tools=tools, tool_timeout=timeout)
