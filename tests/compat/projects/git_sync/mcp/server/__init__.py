from .mcp_server import mcp

__all__ = ["mcp"]
