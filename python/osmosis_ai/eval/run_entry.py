"""What a rollout entrypoint exposes, found one way for ``eval run`` (local and Ray) and ``config validate``.

Order: a module-level :class:`~osmosis_ai.rollout.ExecutionBackend` instance (the scaffold's
``backend = LocalBackend(...)``); else the ``AgentWorkflow`` and ``Grader`` subclasses the user's rollout
defines (one of each at most); else a ``RolloutAgentLoop`` (instance or subclass), which needs ``--eval-fn``.
A class counts when the entrypoint exposes it and it is defined in the rollout's own folder (the entrypoint
or a module it imports with ``from .parts import W``); base classes and library classes do not. Classes the
entrypoint defines itself win over those it imports, and a class that another found class derives from is
not counted (``class MyFlow(SharedFlow)`` exposes one workflow).

:func:`find_exposed` does not import the base classes: a module that never imported them cannot subclass
them, so the check in a child process (``python -m osmosis_ai.entrypoint_probe``) stays light.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from osmosis_ai.errors import ConfigError

__all__ = ["Exposed", "RolloutEntry", "find_exposed", "import_rollout_entrypoint", "load_rollout_entry"]

_BASES = {
    "backend": ("osmosis_ai.rollout.backend.base", "ExecutionBackend"),
    "workflow": ("osmosis_ai.rollout.workflow", "AgentWorkflow"),
    "grader": ("osmosis_ai.rollout.workflow", "Grader"),
    "loop": ("osmosis_ai.rollout.agent_loop", "RolloutAgentLoop"),
}


@dataclass
class RolloutEntry:
    """What the entrypoint offers: ``backend`` (0.3 style) or ``loop`` (0.2 style); ``description`` for the plan."""

    backend: Any = None
    loop: Any = None
    description: str = ""


@dataclass
class Exposed:
    """What an entrypoint module exposes, by kind; :meth:`choice` says which ``eval run`` runs.

    Attributes:
        backends: ``(name, instance)`` of module-level ``ExecutionBackend`` instances.
        workflows: ``AgentWorkflow`` subclasses of the rollout.
        graders: ``Grader`` subclasses of the rollout.
        loop_objects: ``(name, instance)`` of module-level ``RolloutAgentLoop`` instances.
        loops: ``RolloutAgentLoop`` subclasses of the rollout.
    """

    file: Path
    backends: list[tuple[str, Any]] = field(default_factory=list)
    workflows: list[type] = field(default_factory=list)
    graders: list[type] = field(default_factory=list)
    loop_objects: list[tuple[str, Any]] = field(default_factory=list)
    loops: list[type] = field(default_factory=list)

    def problem(self) -> str | None:
        """Why ``eval run`` cannot run this entrypoint (nothing to run, or no way to choose), else None."""
        if self.backends:
            return None
        if len(self.workflows) > 1 or len(self.graders) > 1:
            names = ", ".join(c.__name__ for c in [*self.workflows, *self.graders])
            return (
                f"more than one AgentWorkflow or Grader subclass ({names}); define a module-level "
                "`backend = LocalBackend(workflow=..., grader=...)` to say which to run"
            )
        if self.workflows or self.loop_objects or len(self.loops) == 1:
            return None
        return (
            "defines no AgentWorkflow subclass, ExecutionBackend or RolloutAgentLoop to run "
            "(subclass osmosis_ai.rollout.AgentWorkflow and Grader)"
        )

    def choice(self) -> tuple[str, str]:
        """``(kind, description)`` of what ``eval run`` runs: kind ``backend``, ``workflow`` or ``loop``.

        Raises:
            ConfigError: :meth:`problem`, naming the file.
        """
        problem = self.problem()
        if problem is not None:
            raise ConfigError(f"{self.file}: {problem}")
        if self.backends:
            name, obj = self.backends[0]
            return "backend", f"{type(obj).__name__} `{name}`"
        if self.workflows:
            grader = self.graders[0].__name__ if self.graders else "no grader"
            return "workflow", f"{self.workflows[0].__name__} + {grader}"
        if self.loop_objects:
            return "loop", f"RolloutAgentLoop `{self.loop_objects[0][0]}`"
        return "loop", f"RolloutAgentLoop {self.loops[0].__name__}"


def _base(kind: str) -> type | None:
    module, name = _BASES[kind]
    loaded = sys.modules.get(module)
    return getattr(loaded, name, None) if loaded is not None else None


def _of_rollout(cls: type, root: Path) -> bool:
    """Whether ``cls`` is defined in a module under ``root`` (the user's rollout, not a library)."""
    file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    return isinstance(file, str) and bool(file) and Path(file).resolve().is_relative_to(root)


def _narrow(classes: list[type], module: str) -> list[type]:
    """The classes the entrypoint defines itself (else all), without those another one derives from."""
    own = [c for c in classes if c.__module__ == module] or classes
    return [c for c in own if not any(o is not c and issubclass(o, c) for o in own)]


def find_exposed(module: ModuleType, root: Path | None = None) -> Exposed:
    """The backends, workflows, graders and loops ``module`` exposes (see the module docstring).

    Args:
        module: The imported entrypoint.
        root: The rollout folder whose classes count (default: the entrypoint's folder).

    Example:
        >>> find_exposed(module).choice()  # doctest: +SKIP
        ('workflow', 'MyWorkflow + MyGrader')
    """
    file = Path(module.__file__ or module.__name__)
    root = (root or file.parent).resolve()
    found = Exposed(file=file)
    bases = {kind: _base(kind) for kind in _BASES}
    seen: set[int] = set()
    for name, obj in vars(module).items():
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if inspect.isclass(obj):
            if not _of_rollout(obj, root) or inspect.isabstract(obj):
                continue
            for kind, target in (
                ("workflow", found.workflows),
                ("grader", found.graders),
                ("loop", found.loops),
            ):
                base = bases[kind]
                if base is not None and issubclass(obj, base) and obj is not base:
                    target.append(obj)
        elif bases["backend"] is not None and isinstance(obj, bases["backend"]):
            found.backends.append((name, obj))
        elif bases["loop"] is not None and isinstance(obj, bases["loop"]):
            found.loop_objects.append((name, obj))
    for kinds in (found.workflows, found.graders, found.loops):
        kinds[:] = _narrow(kinds, module.__name__)
    return found


def import_rollout_entrypoint(entry_file: Path, rollout_dir: Path | None = None) -> ModuleType:
    """Imports an entrypoint as a module of the rollout's package (``from .helpers import X`` works).

    Raises:
        ConfigError: The import failed or did not finish within the deadline (the message names the file).
    """
    from osmosis_ai.importer import import_module_file

    return import_module_file(
        entry_file,
        package_root=rollout_dir or entry_file.parent,
        prefix="_osmosis_rollout",
        what="rollout entrypoint",
        error=ConfigError,
    )


def load_rollout_entry(
    entry_file: Path, *, artifact_root: Path | None, rollout_dir: Path | None = None
) -> RolloutEntry:
    """Imports the entrypoint and returns what it offers; errors name the file and what was expected.

    Args:
        entry_file: The entrypoint.
        artifact_root: Where a ``LocalBackend`` puts per-rollout artifacts (None: its default).
        rollout_dir: The rollout folder, the package the entrypoint belongs to (default: its folder).
    """
    from osmosis_ai.rollout.backend import LocalBackend

    module = import_rollout_entrypoint(entry_file, rollout_dir)
    exposed = find_exposed(module, rollout_dir)
    kind, description = exposed.choice()
    if kind == "backend":
        backend = exposed.backends[0][1]
        if isinstance(backend, LocalBackend) and artifact_root is not None:
            backend.artifact_root = artifact_root
        return RolloutEntry(backend=backend, description=description)
    if kind == "workflow":
        # No backend of the user's to say how many may run at once: --max-in-flight / batch_size decide.
        backend = LocalBackend(
            workflow=exposed.workflows[0],
            grader=exposed.graders[0] if exposed.graders else None,
            artifact_root=artifact_root or False,
            max_concurrent=None,
        )
        return RolloutEntry(backend=backend, description=description)
    loop = exposed.loop_objects[0][1] if exposed.loop_objects else exposed.loops[0]()
    return RolloutEntry(loop=loop, description=description)
