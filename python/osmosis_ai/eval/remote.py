"""What a remote worker needs to rebuild ``osmosis eval``'s executor: module paths, endpoints, options.

Picklable on purpose: no loaded module, socket or transport crosses to a worker. Each worker loads the
agent and the eval functions itself and opens its own transports (closed when the worker stops).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["AgentExecutorSpec"]


@dataclass(frozen=True)
class AgentExecutorSpec:
    """How to build an :class:`~osmosis_ai.eval.runner.AgentExecutor` anywhere.

    Args:
        module: The agent as ``module:attr`` (or None with ``mcp_dir``).
        mcp_dir: The MCP tool folder of the built-in agent (an absolute path on the driver; shipped to
            the workers, which need not have it).
        eval_fns: Eval functions as ``module:function``.
        endpoints: ``model_tag -> Endpoint`` (resolved on the driver, keys included).
        max_connections: Connections per endpoint on each worker.
        max_turns: Advisory turn limit put into each request.
        completion_params: Sampling parameters put into each request.
        tool_timeout: Seconds per MCP tool call, or None.

    Example:
        >>> spec = AgentExecutorSpec("math_agent:agent_loop", None, ("reward_fn.compute_reward:f",), {})
        >>> spec.modules()
        ['math_agent', 'reward_fn.compute_reward']
    """

    module: str | None
    mcp_dir: str | None
    eval_fns: tuple[str, ...]
    endpoints: dict[str, Any]
    max_connections: int = 64
    max_turns: int = 10
    completion_params: dict[str, Any] = field(default_factory=dict)
    tool_timeout: float | None = None
    # As on one machine: agents and eval functions run on their own loop, so one that blocks is timed out.
    isolate: ClassVar[bool] = True

    def modules(self) -> list[str]:
        """The user's modules a worker must be able to import."""
        names = [self.module.rpartition(":")[0]] if self.module else []
        names += [path.rpartition(":")[0] for path in self.eval_fns]
        return names

    def paths(self) -> list[str]:
        """The MCP tool folder, when the built-in agent uses one."""
        return [self.mcp_dir] if self.mcp_dir else []

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Any]:
        """Loads the agent and eval functions, opens the transports, yields the executor."""
        from osmosis_ai.cli.agent_source import load_agent
        from osmosis_ai.eval.functions import load_eval_functions
        from osmosis_ai.eval.runner import AgentExecutor
        from osmosis_ai.llm.chat import ExternalLLMClient
        from osmosis_ai.llm.transport import make_transport
        from osmosis_ai.runs.backends import worker_path

        mcp_dir = str(worker_path(self.mcp_dir)) if self.mcp_dir else None
        agent = load_agent(self.module, mcp_dir, quiet=True, tool_timeout=self.tool_timeout)
        eval_fns = load_eval_functions(list(self.eval_fns))
        transports = {
            tag: make_transport(ep, max_connections=self.max_connections)
            for tag, ep in self.endpoints.items()
        }
        try:
            yield AgentExecutor(
                agent,
                eval_fns,
                lambda tag: ExternalLLMClient(transports[tag]),
                max_turns=self.max_turns,
                completion_params=self.completion_params,
            )
        finally:
            for transport in transports.values():
                await transport.aclose()
