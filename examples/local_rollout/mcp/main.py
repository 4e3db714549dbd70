# The MCP server of this repository, in the layout the docs describe: `osmosis eval --mcp ./mcp` and
# `osmosis check .` import this file (no port is bound) and list the tools registered on `mcp`.
from server import mcp  # noqa: F401  (the loader finds the server object here)
from tools import *  # noqa: F403  (importing the tool modules registers their tools)
