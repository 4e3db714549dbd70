"""Importing a tool folder's ``main.py`` in isolation and finding the MCP server object it builds.

The one importer (:func:`osmosis_ai.importer.import_module_file`, isolated) imports the folder as the package
``_osmosis_mcp_<hash of its path>`` (so ``from .tools import x`` works) with the folder first on ``sys.path``
only while importing (so ``import helpers`` works too). Sibling modules imported that way are evicted
afterwards, so a second folder with a same-named ``helpers`` is not shadowed, and nothing of the user's
folder stays importable under a plain name.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

from osmosis_ai.errors import MCPLoadError
from osmosis_ai.importer import import_module_file
from osmosis_ai.rollout.mcp.compat import v1_fastmcp_alias

__all__ = ["find_server", "import_tool_folder", "load_mcp_server", "server_kind", "server_kinds"]

_EXAMPLE = (
    "For example, in main.py:\n"
    "    from fastmcp import FastMCP\n"
    '    mcp = FastMCP("my_tools")\n'
    "    @mcp.tool()\n"
    "    def add(a: int, b: int) -> int:\n"
    '        """Adds two numbers."""\n'
    "        return a + b"
)


def server_kinds() -> list[tuple[str, type]]:
    """The server classes that can be installed here, as ``(kind, class)``; imports the SDKs."""
    kinds: list[tuple[str, type]] = []
    try:
        from fastmcp import FastMCP
    except ImportError:
        pass
    else:
        kinds.append(("fastmcp", FastMCP))
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        pass
    else:
        kinds.append(("mcp", MCPServer))
    return kinds


def _explain_import_error(main: Path, exc: BaseException) -> str:
    base = f"Error importing {main}: {type(exc).__name__}: {exc}"
    missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
    if missing == "fastmcp" or (missing or "").startswith("fastmcp."):
        return f"{base}\nThe folder uses the standalone fastmcp package: pip install 'osmosis-ai[mcp]'"
    if missing == "mcp.server.fastmcp":
        return (
            f"{base}\nosmosis-ai runs with the official MCP SDK 2.x, where mcp.server.fastmcp.FastMCP became "
            "mcp.server.mcpserver.MCPServer. Use 'from mcp.server.mcpserver import MCPServer' or the "
            "standalone 'from fastmcp import FastMCP' (pip install 'osmosis-ai[mcp]')."
        )
    return base


def import_tool_folder(directory: str | Path) -> tuple[Path, types.ModuleType]:
    """Imports ``<directory>/main.py`` as a fresh module; see the module docstring for the isolation rules.

    Args:
        directory: The tool folder.

    Returns:
        The folder's absolute path and the imported ``main`` module.

    Raises:
        MCPLoadError: The folder or its ``main.py`` is missing, or importing it raised.

    Example:
        >>> folder, main = import_tool_folder("./mcp")  # doctest: +SKIP
    """
    folder = Path(directory).expanduser().resolve()
    if not folder.is_dir():
        raise MCPLoadError(f"MCP tool folder not found: {folder} (expected a directory containing main.py)")
    main = folder / "main.py"
    if not main.is_file():
        raise MCPLoadError(f"No main.py in MCP tool folder {folder} (expected {main} that builds the server)")
    # The SDKs load before the user's folder goes on sys.path, so a sibling named like one of theirs
    # cannot shadow them.
    server_kinds()
    with v1_fastmcp_alias():
        module = import_module_file(
            main,
            prefix="_osmosis_mcp",
            isolated=True,
            what="MCP tool folder",
            error=MCPLoadError,
            explain=lambda _target, exc: _explain_import_error(main, exc),
        )
    return folder, module


def find_server(module: types.ModuleType, main: Path) -> tuple[str, Any]:
    """Returns ``(kind, server)`` for the first attribute of ``module`` (alphabetical) that is an MCP server.

    Raises:
        MCPLoadError: No attribute is a ``fastmcp.FastMCP`` or ``mcp.server.mcpserver.MCPServer``.
    """
    kinds = server_kinds()
    for attribute in dir(module):
        value = getattr(module, attribute, None)
        for kind, cls in kinds:
            if isinstance(value, cls):
                return kind, value
    looked_for = ", ".join(f"{cls.__module__}.{cls.__name__}" for _, cls in kinds) or "none installed"
    raise MCPLoadError(
        f"No MCP server object found in {main} (expected a module-level FastMCP or MCPServer instance; "
        f"classes looked for: {looked_for}).\n{_EXAMPLE}"
    )


def server_kind(server: Any) -> str:
    """Returns ``"fastmcp"`` or ``"mcp"`` for an MCP server object.

    Raises:
        MCPLoadError: ``server`` is neither a ``fastmcp.FastMCP`` nor an ``mcp.server.mcpserver.MCPServer``.
    """
    for kind, cls in server_kinds():
        if isinstance(server, cls):
            return kind
    raise MCPLoadError(
        f"Expected an MCP server object (FastMCP or MCPServer), got {type(server).__module__}."
        f"{type(server).__name__}"
    )


def load_mcp_server(mcp_path: str | Path) -> Any:
    """Imports a tool folder's ``main.py`` and returns the MCP server object it builds.

    Args:
        mcp_path: The tool folder.

    Returns:
        The ``FastMCP`` / ``MCPServer`` instance.

    Raises:
        MCPLoadError: The folder, its ``main.py`` or its server cannot be loaded.

    Example:
        >>> server = load_mcp_server("./mcp")  # doctest: +SKIP
        >>> agent = MCPAgentLoop(server)  # doctest: +SKIP
    """
    folder, module = import_tool_folder(mcp_path)
    return find_server(module, folder / "main.py")[1]
