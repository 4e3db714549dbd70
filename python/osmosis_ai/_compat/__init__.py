"""The one home of the import paths kept for users' code: a table of lazy re-exports, no modules.

:data:`~osmosis_ai._compat.paths.ESTABLISHED` maps each established path (``osmosis_ai.utils``,
``osmosis_ai.rollout.core.schemas``, ...) to its names and their homes. :func:`install` (called by
``osmosis_ai/__init__.py``) puts a finder at the end of ``sys.meta_path`` that makes each such path a module
on first import; its names load from their homes on first use (:func:`osmosis_ai._lazy.load_attribute`),
so the table draws no import arrows and ``import osmosis_ai.utils`` loads nothing else. A real module of
the package always wins: the finder is asked only when no file answers the name.
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
    """Answers the established paths no file of the package answers (it is last on ``sys.meta_path``)."""

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
        sys.meta_path.append(_FINDER)  # type: ignore[arg-type]
