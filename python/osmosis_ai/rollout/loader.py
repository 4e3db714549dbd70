"""Loading a user's agent loop from ``module.path:attribute`` (shared by eval, serve and validate)."""

from __future__ import annotations

from osmosis_ai.errors import OsmosisRolloutError
from osmosis_ai.importer import import_object
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop

__all__ = ["AgentLoopLoadError", "load_agent_loop"]


class AgentLoopLoadError(OsmosisRolloutError, ValueError):
    """``module:attribute`` does not lead to a usable agent loop; the message says what was expected."""


def load_agent_loop(path: str) -> RolloutAgentLoop:
    """Imports ``module.path:attribute`` and returns the agent loop instance it names.

    The current working directory is put on ``sys.path`` first (if absent), so a module next to the user
    imports. A class is instantiated with no arguments.

    Args:
        path: ``module.path:attribute``; split on the last ``:``.

    Returns:
        The agent loop instance.

    Raises:
        AgentLoopLoadError: Bad path, failed import, missing attribute, a class that is not a
            ``RolloutAgentLoop`` subclass or cannot be instantiated, or an object that is not an agent loop.

    Example:
        >>> load_agent_loop("my_agent:MyAgentLoop")  # doctest: +SKIP
    """
    obj = import_object(path, what="agent loop", example="my_agent:agent_loop", error=AgentLoopLoadError)
    if isinstance(obj, type):
        if not issubclass(obj, RolloutAgentLoop):
            raise AgentLoopLoadError(
                f"'{path}' is the class {obj.__name__}, which does not subclass RolloutAgentLoop"
            )
        try:
            obj = obj()
        except Exception as exc:
            raise AgentLoopLoadError(
                f"Cannot instantiate {obj.__name__} from '{path}' with no arguments: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    if not isinstance(obj, RolloutAgentLoop):
        raise AgentLoopLoadError(
            f"'{path}' must be a RolloutAgentLoop instance or subclass, got {type(obj).__name__}"
        )
    return obj
