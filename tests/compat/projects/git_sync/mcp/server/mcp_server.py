from fastmcp import FastMCP

mcp = FastMCP("CompatTools")
