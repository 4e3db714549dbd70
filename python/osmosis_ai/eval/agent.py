"""The agent side of ``eval`` and ``test``: where the agent comes from, its model endpoints and transports,
the 1-token preflight, and the one builder of their executor (in this process and on every Ray worker).

The agent is ``module`` (``module:attr`` or ``path/to/file.py:attr``) or the built-in MCP agent over the
tools in ``mcp_dir``, exactly one of them. Messages name these options fields as ``{module}``,
``{mcp_dir}`` and ``{tool_timeout}`` (see :class:`~osmosis_ai.errors.RunError`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from osmosis_ai.errors import (
    MissingAPIKeyError,
    OptionsError,
    ProviderError,
    RunError,
    SystemicProviderError,
)
from osmosis_ai.eval.functions import EvalFunction
from osmosis_ai.eval.runner import AgentExecutor
from osmosis_ai.llm.providers import Endpoint
from osmosis_ai.llm.transport import Transport
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop
from osmosis_ai.runs.observer import RunObserver, quiet_observer

__all__ = [
    "build_agent_executor",
    "check_agent_source",
    "load_agent",
    "open_transports",
    "preflight",
    "resolve_model_endpoint",
]


def check_agent_source(module: str | None, mcp_dir: str | None, tool_timeout: float | None = None) -> None:
    """Exactly one of ``module`` and ``mcp_dir``; a tool timeout only with ``mcp_dir``, and above 0."""
    if module and mcp_dir:
        raise OptionsError("{module} and {mcp_dir} are mutually exclusive.", fields=("module", "mcp_dir"))
    if not module and not mcp_dir:
        raise OptionsError("Either {module} or {mcp_dir} is required.", fields=("module", "mcp_dir"))
    if tool_timeout is not None and not mcp_dir:
        raise OptionsError(
            "{tool_timeout} applies to the built-in MCP agent only; use it with {mcp_dir}.",
            fields=("tool_timeout", "mcp_dir"),
        )
    if tool_timeout is not None and not tool_timeout > 0:
        raise OptionsError("{tool_timeout} must be > 0.", fields=("tool_timeout",))


def load_agent(
    module: str | None,
    mcp_dir: str | None,
    *,
    tool_timeout: float | None = None,
    observer: RunObserver | None = None,
) -> RolloutAgentLoop:
    """Loads the agent loop named by ``module``, or the built-in MCP agent over the tools in ``mcp_dir``.

    For ``mcp_dir`` the folder and the discovered tools are reported to ``observer``; ``tool_timeout``
    (seconds per tool call) overrides ``$OSMOSIS_MCP_TOOL_TIMEOUT``.

    Example:
        >>> agent = load_agent("math_agent:agent_loop", None)  # doctest: +SKIP
    """
    check_agent_source(module, mcp_dir, tool_timeout)
    observer = quiet_observer(observer)
    if mcp_dir:
        from osmosis_ai.rollout.mcp import load_mcp_agent

        observer.message(f"Loading MCP tools: {mcp_dir}")
        agent = load_mcp_agent(mcp_dir, tool_timeout=tool_timeout)
        observer.message(f"  Discovered {len(agent.tool_names)} tool(s): {', '.join(agent.tool_names)}")
        return agent
    from osmosis_ai.rollout.loader import load_agent_loop

    assert module is not None
    return load_agent_loop(module)


def resolve_model_endpoint(model: str, base_url: str | None, api_key: str | None) -> Endpoint:
    """Where the model's requests go; a missing key is a :class:`RunError`, raised before any row runs."""
    from osmosis_ai.llm.providers import resolve_endpoint

    try:
        return resolve_endpoint(model, base_url=base_url, api_key=api_key)
    except MissingAPIKeyError as exc:
        raise RunError(str(exc)) from exc


@contextlib.asynccontextmanager
async def open_transports(
    endpoints: Mapping[str, Endpoint], *, max_connections: int
) -> AsyncIterator[dict[str, Transport]]:
    """``model_tag -> transport`` for every endpoint (made by the one factory), closed on exit."""
    from osmosis_ai.llm.transport import make_transport

    transports: dict[str, Transport] = {}
    try:
        for tag, endpoint in endpoints.items():
            transports[tag] = make_transport(endpoint, max_connections=max_connections)
        yield transports
    finally:
        for transport in transports.values():
            await transport.aclose()


async def preflight(transport: Transport, observer: RunObserver | None = None) -> None:
    """One 1-token request: a bad key, model or URL stops here instead of failing every run.

    Raises:
        RunError: The endpoint refused the request for good (auth, unknown model, nothing listening).
    """
    from osmosis_ai.llm.retry import RetryPolicy

    model = transport.endpoint.model
    try:
        # One retry only: a typo in the base URL should not wait out the runs' full backoff.
        message = [{"role": "user", "content": "hi"}]
        await transport.complete(message, None, {"max_tokens": 1}, policy=RetryPolicy(max_retries=1))
    except SystemicProviderError as exc:
        raise RunError(f"Preflight check failed for model '{model}': {exc}") from exc
    except ProviderError as exc:
        # Rate limits and slow replies prove the endpoint is there; the run's retries deal with them.
        quiet_observer(observer).message(
            f"Warning: preflight request for '{model}' did not succeed ({exc}); continuing."
        )


def build_agent_executor(
    agent: RolloutAgentLoop,
    eval_fns: Sequence[EvalFunction],
    transports: Mapping[str, Transport],
    *,
    max_turns: int,
    completion_params: Mapping[str, Any],
    mode: str = "eval",
) -> AgentExecutor:
    """THE builder of the ``eval`` / ``test`` executor: each run gets a fresh LLM client on the transport
    of its model tag. Used in this process and by every Ray worker (:class:`~osmosis_ai.eval.remote.AgentExecutorSpec`)."""
    from osmosis_ai.eval.llm_client import ExternalLLMClient

    return AgentExecutor(
        agent,
        list(eval_fns),
        lambda tag: ExternalLLMClient(transports[tag]),
        max_turns=max_turns,
        completion_params=completion_params,
        mode=mode,
    )
