"""Shared bench plumbing: refuse debug builds, and print each bench as a ratio to a baseline of the same run.

Two helpers feed the closing summary:

* ``benchutil.compare(benchmark, group, label, fn, *args)``: the label ``"baseline"`` marks the reference;
  every other label prints as a ratio to it.
* the ``scripted_url`` fixture: the base URL of the tests' scripted OpenAI-compatible server (instant
  answers) in its own process, started once per bench module.
* the ``record`` fixture (dataset benches): the name ``"osmosis"`` is ours; every other name is a baseline.
  ``peak_memory`` collects peak RSS figures.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchutil import MEDIANS, NOTES
from osmosis_ai import _core

# The test servers (tests/servers) serve the benches too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

# group -> name -> median seconds, filled through the `record` fixture.
RESULTS: dict[str, dict[str, float]] = defaultdict(dict)
MEMORY: dict[str, int] = {}


def pytest_configure(config: pytest.Config) -> None:
    if _core.build_profile() != "release":
        raise pytest.UsageError(
            "benches measure the release build only: run `make bench` (or `make build-release` first)"
        )


@pytest.fixture(scope="module")
def scripted_url() -> Iterator[str]:
    from servers import ScriptedServer

    with ScriptedServer() as running:
        yield running.base_url


@pytest.fixture
def record(benchmark: Any) -> Any:
    """Runs ``benchmark.pedantic`` and keeps the median under (group, name) for the ratio table."""

    def run(group: str, name: str, func: Any, rounds: int = 3) -> Any:
        benchmark.group = group
        result = benchmark.pedantic(func, rounds=rounds, iterations=1, warmup_rounds=0)
        RESULTS[group][name] = benchmark.stats.stats.median
        return result

    return run


@pytest.fixture
def peak_memory() -> dict[str, int]:
    """Peak RSS figures (KiB) by label, printed in the summary."""
    return MEMORY


def _compare_lines() -> list[str]:
    lines = []
    for group, medians in sorted(MEDIANS.items()):
        baseline = medians.get("baseline")
        for label, median in sorted(medians.items()):
            if label != "baseline" and baseline:
                lines.append(
                    f"{group}: {label} {median * 1e3:.2f} ms vs baseline {baseline * 1e3:.2f} ms"
                    f" = {median / baseline:.2f}x the baseline's time ({baseline / median:.2f}x speed)"
                )
    return lines


def _record_lines() -> list[str]:
    lines = []
    for group, results in sorted(RESULTS.items()):
        ours = results.get("osmosis")
        if ours is None:
            continue
        for name, median in sorted(results.items()):
            if name != "osmosis":
                lines.append(
                    f"{group:<28} vs {name:<22} {median / ours:6.2f}x  ({median:.3f}s vs {ours:.3f}s)"
                )
    lines += [f"peak RSS {name:<34} {kib / 1024:8.1f} MiB" for name, kib in sorted(MEMORY.items())]
    return lines


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = _compare_lines() + _record_lines() + NOTES
    if lines:
        terminalreporter.section("ratios to the baselines measured in this run (> 1x speed: we are faster)")
        for line in lines:
            terminalreporter.write_line(line)
