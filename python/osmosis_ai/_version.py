"""The package version, read on first use from the compiled core.

Its one home is ``version`` under ``[workspace.package]`` in ``Cargo.toml``: maturin writes it into the
wheel's metadata and the core compiles it in (``_core.__version__``). Reading it here from the core,
not from ``importlib.metadata`` (~40 ms to import), keeps it cheap; it is resolved lazily (PEP 562) so
``import osmosis_ai`` and ``osmosis --help`` do not load the core for it. ``tests/test_core.py`` checks
that ``Cargo.toml``, the installed metadata and the loaded core agree (a stale build fails it).
"""

from __future__ import annotations

# The distribution's name on package indexes (``pip install osmosis-ai``).
DISTRIBUTION = "osmosis-ai"

TYPE_CHECKING = False
if TYPE_CHECKING:
    __version__: str


def __getattr__(name: str) -> str:
    if name != "__version__":
        raise AttributeError(f"module 'osmosis_ai._version' has no attribute {name!r}")
    from osmosis_ai._core import __version__ as version

    globals()["__version__"] = version
    return version
