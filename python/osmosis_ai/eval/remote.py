"""What a remote worker needs to rebuild ``osmosis eval``'s executor: module paths, endpoints, options.

Picklable on purpose: no loaded module, socket or transport crosses to a worker. Each worker loads the
agent and the eval functions itself and opens its own transports (closed when the worker stops).

Eval functions named by module travel as modules; those named by file (``path/to/file.py:fn``, an
OpenAI grader ``.json``) are read by path, so their folder (or the ``.json`` file) is shipped and found
on the worker with :func:`worker_target`, keeping the name the user gave (the key of their scores). The
same three helpers ship an agent named by file, and a rubric ``--function`` (``rubric/remote.py``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "AgentExecutorSpec",
    "eval_fn_modules",
    "eval_fn_paths",
    "load_shipped_eval_functions",
    "worker_target",
]


def _file_part(target: str) -> str | None:
    """The file an eval function target names (``x.py`` of ``x.py:fn``, or a ``.json``), else None."""
    if target.endswith(".json"):
        return target
    module = target.rpartition(":")[0]
    return module if module.endswith(".py") or "/" in module or os.sep in module else None


def _on_driver(root: str, file: str) -> str:
    # Lexical on both sides: the worker must compute the very key the driver shipped under.
    return os.path.normpath(os.path.join(root, file))


def eval_fn_modules(targets: Sequence[str]) -> list[str]:
    """The modules of the targets named by module (shipped as py_modules).

    Example:
        >>> eval_fn_modules(["scores:exact", "rollouts/calc/main.py:exact"])
        ['scores']
    """
    return [t.rpartition(":")[0] for t in targets if _file_part(t) is None]


def eval_fn_paths(targets: Sequence[str], root: str) -> list[str]:
    """What to ship for the targets named by file: the ``.py`` file's folder (its siblings import), or the ``.json``.

    Example:
        >>> eval_fn_paths(["scores:exact", "rollouts/calc/main.py:exact"], "/ws")
        ['/ws/rollouts/calc']
    """
    paths = []
    for target in targets:
        file = _file_part(target)
        if file is not None:
            full = _on_driver(root, file)
            paths.append(full if file.endswith(".json") else os.path.dirname(full))
    return list(dict.fromkeys(paths))


def worker_target(target: str, root: str) -> str:
    """``target`` as this process imports it: a file target points into the shipped copy of its folder.

    Unchanged for a module target, and on the driver (nothing shipped).

    Example:
        >>> worker_target("scores:exact", "/ws")
        'scores:exact'
        >>> worker_target("rollouts/calc/main.py:exact", "/ws")
        '/ws/rollouts/calc/main.py:exact'
    """
    from osmosis_ai.runs.backends import worker_path

    file = _file_part(target)
    return target if file is None else str(worker_path(_on_driver(root, file))) + target[len(file) :]


def load_shipped_eval_functions(targets: Sequence[str], root: str) -> list[Any]:
    """Loads eval functions on a worker: file targets from where they were shipped, names as given."""
    from osmosis_ai.eval.functions import load_eval_functions

    loaded = load_eval_functions([worker_target(target, root) for target in targets])
    return [dataclasses.replace(fn, name=name) for fn, name in zip(loaded, targets, strict=True)]


@dataclass(frozen=True)
class AgentExecutorSpec:
    """How to build an :class:`~osmosis_ai.eval.runner.AgentExecutor` anywhere.

    Args:
        module: The agent as ``module:attr`` (or None with ``mcp_dir``).
        mcp_dir: The MCP tool folder of the built-in agent (an absolute path on the driver; shipped to
            the workers, which need not have it).
        eval_fns: Eval functions as ``module:function`` (or ``path/file.py:function``, a grader ``.json``).
        endpoints: ``model_tag -> Endpoint`` (resolved on the driver, keys included).
        max_connections: Connections per endpoint on each worker.
        max_turns: Advisory turn limit put into each request.
        completion_params: Sampling parameters put into each request.
        tool_timeout: Seconds per MCP tool call, or None.
        root: The driver's working directory, which relative file targets are read from.

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
    root: str = field(default_factory=os.getcwd)
    # As on one machine: agents and eval functions run on their own loop, so one that blocks is timed out.
    isolate: ClassVar[bool] = True

    def modules(self) -> list[str]:
        """The user's modules a worker must be able to import."""
        agent = [self.module] if self.module else []
        return eval_fn_modules(agent) + eval_fn_modules(self.eval_fns)

    def paths(self) -> list[str]:
        """The MCP tool folder, when the built-in agent uses one, and eval functions named by file."""
        agent = [self.module] if self.module else []
        mcp = [self.mcp_dir] if self.mcp_dir else []
        return mcp + eval_fn_paths([*agent, *self.eval_fns], self.root)

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Any]:
        """Loads the agent and eval functions, opens the transports, yields the executor."""
        from osmosis_ai.eval.agent import build_agent_executor, load_agent, open_transports
        from osmosis_ai.runs.backends import worker_path

        mcp_dir = str(worker_path(self.mcp_dir)) if self.mcp_dir else None
        module = worker_target(self.module, self.root) if self.module else None
        agent = load_agent(module, mcp_dir, tool_timeout=self.tool_timeout)
        eval_fns = load_shipped_eval_functions(self.eval_fns, self.root)
        async with open_transports(self.endpoints, max_connections=self.max_connections) as transports:
            yield build_agent_executor(
                agent,
                eval_fns,
                transports,
                max_turns=self.max_turns,
                completion_params=self.completion_params,
            )
