"""The one importer of user code named as ``module.path:attribute`` (agents, eval functions, rubric functions).

Errors say what to fix: a malformed spec shows an example; ``path/to/file.py:attr`` is accepted and
imported from that file; a missing attribute lists what the module defines, closest names first; an
exception raised while the user's module imports is reported at the user's own line (file:line and the
code), not ours.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from osmosis_ai.errors import OsmosisError

__all__ = ["ImportTargetError", "import_module_file", "import_object", "split_spec"]


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


def _user_frame(exc: BaseException) -> str:
    """Where in the user's code an import failed: the innermost frame outside importlib and this package."""
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


def _module_from_file(file: Path, error: type[Exception]) -> ModuleType:
    name = file.stem
    parent = str(file.parent.resolve())
    if parent not in sys.path:
        sys.path.insert(0, parent)  # the file's siblings import as they do when it runs as a script
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise error(f"Cannot import '{file}': not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _import(module_name: str, root: Path, error: type[Exception], what: str) -> ModuleType:
    looks_like_file = module_name.endswith(".py") or "/" in module_name or os.sep in module_name
    try:
        if looks_like_file:
            file = Path(module_name)
            file = file if file.is_absolute() else root / file
            if not file.is_file():
                raise error(f"Cannot import {what}: file '{module_name}' does not exist (looked in {root})")
            return _module_from_file(file, error)
        return importlib.import_module(module_name)
    except error:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and (exc.name == module_name or module_name.startswith(exc.name + ".")):
            raise error(
                f"Cannot import module '{module_name}' ({what}): no module named '{module_name}' (looked in "
                f"{root} and on sys.path; run from the directory that contains it, or give "
                "'path/to/file.py:attribute')"
            ) from exc
        raise error(
            f"Cannot import module '{module_name}' ({what}): ModuleNotFoundError: {exc}{_user_frame(exc)}"
        ) from exc
    except BaseException as exc:  # a module may raise anything at import, SystemExit included
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise error(
            f"Cannot import module '{module_name}': {type(exc).__name__}: {exc}{_user_frame(exc)}"
        ) from exc


def import_module_file(
    file: Path, *, what: str = "module", error: type[Exception] = ImportTargetError
) -> ModuleType:
    """Imports a Python source file as a module (its directory first on ``sys.path``), errors as below.

    Example:
        >>> module = import_module_file(Path("rollouts/demo/main.py"), what="rollout entrypoint")  # doctest: +SKIP
    """
    return _import(str(file.resolve()), file.parent.resolve(), error, what)


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

    ``root`` (default: the current directory) is put on ``sys.path`` first, so modules next to the user
    import as they do when the user runs them; with ``keep_root_on_path=False`` it is removed again after
    the import (for library callers that pass an explicit root).

    Raises:
        ImportTargetError (or ``error``): Malformed spec, import failure, missing attribute.

    Example:
        >>> import_object("os.path:join") is os.path.join
        True
    """
    module_name, attribute = split_spec(spec, example=example, error=error)
    base = (root or Path.cwd()).resolve()
    added = str(base) not in sys.path
    if added:
        sys.path.insert(0, str(base))
    try:
        module = _import(module_name, base, error, what)
    finally:
        if added and not keep_root_on_path and str(base) in sys.path:
            sys.path.remove(str(base))
    if not hasattr(module, attribute):
        public = sorted(name for name in vars(module) if not name.startswith("_"))
        close = difflib.get_close_matches(attribute, public, n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        listing = ", ".join(public) if public else "(none)"
        raise error(
            f"Module '{module_name}' has no attribute '{attribute}'.{hint} Public attributes: {listing}"
        )
    return getattr(module, attribute)
