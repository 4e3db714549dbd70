"""The options that name a local run's agent, shared by `osmosis eval` and `osmosis test`.

Only click is imported here, so the commands that use these options stay cheap to load; the agent itself is
loaded by :mod:`osmosis_ai.eval.agent` when a run starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from osmosis_ai.cli import bounds

__all__ = ["agent_options"]

F = TypeVar("F", bound=Callable[..., Any])


def agent_options(command: F) -> F:
    """Adds ``-m/--module``, ``--mcp`` and ``--mcp-tool-timeout`` (as ``module``, ``mcp_dir``,
    ``tool_timeout``) to a click command."""
    options = [
        click.option(
            "-m",
            "--module",
            "--agent",
            "module",
            metavar="MODULE:ATTR",
            help="The agent loop to run (MODULE:ATTR or path/to/file.py:ATTR).  [required: this or --mcp]",
        ),
        click.option(
            "--mcp",
            "mcp_dir",
            metavar="DIR",
            help="Run the built-in agent with this MCP tool folder.  [required: this or -m]",
        ),
        click.option(
            "--mcp-tool-timeout",
            "tool_timeout",
            type=bounds.finite(max=bounds.MAX_TIMEOUT_S),  # "> 0" is worded by the library (eval.agent)
            metavar="SECONDS",
            help="With --mcp: seconds one tool call may take (default $OSMOSIS_MCP_TOOL_TIMEOUT, else 60).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command
