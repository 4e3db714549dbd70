"""Shared bench plumbing: refuse debug builds, and report each bench as a ratio to its baseline.

A bench calls ``benchutil.compare(benchmark, group, label, fn, *args)``; the label ``"baseline"`` marks the
reference measured in the same run. At the end of the session every group prints its ratios (median against
median).
"""

from __future__ import annotations

from typing import Any

import pytest

from benchutil import MEDIANS
from osmosis_ai import _core


def pytest_sessionstart(session: pytest.Session) -> None:
    if _core.build_profile() != "release":
        pytest.exit("benches measure the release build only: run `make bench`", returncode=2)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not MEDIANS:
        return
    terminalreporter.section("ratios to the baseline measured in this run (median time)")
    for group, medians in sorted(MEDIANS.items()):
        baseline = medians.get("baseline")
        for label, median in sorted(medians.items()):
            if label == "baseline" or not baseline:
                continue
            terminalreporter.write_line(
                f"{group}: {label} {median * 1e3:.2f} ms vs baseline {baseline * 1e3:.2f} ms"
                f" = {median / baseline:.2f}x the baseline's time ({baseline / median:.2f}x speed)"
            )
