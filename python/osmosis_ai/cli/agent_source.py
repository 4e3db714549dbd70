"""Where a local run's agent comes from: `-m module:attr` or `--mcp DIR` (exactly one), for `eval` and `test`."""

from __future__ import annotations

import click

from osmosis_ai.rollout.agent_loop import RolloutAgentLoop

__all__ = ["check_agent_source", "load_agent"]


def check_agent_source(module: str | None, mcp_dir: str | None, tool_timeout: float | None = None) -> None:
    """The established messages when both or neither are given; a tool timeout needs ``--mcp``."""
    if module and mcp_dir:
        raise click.UsageError("--module and --mcp are mutually exclusive.")
    if not module and not mcp_dir:
        raise click.UsageError("Either --module (-m) or --mcp is required.")
    if tool_timeout is not None and not mcp_dir:
        raise click.UsageError(
            "--mcp-tool-timeout applies to the built-in MCP agent only; use it with --mcp."
        )
    if tool_timeout is not None and not tool_timeout > 0:
        raise click.UsageError("--mcp-tool-timeout must be > 0.")


def load_agent(
    module: str | None, mcp_dir: str | None, *, quiet: bool = False, tool_timeout: float | None = None
) -> RolloutAgentLoop:
    """Loads the agent loop named by ``module``, or the built-in MCP agent over the tools in ``mcp_dir``.

    For ``mcp_dir`` the folder and the discovered tools are printed unless ``quiet``; ``tool_timeout``
    (seconds per tool call) overrides ``$OSMOSIS_MCP_TOOL_TIMEOUT``.
    """
    check_agent_source(module, mcp_dir, tool_timeout)
    if mcp_dir:
        from osmosis_ai.rollout.mcp import load_mcp_agent

        if not quiet:
            click.echo(f"Loading MCP tools: {mcp_dir}")
        agent = load_mcp_agent(mcp_dir, tool_timeout=tool_timeout)
        if not quiet:
            click.echo(f"  Discovered {len(agent.tool_names)} tool(s): {', '.join(agent.tool_names)}")
        return agent
    from osmosis_ai.rollout.loader import load_agent_loop

    assert module is not None
    return load_agent_loop(module)
