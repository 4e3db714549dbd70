"""Tool folders written for the official SDK 1.x (``from mcp.server.fastmcp import FastMCP``) under mcp 2.x.

osmosis-ai needs mcp 2.x (LiteLLM's tool path imports it), where ``mcp.server.fastmcp`` raises on import and
``FastMCP`` is ``mcp.server.mcpserver.MCPServer``, whose constructor has other positional parameters. While a
folder is imported, ``mcp.server.fastmcp`` resolves to a small module whose ``FastMCP`` is an ``MCPServer``
taking 1.x arguments, so such folders load unchanged; afterwards the name raises again as mcp 2.x intends.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
import types
from collections.abc import Iterator
from typing import Any

__all__ = ["v1_fastmcp_alias"]

_NAME = "mcp.server.fastmcp"


def _v1_module() -> types.ModuleType:
    from mcp.server import mcpserver
    from mcp.server.mcpserver import MCPServer

    accepted = set(inspect.signature(MCPServer.__init__).parameters) - {"self"}

    class FastMCP(MCPServer):
        """``mcp.server.fastmcp.FastMCP`` (SDK 1.x) on mcp 2.x: ``FastMCP(name, instructions, **settings)``.

        Transport settings of 1.x (``host``, ``port``, paths...) do not apply to in-process calls and
        are ignored.
        """

        def __init__(self, name: str | None = None, instructions: str | None = None, **settings: Any) -> None:
            kept = {key: value for key, value in settings.items() if key in accepted}
            super().__init__(name=name, instructions=instructions, **kept)

    module = types.ModuleType(_NAME, "SDK 1.x names on mcp 2.x, while osmosis-ai imports a tool folder.")
    module.FastMCP = FastMCP  # type: ignore[attr-defined]
    for name in ("Context", "Image", "Audio"):
        if hasattr(mcpserver, name):
            setattr(module, name, getattr(mcpserver, name))
    return module


@contextlib.contextmanager
def v1_fastmcp_alias() -> Iterator[None]:
    """Makes ``mcp.server.fastmcp`` importable during the block when the installed SDK is 2.x."""
    if _NAME in sys.modules:
        yield
        return
    try:
        importlib.import_module(_NAME)
    except ImportError:
        pass
    else:
        yield  # a real 1.x SDK
        return
    try:
        module = _v1_module()
    except ImportError:
        yield  # no official SDK at all: the folder's own import error will say so
        return
    sys.modules[_NAME] = module
    try:
        yield
    finally:
        if sys.modules.get(_NAME) is module:
            del sys.modules[_NAME]
