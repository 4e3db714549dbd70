"""The one importer of user code: ``module.path:attribute`` specs, rollout entrypoints, tool folders, checks.

Every command that runs a user's code imports it here (``eval``, ``eval run`` locally and on Ray workers,
``config validate`` and ``eval submit``'s check, ``check``, MCP tool folders, ``serve``), so they agree on
what imports:

* **Package semantics for files.** A file is imported as a submodule of a package made for its folder
  (``<prefix>_<hash of the folder>``), so ``from .helpers import X`` works; the folder is also first on
  ``sys.path``, so ``import helpers`` works as when the file runs as a script. A nested entrypoint
  (``agent/run.py`` of a rollout) is ``<package>.agent.run``, so ``from ..shared import Y`` reaches the
  rollout's root. Every import of a folder starts afresh (its package's modules are dropped first).
* **A deadline, and signals honoured** (:mod:`osmosis_ai.import_deadline`): a module that blocks at import
  is stopped with an error naming it; Ctrl+C and SIGTERM stop the import at once.
* **Errors that say what to fix**: a malformed spec shows an example; a missing attribute lists what the
  module defines, closest names first; an exception raised while the user's module imports is reported at
  the user's own line (file:line and the code), not ours.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from osmosis_ai.errors import OsmosisError
from osmosis_ai.import_deadline import ImportDeadlineError, guarded

__all__ = [
    "ImportTargetError",
    "import_module",
    "import_module_file",
    "import_object",
    "package_name",
    "split_spec",
    "user_frame",
]

# What made the message of a failed import: (the target as named, the exception) -> text.
Explain = Callable[[str, BaseException], str]


class ImportTargetError(OsmosisError, ValueError):
    """``module:attribute`` does not lead to an importable object; the message says why."""


def split_spec(spec: str, *, example: str, error: type[Exception] = ImportTargetError) -> tuple[str, str]:
    """``(module, attribute)`` of ``module.path:attribute`` (split on the last ``:``)."""
    module_name, sep, attribute = spec.strip().rpartition(":")
    if not sep or not module_name.strip() or not attribute.strip():
        raise error(
            f"Invalid module path '{spec}'. Expected format: 'module.path:attribute_name' (for example '{example}')"
        )
    return module_name.strip(), attribute.strip()


def user_frame(exc: BaseException) -> str:
    """Where in the user's code an import failed: `` (at file:line: code)`` of the innermost frame outside
    importlib and this package, or ``""``."""
    package = str(Path(__file__).resolve().parent)
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if "importlib" not in frame.filename and not frame.filename.startswith(package)
    ]
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" ({exc.filename}:{exc.lineno}: {(exc.text or '').strip()})"
    if not frames:
        return ""
    frame = frames[-1]
    code = f": {frame.line.strip()}" if frame.line else ""
    return f" (at {frame.filename}:{frame.lineno}{code})"


def package_name(folder: Path, prefix: str = "_osmosis_user") -> str:
    """The name of the package a folder of user code is imported as: ``<prefix>_<hash of its path>``.

    Example:
        >>> package_name(Path("/ws/rollouts/calc"), "_osmosis_rollout").startswith("_osmosis_rollout_")
        True
    """
    return f"{prefix}_{hashlib.sha256(str(folder).encode('utf-8')).hexdigest()[:16]}"


def _drop(package: str) -> None:
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


def _under(module: ModuleType, folder: Path) -> bool:
    locations = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or [])]
    return any(location and Path(location).resolve().is_relative_to(folder) for location in locations)


def _load_in_package(file: Path, root: Path, prefix: str, isolated: bool) -> ModuleType:
    """Imports ``file`` as a submodule of the package made for ``root`` (see the module docstring).

    ``isolated``: ``root`` is on ``sys.path`` only while importing, and the modules imported from it under
    plain names are dropped afterwards (a second folder with its own ``helpers`` is not shadowed).
    """
    package = package_name(root, prefix)
    _drop(package)
    spec = importlib.util.spec_from_loader(package, loader=None, is_package=True)
    assert spec is not None
    shell = importlib.util.module_from_spec(spec)
    shell.__path__ = [str(root)]
    sys.modules[package] = shell
    parts = list(file.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    entry, before = str(root), set(sys.modules)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        return importlib.import_module(".".join([package, *parts]))
    except BaseException:
        _drop(package)
        raise
    finally:
        if isolated:
            if added and entry in sys.path:
                sys.path.remove(entry)
            for name in set(sys.modules) - before:
                loaded = sys.modules.get(name)
                if not name.startswith(package) and loaded is not None and _under(loaded, root):
                    del sys.modules[name]


def _default_explain(target: str, exc: BaseException) -> str:
    return f"Cannot import module '{target}': {type(exc).__name__}: {exc}{user_frame(exc)}"


def _guard(
    work: Callable[[], ModuleType], target: str, label: str, error: type[Exception], explain: Explain
) -> ModuleType:
    """Runs an import under the deadline; every failure but an interrupt becomes ``error``."""
    try:
        return guarded(work, label=label)
    except ImportDeadlineError as exc:
        raise error(str(exc)) from exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a module may raise anything at import, SystemExit included
        if isinstance(exc, error):
            raise
        raise error(explain(target, exc)) from exc


def import_module_file(
    file: Path,
    *,
    package_root: Path | None = None,
    prefix: str = "_osmosis_user",
    isolated: bool = False,
    what: str = "module",
    error: type[Exception] = ImportTargetError,
    explain: Explain | None = None,
) -> ModuleType:
    """Imports a Python source file with package semantics, under the deadline (see the module docstring).

    Args:
        file: The ``.py`` file.
        package_root: The folder that becomes the package (default the file's own); ``file`` is inside it.
        prefix: The package name's prefix (``_osmosis_rollout`` for rollout entrypoints, ...).
        isolated: Keep nothing of the folder importable afterwards but the package (tool folders).
        what: What the file is, for messages ("rollout entrypoint").
        error: The exception class raised for every failure (interrupts excepted).
        explain: Builds the message of a failed import from the file and the exception.

    Raises:
        ``error``: The file is missing, raised at import, or did not finish within the deadline.
        ImportInterrupted: Ctrl+C or SIGTERM arrived during the import.

    Example:
        >>> module = import_module_file(Path("rollouts/demo/main.py"), what="rollout entrypoint")  # doctest: +SKIP
    """
    file = file.resolve()
    root = (package_root or file.parent).resolve()
    if not file.is_file():
        raise error(f"Cannot import {what}: file '{file}' does not exist")
    if not file.is_relative_to(root):
        raise error(f"Cannot import {what}: '{file}' is not inside {root}")
    return _guard(
        lambda: _load_in_package(file, root, prefix, isolated),
        str(file),
        str(file),
        error,
        explain or _default_explain,
    )


def _by_name(module_name: str, root: Path, what: str, error: type[Exception]) -> ModuleType:
    def work() -> ModuleType:
        return importlib.import_module(module_name)

    def explain(target: str, exc: BaseException) -> str:
        if isinstance(exc, ModuleNotFoundError):
            if exc.name and (exc.name == target or target.startswith(exc.name + ".")):
                return (
                    f"Cannot import module '{target}' ({what}): no module named '{target}' (looked in "
                    f"{root} and on sys.path; run from the directory that contains it, or give "
                    "'path/to/file.py:attribute')"
                )
            return f"Cannot import module '{target}' ({what}): ModuleNotFoundError: {exc}{user_frame(exc)}"
        return _default_explain(target, exc)

    return _guard(work, module_name, f"module '{module_name}'", error, explain)


def import_module(
    target: str,
    *,
    root: Path | None = None,
    what: str = "module",
    error: type[Exception] = ImportTargetError,
    keep_root_on_path: bool = True,
) -> ModuleType:
    """Imports ``module.path`` (or ``path/to/file.py``, with package semantics) under the deadline.

    ``root`` (default: the current directory) is put on ``sys.path`` first, so modules next to the user
    import as they do when the user runs them; with ``keep_root_on_path=False`` it is removed again after
    the import (for library callers that pass an explicit root).

    Raises:
        ImportTargetError (or ``error``): Missing module or file, an exception at import, the deadline.
        ImportInterrupted: Ctrl+C or SIGTERM arrived during the import.

    Example:
        >>> import_module("json").__name__
        'json'
    """
    base = (root or Path.cwd()).resolve()
    if target.endswith(".py") or "/" in target or os.sep in target:
        file = Path(target) if Path(target).is_absolute() else base / target
        if not file.is_file():
            raise error(f"Cannot import {what}: file '{target}' does not exist (looked in {base})")
        return import_module_file(file, what=what, error=error)
    added = str(base) not in sys.path
    if added:
        sys.path.insert(0, str(base))
    try:
        return _by_name(target, base, what, error)
    finally:
        if added and not keep_root_on_path and str(base) in sys.path:
            sys.path.remove(str(base))


def import_object(
    spec: str,
    *,
    what: str = "object",
    example: str = "my_module:my_function",
    root: Path | None = None,
    error: type[Exception] = ImportTargetError,
    keep_root_on_path: bool = True,
) -> Any:
    """Imports ``module.path:attribute`` (or ``path/to/file.py:attribute``) and returns the attribute.

    The module is imported as :func:`import_module` does (``root``, ``keep_root_on_path`` as there).

    Raises:
        ImportTargetError (or ``error``): Malformed spec, import failure, the deadline, missing attribute.
        ImportInterrupted: Ctrl+C or SIGTERM arrived during the import.

    Example:
        >>> import_object("os.path:join") is os.path.join
        True
    """
    module_name, attribute = split_spec(spec, example=example, error=error)
    module = import_module(
        module_name, root=root, what=what, error=error, keep_root_on_path=keep_root_on_path
    )
    if not hasattr(module, attribute):
        public = sorted(name for name in vars(module) if not name.startswith("_"))
        close = difflib.get_close_matches(attribute, public, n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        listing = ", ".join(public) if public else "(none)"
        raise error(
            f"Module '{module_name}' has no attribute '{attribute}'.{hint} Public attributes: {listing}"
        )
    return getattr(module, attribute)
