"""`osmosis eval run` on a 0.3 workspace against an instantly answering scripted server, next to the floor.

1k and 10k rows (n=1, 16 in flight) through the real CLI: the engine, LocalBackend, the workflow's model
call, the grader, the results log and the run directory files (manifest, logs, one trajectory file per
item, the projections). Two workflows: ``bench`` calls ``get_rollout_context().chat_completions(...)``
(in ``eval run`` that is the LLM layer in this process: one HTTP request per item, to the model), and
``bench_http`` posts to the rollout's URL with one shared aiohttp session, as a workflow with its own HTTP
client does (two requests per item: workflow -> bridge -> model; the cheapest such workflow, so the extra
is the harness's cost). Floors in the same run send the same number of requests at the same concurrency:
``raw_floor_client.py`` (hand-written HTTP/1.1 over asyncio streams) and ``floor_client.py`` (bare aiohttp).
CPU is user + system of each process (``wait4``); per item = CPU / rows at each size, and the marginal
figure between the sizes (start-up charged to neither side); medians over interleaved rounds. Start-up alone: the
command on 3 rows.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from benchutil import NOTES, SHORT, scaled

ROOT = Path(__file__).resolve().parents[1]
OSMOSIS = str(Path(sys.executable).parent / "osmosis")
FLOOR = Path(__file__).with_name("floor_client.py")
RAW_FLOOR = Path(__file__).with_name("raw_floor_client.py")
# `make bench-ci` (short mode): 500 and 3,000 rows, and no own-HTTP-client run (about 10 s in all).
SIZES = (scaled(1_000, 500), scaled(10_000, 3_000))
CONCURRENCY = 16
# A whole command on this many rows is its start-up: imports, config, dataset, the bridge, the run files.
STARTUP_ROWS = 3
# Interleaved rounds (medians reported); bench-ci takes its own median over short runs.
ROUNDS = scaled(3, 1)

MAIN = """
from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, get_rollout_context


class BenchWorkflow(AgentWorkflow):
    async def run(self, ctx):
        reply = await get_rollout_context().chat_completions({"model": "bench", "messages": ctx.prompt})
        return AgentWorkflowOutput(messages=[*ctx.prompt, reply["choices"][0]["message"]])


class BenchGrader(Grader):
    async def grade(self, ctx):
        ctx.set_reward(1.0 if ctx.sample.messages[-1].get("content") == ctx.label else 0.0)
"""

MAIN_HTTP = """
import aiohttp

from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, get_rollout_context

_SESSION = None


class BenchWorkflow(AgentWorkflow):
    async def run(self, ctx):
        global _SESSION
        if _SESSION is None:
            _SESSION = aiohttp.ClientSession()
        rollout = get_rollout_context()
        async with _SESSION.post(
            rollout.chat_completions_url + "/chat/completions",
            json={"model": "bench", "messages": ctx.prompt},
            headers={"Authorization": "Bearer " + rollout.api_key},
        ) as response:
            reply = (await response.json())["choices"][0]["message"]
        return AgentWorkflowOutput(messages=[*ctx.prompt, reply])


class BenchGrader(Grader):
    async def grade(self, ctx):
        ctx.set_reward(1.0 if ctx.sample.messages[-1].get("content") == ctx.label else 0.0)
"""

TOML = """[experiment]
rollout = "%s"
entrypoint = "main.py"
model_path = "openai/bench-model"
dataset = "bench"

[evaluation]
batch_size = %d
agent_workflow_timeout_s = 60
grader_timeout_s = 60

[secrets]
required = []
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    # In memory where there is /dev/shm: on this shared machine's ext4, creating a file (the trajectory
    # file per item) cost 10 to 400 us of system CPU from one minute to the next, which buried the
    # harness's own cost; on tmpfs it is under 10.
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        root = Path(tempfile.mkdtemp(prefix="osmosis-bench-eval-run-", dir=shm))
        yield from _filled(root)
        shutil.rmtree(root, ignore_errors=True)
    else:
        yield from _filled(tmp_path_factory.mktemp("bench-eval-run"))


def _filled(root: Path):
    for folder in ("configs/eval", "configs/training", "data"):
        (root / folder).mkdir(parents=True)
    for rollout, main in (("bench", MAIN), ("bench_http", MAIN_HTTP)):
        (root / "rollouts" / rollout).mkdir(parents=True)
        (root / "rollouts" / rollout / "main.py").write_text(main)
        (root / f"configs/eval/{rollout}.toml").write_text(TOML % (rollout, CONCURRENCY))
    for rows in (STARTUP_ROWS, *SIZES):
        with (root / f"data/rows{rows}.jsonl").open("w") as out:
            for i in range(rows):
                row = {"system_prompt": "Answer with a number.", "user_prompt": f"row {i}: what is {i} + 1?"}
                out.write(json.dumps({**row, "ground_truth": str(i + 1)}) + "\n")
    yield root


def _cpu(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one process run to the end."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    assert code == 0, stderr
    return usage.ru_utime + usage.ru_stime, wall


def test_eval_run_cpu_per_item(benchmark, scripted_url, workspace) -> None:
    def floor(script: Path, rows: int) -> tuple[float, float]:
        return _cpu(
            [sys.executable, str(script), scripted_url, "bench-model", str(rows), str(CONCURRENCY)], ROOT
        )

    def ours(rollout: str, rows: int) -> tuple[float, float]:
        argv = [
            OSMOSIS, "eval", "run", f"configs/eval/{rollout}.toml", "--dataset-file", f"data/rows{rows}.jsonl",
            "--name", f"{rollout}-{rows}-{time.monotonic_ns()}", "-y", "--base-url", scripted_url, "--plain",
        ]  # fmt: skip
        return _cpu(argv, workspace)

    # Each round measures everything once, interleaved, so a load change on this shared machine lands on
    # every side of a ratio; the figures are the medians over the rounds.
    rounds: list[dict[str, dict[int, tuple[float, float]]]] = []

    def measure_round() -> None:
        figures: dict[str, dict[int, tuple[float, float]]] = {
            "raw": {},
            "aiohttp": {},
            "ours": {},
            "http": {},
        }
        figures["ours"][STARTUP_ROWS] = ours("bench", STARTUP_ROWS)
        for rows in SIZES:
            figures["raw"][rows] = floor(RAW_FLOOR, rows)
            figures["aiohttp"][rows] = floor(FLOOR, rows)
            figures["ours"][rows] = ours("bench", rows)
            if not SHORT:
                figures["http"][rows] = ours("bench_http", rows)
        rounds.append(figures)

    benchmark.group = "eval run"
    benchmark.pedantic(measure_round, rounds=ROUNDS, iterations=1)
    small, big = SIZES

    def per_item(figures: dict, name: str, rows: int) -> float:
        return 1000 * figures[name][rows][0] / rows

    def marginal(figures: dict, name: str) -> float:
        return 1000 * (figures[name][big][0] - figures[name][small][0]) / (big - small)

    def median(values: list[float]) -> float:
        return statistics.median(values)

    def over_rounds(fn: Any, *args: Any) -> float:
        return median([fn(figures, *args) for figures in rounds])

    sides = ["ours", "http"] if not SHORT else ["ours"]
    for rows in SIZES:
        http = (
            f", own-HTTP-client workflow {over_rounds(per_item, 'http', rows):.3f}" if "http" in sides else ""
        )
        rate = median([rows / figures["ours"][rows][1] for figures in rounds])
        NOTES.append(
            f"eval run {rows} rows: {over_rounds(per_item, 'ours', rows):.3f} CPU-ms/item ({rate:.0f} items/s)"
            f"{http}; raw floor {over_rounds(per_item, 'raw', rows):.3f} CPU-ms/req; aiohttp floor "
            f"{over_rounds(per_item, 'aiohttp', rows):.3f} CPU-ms/req (medians of {len(rounds)} rounds)"
        )
    startup_cpu = median([1000 * f["ours"][STARTUP_ROWS][0] for f in rounds])
    startup_wall = median([1000 * f["ours"][STARTUP_ROWS][1] for f in rounds])
    NOTES.append(
        f"eval run start-up ({STARTUP_ROWS} rows): {startup_wall:.0f} ms wall, {startup_cpu:.0f} CPU-ms"
    )
    for name, label in (("ours", "eval run (context client)"), ("http", "eval run (own HTTP client)")):
        if name not in sides:
            continue
        raw_ratios = [marginal(f, name) / marginal(f, "raw") for f in rounds]
        aiohttp_ratios = [marginal(f, name) / marginal(f, "aiohttp") for f in rounds]
        NOTES.append(
            f"{label} marginal {small}->{big}: {over_rounds(marginal, name):.3f} CPU-ms/item; raw floor "
            f"{over_rounds(marginal, 'raw'):.3f} ({median(raw_ratios):.1f}x, rounds "
            f"{min(raw_ratios):.1f}-{max(raw_ratios):.1f}x), aiohttp floor {over_rounds(marginal, 'aiohttp'):.3f} "
            f"({median(aiohttp_ratios):.1f}x, rounds {min(aiohttp_ratios):.1f}-{max(aiohttp_ratios):.1f}x); "
            f"flatness ({big} vs {small} per item) "
            f"{median([per_item(f, name, big) / per_item(f, name, small) for f in rounds]):.2f}"
        )
    benchmark.extra_info.update(
        ours_marginal_cpu_ms=over_rounds(marginal, "ours"),
        **({"http_marginal_cpu_ms": over_rounds(marginal, "http")} if "http" in sides else {}),
        raw_floor_ms=over_rounds(marginal, "raw"),
        startup_cpu_ms=startup_cpu,
        aiohttp_floor_ms=over_rounds(marginal, "aiohttp"),
    )
