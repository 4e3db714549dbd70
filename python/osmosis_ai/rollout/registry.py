"""A process-wide registry of agent loops by name (thread-safe)."""

from __future__ import annotations

import threading

from osmosis_ai.errors import AgentLoopNotFoundError
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop

__all__ = [
    "AgentLoopRegistry",
    "get_agent_loop",
    "list_agent_loops",
    "register_agent_loop",
    "unregister_agent_loop",
]


class AgentLoopRegistry:
    """Agent loop instances by their ``name``.

    Example:
        >>> registry = AgentLoopRegistry()
        >>> registry.list_names()
        []
    """

    def __init__(self) -> None:
        self._loops: dict[str, RolloutAgentLoop] = {}
        self._lock = threading.Lock()

    def register(self, loop: RolloutAgentLoop) -> None:
        """Adds an agent loop under its name.

        Raises:
            TypeError: ``loop`` is not a ``RolloutAgentLoop`` instance.
            ValueError: An agent loop of that name is already registered.
        """
        if not isinstance(loop, RolloutAgentLoop):
            raise TypeError(f"expected a RolloutAgentLoop instance, got {type(loop).__name__}")
        name = loop.name
        with self._lock:
            if name in self._loops:
                raise ValueError(f"Agent loop '{name}' is already registered")
            self._loops[name] = loop

    def unregister(self, name: str) -> bool:
        """Removes an agent loop; returns whether it was registered."""
        with self._lock:
            return self._loops.pop(name, None) is not None

    def get(self, name: str) -> RolloutAgentLoop | None:
        """Returns the agent loop of that name, or ``None``."""
        with self._lock:
            return self._loops.get(name)

    def list_names(self) -> list[str]:
        """Returns the registered names, sorted."""
        with self._lock:
            return sorted(self._loops)

    def clear(self) -> None:
        """Removes every agent loop."""
        with self._lock:
            self._loops.clear()


_registry = AgentLoopRegistry()


def register_agent_loop(loop: RolloutAgentLoop) -> None:
    """Registers an agent loop in the global registry (duplicate name → ``ValueError``).

    Example:
        >>> register_agent_loop(loop=MyAgent())  # doctest: +SKIP
    """
    _registry.register(loop)


def unregister_agent_loop(name: str) -> bool:
    """Removes an agent loop from the global registry; returns whether it was there."""
    return _registry.unregister(name)


def get_agent_loop(name: str) -> RolloutAgentLoop:
    """Returns a registered agent loop.

    Raises:
        AgentLoopNotFoundError: No agent loop has that name; the message lists the available ones.
    """
    agent_loop = _registry.get(name)
    if agent_loop is None:
        raise AgentLoopNotFoundError(name, _registry.list_names())
    return agent_loop


def list_agent_loops() -> list[str]:
    """Returns the names in the global registry, sorted."""
    return _registry.list_names()
