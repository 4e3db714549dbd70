"""Which of the user's files a Ray worker needs, as a Ray runtime environment (``py_modules``).

Only the user's own code is shipped: the top-level package directory or single ``.py`` file of each
module an executor imports. Anything installed (site-packages, the standard library, osmosis-ai itself)
is expected to be installed on the cluster's nodes too; shipping it would upload whole environments.

Folders an executor reads *by path* (an MCP tool folder, a rollout directory) are shipped too, but not
as top-level modules: Ray puts a py_module's parent on the worker's import path, so a folder named
``mcp`` would shadow the ``mcp`` package itself. They are copied into one staging package
(:data:`STAGING`), each under a key derived from its driver path, and a worker finds them again with
:func:`find_shipped`.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import site
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["STAGING", "find_shipped", "runtime_env_for", "shipped_key", "user_code_paths"]

# The staging package's name on the workers; fixed, because Ray names a package by its content's hash.
STAGING = "osmosis_shipped_paths"
_NOT_COPIED = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", ".venv", "node_modules")


def _installed_roots() -> list[Path]:
    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    roots.update([sys.prefix, sys.base_prefix])
    return [Path(r).resolve() for r in roots if r]


def _top_level_path(module: str) -> Path | None:
    """The file or package directory of ``module``'s top-level package, if it is the user's own code."""
    if module.endswith(".py") or os.sep in module:
        path = Path(module).resolve()
        return path if path.exists() else None
    top = module.split(".")[0]
    if top == "osmosis_ai":
        return None  # installed with the [ray] extra on every node
    try:
        # The importer resolves user modules from the working directory first, like `python -m`.
        found = importlib.machinery.PathFinder.find_spec(top, [os.getcwd()]) or importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if found is None:
        return None
    if found.submodule_search_locations:
        locations = list(found.submodule_search_locations)
        if not locations:
            return None
        path = Path(locations[0]).resolve()
    elif found.origin and found.origin not in ("built-in", "frozen"):
        path = Path(found.origin).resolve()
    else:
        return None
    if path is None or any(path.is_relative_to(root) for root in _installed_roots()):
        return None
    return path


def user_code_paths(modules: list[str]) -> list[str]:
    """The distinct files / directories to ship for ``modules`` (``module.path``, or a ``file.py`` path).

    Example:
        >>> user_code_paths(["json"])  # installed with Python: nothing to ship
        []
    """
    paths: list[str] = []
    for module in modules:
        path = _top_level_path(module.split(":")[0])
        if path is not None and str(path) not in paths:
            paths.append(str(path))
    return paths


def shipped_key(path: str) -> str:
    """The name a folder or file read by path gets inside the staging package (driver path -> key).

    Example:
        >>> shipped_key("/work/repo/mcp").endswith("_mcp")
        True
    """
    digest = hashlib.sha256(path.encode()).hexdigest()[:12]
    return f"{digest}_{Path(path).name}"


def find_shipped(key: str) -> Path | None:
    """Where a shipped folder or file is on this worker (None when the runtime env did not bring it)."""
    for entry in sys.path:
        candidate = Path(entry or ".") / STAGING / key
        if candidate.exists():
            return candidate
    return None


def runtime_env_for(modules: list[str], paths: list[str] | None = None) -> dict[str, Any]:
    """The ``runtime_env`` that puts the user's modules, and the folders read by path, on every worker.

    Ray uploads local paths itself only for a job's ``ray.init``; an actor's environment must name
    packages already in the cluster's store, so they are uploaded here with Ray's own packager (the
    same call ``ray.init`` makes; content-addressed, so an unchanged module is uploaded once).
    ``paths`` must be absolute; each lands under :func:`shipped_key` in the staging package.
    """
    shipped = user_code_paths(modules)
    with tempfile.TemporaryDirectory(prefix="osmosis-ship-") as scratch_root:
        if paths:
            staging = Path(scratch_root) / STAGING
            staging.mkdir()
            for path in dict.fromkeys(paths):  # an eval function's folder may be the MCP folder too
                source, target = Path(path), staging / shipped_key(path)
                if source.is_dir():
                    shutil.copytree(source, target, ignore=_NOT_COPIED)
                else:
                    shutil.copy2(source, target)
            shipped.append(str(staging))
        if not shipped:
            return {}
        from ray._private import worker
        from ray._private.runtime_env.py_modules import upload_py_modules_if_needed

        scratch = worker.global_worker.node.get_runtime_env_dir_path()
        env: dict[str, Any] = upload_py_modules_if_needed(  # Ray is untyped here: its answer is a dict
            {"py_modules": shipped}, include_gitignore=True, scratch_dir=scratch
        )
        return env
