"""MCP tool folders (``--mcp DIR``): load a folder's server in-process and run the built-in agent over it.

Importing this package does not import an MCP SDK; that happens when a folder is loaded.
"""

from __future__ import annotations

from osmosis_ai.errors import MCPLoadError
from osmosis_ai.rollout.mcp.agent import DEFAULT_TOOL_TIMEOUT, MCPAgentLoop, load_mcp_agent
from osmosis_ai.rollout.mcp.host import MCPTool, MCPToolHost, to_function_tool
from osmosis_ai.rollout.mcp.loader import find_server, import_tool_folder, load_mcp_server

__all__ = [
    "DEFAULT_TOOL_TIMEOUT",
    "MCPAgentLoop",
    "MCPLoadError",
    "MCPTool",
    "MCPToolHost",
    "find_server",
    "import_tool_folder",
    "load_mcp_agent",
    "load_mcp_server",
    "to_function_tool",
]
