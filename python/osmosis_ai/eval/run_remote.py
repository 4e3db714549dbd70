"""Building ``osmosis eval run``'s executor wherever its items run: in this process or on a Ray worker.

:func:`open_run_executor` is the one builder; the local engine and every Ray worker call it. For a 0.3
workflow it starts an :class:`~osmosis_ai.llm.bridge.LLMBridge` on the event loop it runs on, forwarding
to the real model endpoint: a workflow on a Ray worker calls the bridge on 127.0.0.1 of its own node,
so a cluster needs a route to the model, never one back to the driver. :class:`RunExecutorSpec` is the
plain data a worker rebuilds it from; the rollout directory travels with Ray's runtime environment.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from osmosis_ai.errors import RunError

__all__ = ["RunExecutorSpec", "item_timeout", "open_run_executor"]


def item_timeout(entry: Any, agent_timeout: float | None, grader_timeout: float | None) -> float | None:
    """The engine's per-item limit for ``entry`` (a :class:`~osmosis_ai.eval.run_entry.RolloutEntry`).

    A 0.3 backend enforces both budgets itself; the engine's limit only catches what ignores
    cancellation. A 0.2 loop has the agent budget.

    Example:
        >>> from osmosis_ai.eval.run_entry import RolloutEntry
        >>> item_timeout(RolloutEntry(backend=object()), 30.0, 5.0)
        95.0
    """
    if entry.backend is None:
        return agent_timeout
    budgets = [t for t in (agent_timeout, grader_timeout) if t is not None]
    return sum(budgets) + 60.0 if len(budgets) == 2 else None


@contextlib.asynccontextmanager
async def open_run_executor(
    entry: Any,
    endpoint: Any,
    *,
    max_connections: int,
    agent_timeout: float | None,
    grader_timeout: float | None,
    scorers: Sequence[Any] = (),
    bridge_port: int = 0,
) -> AsyncIterator[Any]:
    """Yields the executor for ``entry``: a workflow behind its own bridge (on ``bridge_port``, 0 for an
    ephemeral one), or a 0.2 loop scored by the first of ``scorers`` (loaded eval functions)."""
    from osmosis_ai.llm.transport import make_transport

    transport = make_transport(endpoint, max_connections=max_connections)
    try:
        if entry.backend is not None:
            from osmosis_ai.eval.workflow_executor import WorkflowExecutor
            from osmosis_ai.llm.bridge import LLMBridge

            bridge = LLMBridge(transport, port=bridge_port)
            try:
                await bridge.start()
            except OSError as exc:  # a fixed port already taken
                raise RunError(
                    f"{{rollout_port}} {bridge_port}: cannot listen on 127.0.0.1 ({exc.strerror or exc})",
                    fields=("rollout_port",),
                ) from exc
            try:
                yield WorkflowExecutor(
                    entry.backend, bridge, agent_timeout=agent_timeout, grader_timeout=grader_timeout
                )
            finally:
                await bridge.aclose()
        else:
            from osmosis_ai.eval.llm_client import ExternalLLMClient
            from osmosis_ai.eval.workflow_executor import LoopExecutor

            yield LoopExecutor(entry.loop, list(scorers)[:1], lambda _tag: ExternalLLMClient(transport))
    finally:
        await transport.aclose()


@dataclass(frozen=True)
class RunExecutorSpec:
    """How a worker builds ``eval run``'s executor (see the module docstring).

    Args:
        entry_file: The rollout entrypoint, absolute on the driver (found in the shipped folder).
        rollout_dir: The rollout directory holding it, shipped to the workers.
        endpoint: The resolved model endpoint (keys included; sent with the actor's arguments).
        max_connections: Connections to the model per worker.
        agent_timeout: The workflow's budget in seconds, or None.
        grader_timeout: The grader's budget in seconds, or None.
        eval_fns: Scorers of a 0.2 loop (``module:function`` or ``path/file.py:function``).
        artifact_root: Where a ``LocalBackend`` puts per-rollout artifacts (the same path on each node).
        env: The rollout's environment as the driver resolved it (``[env]``, the ``[secrets]`` values, the
            secrets file's other values), set on a worker before the entrypoint is imported.
        secrets: The names in ``env`` whose values are secrets (masked in what the worker prints).

    Example:
        >>> spec = RunExecutorSpec("/ws/rollouts/calc/main.py", "/ws/rollouts/calc", None, 8, 30.0, 5.0)
        >>> spec.paths()
        ['/ws/rollouts/calc']
    """

    entry_file: str
    rollout_dir: str
    endpoint: Any
    max_connections: int
    agent_timeout: float | None
    grader_timeout: float | None
    eval_fns: tuple[str, ...] = ()
    artifact_root: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    root: str = field(default_factory=os.getcwd)
    # As the local `eval run` engine: the rollout backend runs workflows on the engine's loop.
    isolate: ClassVar[bool] = False

    def modules(self) -> list[str]:
        """The 0.2 scorer's module, if named by module (the rollout itself is read by path)."""
        from osmosis_ai.eval.remote import eval_fn_modules

        return eval_fn_modules(self.eval_fns)

    def paths(self) -> list[str]:
        """The rollout directory (the entrypoint imports its siblings from there), scorers' files."""
        from osmosis_ai.eval.remote import eval_fn_paths

        return list(dict.fromkeys([self.rollout_dir, *eval_fn_paths(self.eval_fns, self.root)]))

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Any]:
        """Loads the entrypoint from the shipped rollout directory and yields its executor."""
        from osmosis_ai.eval.remote import load_shipped_eval_functions
        from osmosis_ai.eval.run_entry import load_rollout_entry
        from osmosis_ai.redact import remember
        from osmosis_ai.runs.backends import worker_path

        # A cluster's workers were started without the driver's environment: the run brings it.
        remember(self.env[name] for name in self.secrets if name in self.env)
        os.environ.update(self.env)
        root = Path(self.artifact_root) if self.artifact_root else None
        entry = load_rollout_entry(
            worker_path(self.entry_file), artifact_root=root, rollout_dir=worker_path(self.rollout_dir)
        )
        async with open_run_executor(
            entry,
            self.endpoint,
            max_connections=self.max_connections,
            agent_timeout=self.agent_timeout,
            grader_timeout=self.grader_timeout,
            scorers=load_shipped_eval_functions(self.eval_fns, self.root) if entry.loop is not None else (),
        ) as executor:
            yield executor
