"""The page's summary object: every number the report and view pages print, from one place.

:func:`page_summary` is the only function that turns a results file into the numbers of a page: the
result model of the file (:func:`osmosis_ai.results.read_results`, computed once in the Rust core) in
its JSON form, which the page renders and nothing else: run and row tallies, scored statistics (None
when nothing was scored), pass@k / pass^k with intervals, durations per invocation, warnings.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["page_summary"]


def page_summary(
    path: str | os.PathLike[str], *, level: float = 0.95, skipped_tail: bool = False
) -> dict[str, Any]:
    """The numbers of one results file's page: its result model (schema ``osmosis-result-summary``).

    Args:
        path: The results file.
        level: Confidence level of the intervals.
        skipped_tail: The page's reader left out a cut-off last line (a warning says so).
    """
    from osmosis_ai.results import read_results

    summary = read_results(path, level=level).to_dict()
    if skipped_tail:
        summary["warnings"].append(
            {
                "code": "cut_off_line",
                "message": "the log's last line was cut off mid-write and is left out",
                "model_tag": None,
                "function": None,
                "count": 1,
            }
        )
    return summary
