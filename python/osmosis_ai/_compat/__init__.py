"""The one home of the import paths kept for users' code: a table of lazy re-exports, no modules.

:data:`~osmosis_ai._compat.paths.ESTABLISHED` maps each established path (``osmosis_ai.utils``,
``osmosis_ai.rollout.core.schemas``, ...) to its names and their homes. :func:`install` (called by
``osmosis_ai/__init__.py``) puts a finder at the front of ``sys.meta_path`` that makes each such path a
module on first import; its names load from their homes on first use
(:func:`osmosis_ai._lazy.load_attribute`), so the table draws no import arrows and ``import
osmosis_ai.utils`` loads nothing else. The finder answers first because a directory at a package path (the
``__init__.pyi`` of :mod:`osmosis_ai._compat.stubs`, or a ``__pycache__`` left by an upgrade in place)
would otherwise become an empty namespace package; it is one dict lookup for any other import, and
``tests/compat`` checks that no module file of the package has a row's name.
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec

from osmosis_ai._compat.paths import ESTABLISHED, NOT_PROVIDED, PACKAGES

# Imported on every start (by `osmosis_ai/__init__.py`): no `typing`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

__all__ = ["install"]


class _Loader:
    """Fills an established path's module: ``__all__`` and a PEP 562 ``__getattr__`` over its table row."""

    @staticmethod
    def create_module(spec: ModuleSpec) -> None:
        return None  # the default module object

    @staticmethod
    def exec_module(module: ModuleType) -> None:
        from osmosis_ai._lazy import load_attribute

        name = module.__name__
        table = ESTABLISHED[name]
        namespace = vars(module)

        def __getattr__(attribute: str) -> Any:
            return load_attribute(name, table, attribute, namespace)

        def __dir__() -> list[str]:
            return sorted({*namespace, *table})

        module.__doc__ = f"Established import path ``{name}``: re-exports only (see osmosis_ai._compat)."
        module.__all__ = sorted(table)  # type: ignore[attr-defined]
        module.__getattr__ = __getattr__  # type: ignore[method-assign]
        module.__dir__ = __dir__  # type: ignore[method-assign]


class _Finder:
    """Answers the established paths (it is first on ``sys.meta_path``) and declines every other name."""

    @staticmethod
    def find_spec(fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if fullname in NOT_PROVIDED:
            raise ModuleNotFoundError(NOT_PROVIDED[fullname], name=fullname)
        if fullname not in ESTABLISHED:
            return None
        return ModuleSpec(fullname, _LOADER, is_package=fullname in PACKAGES)  # type: ignore[arg-type]


_LOADER = _Loader()
_FINDER = _Finder()


def install() -> None:
    """Makes the established paths importable (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
