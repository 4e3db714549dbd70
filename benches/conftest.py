"""Shared bench plumbing: refuse debug builds; print ratios against the baselines of the same run."""

from __future__ import annotations

from collections import defaultdict

import pytest

from osmosis_ai import _core

# group -> name -> median seconds, filled by the benches through the `record` fixture.
RESULTS: dict[str, dict[str, float]] = defaultdict(dict)
MEMORY: dict[str, int] = {}


def pytest_configure(config: pytest.Config) -> None:
    if _core.build_profile() != "release":
        raise pytest.UsageError(
            "benches measure the release build only: run `make bench` (or `make build-release` first)"
        )


def pytest_collect_file(file_path, parent):  # type: ignore[no-untyped-def]
    """Collects `bench_*.py` modules (pytest itself only looks for `test_*.py`)."""
    if file_path.suffix == ".py" and file_path.name.startswith("bench_"):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


@pytest.fixture
def record(benchmark):  # type: ignore[no-untyped-def]
    """Runs ``benchmark.pedantic`` and keeps the median under (group, name) for the ratio table."""

    def run(group: str, name: str, func, rounds: int = 3):  # type: ignore[no-untyped-def]
        benchmark.group = group
        result = benchmark.pedantic(func, rounds=rounds, iterations=1, warmup_rounds=0)
        RESULTS[group][name] = benchmark.stats.stats.median
        return result

    return run


@pytest.fixture
def peak_memory() -> dict[str, int]:
    """Peak RSS figures (KiB) by label, printed in the summary."""
    return MEMORY


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if not RESULTS and not MEMORY:
        return
    tr = terminalreporter
    tr.section("dataset bench ratios (baseline median / ours median; > 1 means we are faster)")
    for group, results in sorted(RESULTS.items()):
        ours = results.get("osmosis")
        if ours is None:
            continue
        for name, median in sorted(results.items()):
            if name != "osmosis":
                tr.write_line(
                    f"{group:<28} vs {name:<22} {median / ours:6.2f}x  ({median:.3f}s vs {ours:.3f}s)"
                )
    for name, kib in sorted(MEMORY.items()):
        tr.write_line(f"peak RSS {name:<34} {kib / 1024:8.1f} MiB")
