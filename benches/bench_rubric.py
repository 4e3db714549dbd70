"""eval-rubric throughput and CPU per record, against the floor of a minimal asyncio + HTTP loop.

Both sides send the same judge requests to the scripted OpenAI-compatible server (a separate process, so
its CPU is not counted) and parse the same replies. Ours goes through the whole ``osmosis eval-rubric``
command in-process: config and JSONL loading, LiteLLM, retries bookkeeping, results JSON, console report.
CPU is this process's user+system time (all threads). Run with ``make bench``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai import _core

if _core.build_profile() != "release":
    pytest.exit(
        "benches refuse to run on a debug build: use `make bench` (or `make build-release`)", returncode=2
    )

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from osmosis_ai.cli.main import main
from osmosis_ai.rubric.judge import prepare
from servers import ScriptedServer

RECORDS = 200
ROUNDS = 3
RESULTS: dict[str, dict[str, float]] = {}


@pytest.fixture(scope="module")
def server() -> Any:
    with ScriptedServer({"default": {"score": 0.5, "explanation": "scripted"}}) as running:
        yield running


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer) -> Path:
    root = tmp_path_factory.mktemp("bench-rubric")
    (root / "rubric_configs.yaml").write_text(
        "rubrics:\n  - id: bench\n    rubric: Give 1.0 if the answer is polite.\n"
        "    model_info: {provider: openai, model: judge-1, api_key: sk-bench, "
        f"base_url: '{server.base_url}'}}\n",
        encoding="utf-8",
    )
    with (root / "data.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(RECORDS):
            fh.write(json.dumps({"rubric_id": "bench", "solution_str": f"Thank you, answer {i}."}) + "\n")
    return root


def _cpu_wall(fn: Any) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def _ours(workspace: Path, concurrency: int) -> None:
    args = [
        "eval-rubric",
        "-r",
        "bench",
        "-d",
        str(workspace / "data.jsonl"),
        "-c",
        str(workspace / "rubric_configs.yaml"),
        "-o",
        str(workspace / f"out-{concurrency}.json"),
        "--concurrency",
        str(concurrency),
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(args)
    if code != 0:
        raise RuntimeError(f"eval-rubric exited {code}")


def _floor(workspace: Path, server: ScriptedServer, concurrency: int) -> None:
    """The same requests with httpx and nothing else: the least CPU a Python client can spend."""
    import httpx

    request = prepare(
        "Give 1.0 if the answer is polite.",
        "x",
        {"provider": "openai", "model": "judge-1", "api_key": "sk-bench", "base_url": server.base_url},
    )
    template = {k: request.kwargs[k] for k in ("messages", "response_format", "temperature")}
    solutions = [json.loads(line)["solution_str"] for line in (workspace / "data.jsonl").open()]

    async def run() -> None:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        headers = {"Authorization": "Bearer sk-bench"}
        async with httpx.AsyncClient(base_url=server.base_url, headers=headers, limits=limits) as client:
            queue = iter(solutions)

            async def worker() -> None:
                for solution in queue:
                    messages = [template["messages"][0], {"role": "user", "content": solution}]
                    body = {**template, "model": "judge-1", "messages": messages}
                    response = await client.post("/chat/completions", json=body)
                    reply = json.loads(response.json()["choices"][0]["message"]["content"])
                    float(reply["score"])

            await asyncio.gather(*(worker() for _ in range(concurrency)))

    asyncio.run(run())


@pytest.mark.parametrize("concurrency", [1, 16])
def test_eval_rubric_vs_floor(
    benchmark: Any,
    capsys: pytest.CaptureFixture[str],
    workspace: Path,
    server: ScriptedServer,
    concurrency: int,
) -> None:
    _ours(workspace, concurrency)  # warm-up: LiteLLM import and client construction
    _floor(workspace, server, concurrency)
    ours: list[tuple[float, float]] = []
    floor: list[tuple[float, float]] = []

    def measured() -> None:
        ours.append(_cpu_wall(lambda: _ours(workspace, concurrency)))
        floor.append(_cpu_wall(lambda: _floor(workspace, server, concurrency)))

    benchmark.pedantic(measured, rounds=ROUNDS, iterations=1)
    ours_cpu, ours_wall = min(c for c, _ in ours), min(w for _, w in ours)
    floor_cpu, floor_wall = min(c for c, _ in floor), min(w for _, w in floor)
    figures = {
        "ours_records_per_s": RECORDS / ours_wall,
        "ours_cpu_ms_per_record": 1000 * ours_cpu / RECORDS,
        "floor_records_per_s": RECORDS / floor_wall,
        "floor_cpu_ms_per_record": 1000 * floor_cpu / RECORDS,
        "cpu_ratio": ours_cpu / floor_cpu,
    }
    benchmark.extra_info.update(figures)
    RESULTS[f"concurrency {concurrency}"] = figures
    line = (
        f"\neval-rubric c={concurrency}: {figures['ours_records_per_s']:.0f} rec/s, "
        f"{figures['ours_cpu_ms_per_record']:.2f} ms CPU/rec | "
        f"floor: {figures['floor_records_per_s']:.0f} rec/s, "
        f"{figures['floor_cpu_ms_per_record']:.2f} ms CPU/rec | CPU ratio {figures['cpu_ratio']:.2f}x "
        f"(target at c=16: <= 3x)"
    )
    with capsys.disabled():  # show the figures under `make bench`, which captures output
        print(line)
