# The official MCP SDK's FastMCP, as repositories written for the established SDK build it; standalone
# `from fastmcp import FastMCP` (pip install 'osmosis-ai[mcp]') works the same way.
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("calculator")
