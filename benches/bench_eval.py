"""The whole `osmosis eval` harness against an instantly answering scripted server, next to the floor.

For batch sizes 1, 16 and 64, 10k rows x 1 run each through the real CLI (agent loop, tools offered, eval
function, results log, summary), timed and charged CPU (user + system of the process, from ``wait4``). Two
floors send the same requests at the same concurrency: ``floor_client.py`` (a bare aiohttp loop) and
``raw_floor_client.py`` (hand-written HTTP/1.1 over asyncio streams, no HTTP library). Figures are
*marginal* CPU per run: the CPU of 10k rows minus that of 1k rows, over the 9k rows between, so process
start-up (imports, the preflight) is charged to neither side. The server runs in its own process, so its CPU is charged to neither. Peak RSS is compared
between 10k and OSMOSIS_BENCH_BIG_ROWS (default 100k) rows at batch 64 (memory must not grow with the dataset).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from benchutil import NOTES, measured, scaled

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
OSMOSIS = str(Path(sys.executable).parent / "osmosis")
FLOOR = Path(__file__).with_name("floor_client.py")
RAW_FLOOR = Path(__file__).with_name("raw_floor_client.py")
ROWS = scaled(10_000, 3_000)
SMALL = scaled(1_000, 500)


def _write_rows(path: Path, count: int) -> Path:
    with path.open("w") as out:
        for i in range(count):
            row = {"system_prompt": "Answer with a number.", "user_prompt": f"row {i}: what is {i} + 1?"}
            out.write(json.dumps({**row, "ground_truth": str(i + 1)}) + "\n")
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench-eval")
    return {
        "root": root,
        ROWS: _write_rows(root / "rows-main.jsonl", ROWS),
        SMALL: _write_rows(root / "rows1k.jsonl", SMALL),
    }


def _eval_argv(url: str, dataset: Path, log: Path, batch: int) -> list[str]:
    return [
        OSMOSIS, "eval", "-m", "math_agent:agent_loop", "-d", str(dataset), "--model", "bench-model",
        "--base-url", url, "--eval-fn", "reward_fn.compute_reward:numbers_match_reward",
        "--batch-size", str(batch), "--log", str(log), "-q", "--max-failure-rate", "1",
    ]  # fmt: skip


def _marginal_ms(run) -> tuple[float, float]:
    """(marginal CPU-ms per row between SMALL and ROWS rows, wall rows/s at ROWS)."""
    small, big = run(SMALL), run(ROWS)
    return 1000 * (big["cpu"] - small["cpu"]) / (ROWS - SMALL), ROWS / big["wall"]


@pytest.mark.parametrize("batch", [1, 16, 64])
def test_eval_harness(benchmark, scripted_url, data, batch: int) -> None:
    def client(script: Path):
        return lambda rows: measured(
            [sys.executable, str(script), scripted_url, "bench-model", str(rows), str(batch)], ROOT
        )

    def ours(rows: int) -> dict[str, float]:
        log = data["root"] / f"log-{batch}-{rows}-{time.monotonic_ns()}.jsonl"
        return measured(_eval_argv(scripted_url, data[rows], log, batch), EXAMPLES)

    aio_ms, aio_rate = _marginal_ms(client(FLOOR))
    raw_ms, raw_rate = _marginal_ms(client(RAW_FLOOR))
    figures: dict[str, float] = {}
    benchmark.group = f"eval batch={batch}"
    benchmark.pedantic(
        lambda: figures.update(zip(("ms", "rate"), _marginal_ms(ours), strict=True)), rounds=1, iterations=1
    )
    NOTES.append(
        f"eval batch={batch}: osmosis eval {figures['rate']:.0f} runs/s, {figures['ms']:.3f} marginal CPU-ms/run; "
        f"raw HTTP/1.1 floor {raw_rate:.0f} req/s, {raw_ms:.3f} CPU-ms/req ({figures['ms'] / raw_ms:.1f}x); "
        f"aiohttp floor {aio_rate:.0f} req/s, {aio_ms:.3f} CPU-ms/req ({figures['ms'] / aio_ms:.1f}x)"
    )
    benchmark.extra_info.update(
        ours_marginal_cpu_ms=figures["ms"], raw_floor_ms=raw_ms, aiohttp_floor_ms=aio_ms
    )


BIG = int(os.environ.get("OSMOSIS_BENCH_BIG_ROWS", "100000"))  # 1000000 for the 10k -> 1M check


def test_eval_memory_is_flat_in_rows(benchmark, scripted_url, data) -> None:
    big = _write_rows(data["root"] / "rows-big.jsonl", BIG)
    small_log, big_log = data["root"] / "mem-small.jsonl", data["root"] / "mem-big.jsonl"
    small = measured(_eval_argv(scripted_url, data[ROWS], small_log, 64), EXAMPLES)
    large: dict[str, float] = {}
    benchmark.group = f"eval {BIG} rows, batch=64"
    benchmark.pedantic(
        lambda: large.update(measured(_eval_argv(scripted_url, big, big_log, 64), EXAMPLES)), rounds=1
    )
    NOTES.append(
        f"eval peak RSS at batch 64: {small['rss_mib']:.1f} MiB for 10k rows, {large['rss_mib']:.1f} MiB for {BIG} rows "
        f"({large['rss_mib'] / small['rss_mib']:.2f}x; {BIG / large['wall']:.0f} runs/s, "
        f"{1000 * large['cpu'] / BIG:.2f} CPU-ms/run over {BIG})"
    )
