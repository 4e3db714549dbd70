"""Loading a package's public names on first use (PEP 562), one way for every package that does it.

A name whose module needs an optional extra that is not installed raises
:class:`~osmosis_ai.errors.MissingExtraError` saying what to install.
"""

from __future__ import annotations

import importlib

# Imported by `osmosis_ai/__init__.py` on every start: no `typing` (see the guard there).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["load_attribute"]


def load_attribute(package: str, table: Mapping[str, str], name: str, namespace: dict[str, Any]) -> Any:
    """Imports ``name`` from the module ``table`` maps it to and caches it in ``namespace``.

    Args:
        package: The package asking (for messages).
        table: Public name -> the module that defines it, or ``module:attribute`` when the name there
            differs (an established alias).
        name: The attribute asked for.
        namespace: The package's ``globals()``; the value is stored there, so this runs once per name.

    Raises:
        AttributeError: ``name`` is not in ``table``.
        MissingExtraError: Its module needs an extra that is not installed.

    Example:
        >>> def __getattr__(name):  # doctest: +SKIP
        ...     return load_attribute(__name__, _LAZY, name, globals())
    """
    target = table.get(name)
    if target is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    try:
        value = getattr(
            importlib.import_module(module), attribute or name
        )  # a lazy package imports on getattr
    except ImportError as exc:
        from osmosis_ai.extras import missing_extra

        raise (missing_extra(exc, f"{package}.{name}") or exc) from exc
    namespace[name] = value
    return value
