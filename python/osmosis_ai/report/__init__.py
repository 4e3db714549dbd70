"""Pages for results: :func:`report` (one results file or several) and :func:`compare` (two runs, paired).

Both return plain data and, given ``output``, also write one self-contained HTML page (inline SVG
plots from Vega-Lite, every row, no network); ``osmosis view`` serves the same page (:mod:`._view`).
The statistics come from the Rust core via :mod:`osmosis_ai.stats`; vl-convert is imported on use
(``osmosis-ai[report]``).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

__all__ = ["Report", "RunComparison", "RunReport", "compare", "report"]

_LAZY = {
    "Report": "osmosis_ai.report._api",
    "report": "osmosis_ai.report._api",
    "RunReport": "osmosis_ai.report._run",
    "RunComparison": "osmosis_ai.report._compare",
    "compare": "osmosis_ai.report._compare",
}

if TYPE_CHECKING:
    from osmosis_ai.report._api import Report, report
    from osmosis_ai.report._compare import RunComparison, compare
    from osmosis_ai.report._run import RunReport


def __getattr__(name: str) -> Any:
    # vl-convert loads only when a report is made, not on `import osmosis_ai`.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'osmosis_ai.report' has no attribute {name!r}")


class _CallableModule(types.ModuleType):
    """``osmosis_ai.report`` is this package once anything imported it; calling it calls :func:`report`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.report(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
