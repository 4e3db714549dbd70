"""`--backend ray` against the local backend, in the same run, through the real `osmosis eval` command.

* CPU-bound: an eval function doing ~20 ms of pure-Python work per run, 2,000 runs. Locally the GIL
  serialises it; Ray with 2 workers (2 processes) should approach 2x on 2 free cores.
* Per-item overhead: an instant eval function at two sizes; the slope of wall time over runs removes the
  fixed start-up (actors starting, modules loading) and leaves what each item costs on either backend.

The agent answers from the row without calling a model, so only the engine, the backend and the eval
function are measured. A local Ray head (2 CPUs) is started on this machine for the module. Kept out of
`make bench-ci` (its tests are deselected there): it needs minutes and every core.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from benchutil import NOTES, compare, scaled
from osmosis_ai.cli.main import main

ray = pytest.importorskip("ray")

RUNS = scaled(2000, 200)
SMALL = RUNS // 10
WORK_MS = 20.0

AGENT = """
from osmosis_ai.rollout import RolloutAgentLoop

class Oracle(RolloutAgentLoop):
    name = "oracle"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        answer = {"role": "assistant", "content": ctx.request.metadata.get("ground_truth", "")}
        return ctx.complete([*ctx.request.messages, answer])

agent = Oracle()
"""

SCORES = """
import os

SPIN = int(os.environ.get("OSMOSIS_BENCH_SPIN", "0"))

def busy(solution_str, ground_truth, extra_info=None):
    total = 0
    for i in range(SPIN):  # pure-Python work that holds the GIL
        total += i * i % 7
    return 1.0 if solution_str.strip() == ground_truth else 0.0

def instant(solution_str, ground_truth, extra_info=None):
    return 1.0 if solution_str.strip() == ground_truth else 0.0
"""


def _spin_for(ms: float) -> int:
    """Loop iterations of ``busy`` that take ``ms`` on this machine."""
    n = 200_000
    started = time.perf_counter()
    total = 0
    for i in range(n):
        total += i * i % 7
    elapsed = time.perf_counter() - started
    return max(1, int(n * ms / 1000.0 / elapsed))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ray-bench")
    (root / "bench_ray_agent.py").write_text(AGENT)
    (root / "bench_ray_scores.py").write_text(SCORES)
    with (root / "data.jsonl").open("w") as out:
        for i in range(RUNS):
            row = {"system_prompt": "s", "user_prompt": f"q{i}", "ground_truth": str(i % 3)}
            out.write(json.dumps(row) + "\n")
    return root


@pytest.fixture(scope="module")
def ray_head(workspace: Path) -> Any:
    os.environ["OSMOSIS_BENCH_SPIN"] = str(_spin_for(WORK_MS))
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # no usage report over the internet
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


def _eval(workspace: Path, fn: str, rows: int, *backend: str) -> None:
    log = workspace / f"log-{time.monotonic_ns()}.jsonl"
    cwd = os.getcwd()
    os.chdir(workspace)
    try:
        code = main(
            ["eval", "-m", "bench_ray_agent:agent", "-d", "data.jsonl", "--limit", str(rows),
             "--model", "bench", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "sk-local",
             "--eval-fn", f"bench_ray_scores:{fn}", "--no-preflight", "-q", "--log", str(log), *backend]
        )  # fmt: skip
    finally:
        os.chdir(cwd)
    assert code == 0
    assert sum(1 for _ in log.open()) == rows + 1  # every run logged once


RAY = ("--backend", "ray", "--ray-workers", "2")


@pytest.mark.parametrize("backend", ["baseline", "ray"])
def test_ray_backend_cpu_bound(benchmark: Any, ray_head: Any, workspace: Path, backend: str) -> None:
    args = RAY if backend == "ray" else ()
    compare(
        benchmark,
        "ray: 2,000 runs of a 20 ms eval function",
        backend,
        _eval,
        workspace,
        "busy",
        RUNS,
        *args,
        rounds=1,
    )


def test_ray_backend_overhead_per_item(benchmark: Any, ray_head: Any, workspace: Path) -> None:
    def wall(rows: int, *args: str) -> float:
        started = time.perf_counter()
        _eval(workspace, "instant", rows, *args)
        return time.perf_counter() - started

    def measure() -> dict[str, float]:
        slopes = {}
        for name, args in (("local", ()), ("ray", RAY)):
            small, large = wall(SMALL, *args), wall(RUNS, *args)
            slopes[name] = (large - small) / (RUNS - SMALL) * 1000.0
            slopes[f"{name} start-up s"] = small - slopes[name] * SMALL / 1000.0
        return slopes

    slopes = benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update(slopes)
    NOTES.append(
        f"ray backend, instant eval function: {slopes['ray']:.3f} ms per run on Ray (2 workers) vs "
        f"{slopes['local']:.3f} ms locally; fixed start-up {slopes['ray start-up s']:.1f} s on Ray"
    )
