"""Finding what a rollout entrypoint offers ``osmosis eval run``: a backend, a workflow + grader, or a 0.2 loop.

Order: a module-level :class:`~osmosis_ai.rollout.ExecutionBackend` instance (the scaffold's
``backend = LocalBackend(...)``); else the ``AgentWorkflow`` and ``Grader`` subclasses the module defines
(one of each at most); else a ``RolloutAgentLoop`` (instance or subclass), which needs ``--eval-fn``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from osmosis_ai.errors import ConfigError

__all__ = ["RolloutEntry", "load_rollout_entry"]


@dataclass
class RolloutEntry:
    """What the entrypoint offers: ``backend`` (0.3 style) or ``loop`` (0.2 style); ``description`` for the plan."""

    backend: Any = None
    loop: Any = None
    description: str = ""


def _defined_here(module: ModuleType, base: type) -> list[type]:
    return [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, base)
        and obj is not base
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
    ]


def load_rollout_entry(entry_file: Path, *, artifact_root: Path | None) -> RolloutEntry:
    """Imports the entrypoint and returns what it offers; errors name the file and what was expected."""
    from osmosis_ai.importer import import_module_file
    from osmosis_ai.rollout.agent_loop import RolloutAgentLoop
    from osmosis_ai.rollout.backend import ExecutionBackend, LocalBackend
    from osmosis_ai.rollout.workflow import AgentWorkflow, Grader

    module = import_module_file(entry_file, what="rollout entrypoint", error=ConfigError)
    for name, obj in vars(module).items():
        if isinstance(obj, ExecutionBackend):
            if isinstance(obj, LocalBackend) and artifact_root is not None:
                obj.artifact_root = artifact_root
            return RolloutEntry(backend=obj, description=f"{type(obj).__name__} `{name}`")
    workflows, graders = _defined_here(module, AgentWorkflow), _defined_here(module, Grader)
    if len(workflows) > 1 or len(graders) > 1:
        names = ", ".join(c.__name__ for c in [*workflows, *graders])
        raise ConfigError(
            f"{entry_file}: more than one AgentWorkflow or Grader subclass ({names}); define a module-level "
            "`backend = LocalBackend(workflow=..., grader=...)` to say which to run"
        )
    if workflows:
        grader = graders[0] if graders else None
        # No backend of the user's to say how many may run at once: --max-in-flight / batch_size decide.
        backend = LocalBackend(
            workflow=workflows[0], grader=grader, artifact_root=artifact_root or False, max_concurrent=None
        )
        text = f"{workflows[0].__name__} + {grader.__name__ if grader else 'no grader'}"
        return RolloutEntry(backend=backend, description=text)
    for name, obj in vars(module).items():
        if isinstance(obj, RolloutAgentLoop):
            return RolloutEntry(loop=obj, description=f"RolloutAgentLoop `{name}`")
    loops = _defined_here(module, RolloutAgentLoop)
    if len(loops) == 1:
        return RolloutEntry(loop=loops[0](), description=f"RolloutAgentLoop {loops[0].__name__}")
    raise ConfigError(
        f"{entry_file}: defines no AgentWorkflow subclass, ExecutionBackend or RolloutAgentLoop to run "
        "(subclass osmosis_ai.rollout.AgentWorkflow and Grader)"
    )
