"""eval-rubric CPU per record on the shared LLM layer, against floors that send the same judge requests.

All sides send the same judge requests to the scripted OpenAI-compatible server (a separate process, so
its CPU is not counted) and parse the same replies. Ours goes through the whole ``osmosis eval-rubric``
command in-process: config and JSONL loading, the run engine, the results log, retries bookkeeping,
results JSON, console report. Two ways in: ``base_url`` in the config (a custom server), and a provider
model (``provider: openai``) whose endpoint is overridden by ``OPENAI_BASE_URL``: the path a hosted
OpenAI-wire provider takes. The floors: an httpx loop, and hand-written HTTP/1.1 over asyncio streams.
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
from urllib.parse import urlsplit

import orjson
import pytest

from osmosis_ai import _core

if _core.build_profile() != "release":
    pytest.exit(
        "benches refuse to run on a debug build: use `make bench` (or `make build-release`)", returncode=2
    )


from benchutil import NOTES, scaled
from osmosis_ai.cli.main import main
from osmosis_ai.rubric.judge import prepare
from servers import ScriptedServer

RECORDS = scaled(1000, 300)
ROUNDS = scaled(3, 2)
CONCURRENCY = 16


@pytest.fixture(scope="module")
def server() -> Any:
    with ScriptedServer({"default": {"score": 0.5, "explanation": "scripted"}}) as running:
        yield running


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer) -> Path:
    root = tmp_path_factory.mktemp("bench-rubric")
    rubric = "    rubric: Give 1.0 if the answer is polite.\n"
    (root / "custom.yaml").write_text(
        f"rubrics:\n  - id: bench\n{rubric}    model_info: {{provider: openai, model: judge-1, "
        f"api_key: sk-bench, base_url: '{server.base_url}'}}\n",
        encoding="utf-8",
    )
    (root / "provider.yaml").write_text(
        f"rubrics:\n  - id: bench\n{rubric}    model_info: {{provider: openai, model: judge-1}}\n",
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


def _ours(workspace: Path, config: str) -> None:
    args = [
        "eval-rubric", "-r", "bench", "-d", str(workspace / "data.jsonl"), "-c", str(workspace / config),
        "-o", str(workspace / f"out-{config}.json"), "--concurrency", str(CONCURRENCY),
        "--log", str(workspace / f"log-{config}-{time.monotonic_ns()}.jsonl"),
    ]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(args)
    if code != 0:
        raise RuntimeError(f"eval-rubric exited {code}")


def _bodies(workspace: Path, server: ScriptedServer) -> list[bytes]:
    request = prepare(
        "Give 1.0 if the answer is polite.",
        "x",
        {"provider": "openai", "model": "judge-1", "api_key": "sk-bench", "base_url": server.base_url},
    )
    solutions = [json.loads(line)["solution_str"] for line in (workspace / "data.jsonl").open()]
    system = request.messages[0]
    return [
        orjson.dumps(
            {"model": "judge-1", "messages": [system, {"role": "user", "content": s}], **request.params}
        )
        for s in solutions
    ]


def _httpx_floor(bodies: list[bytes], server: ScriptedServer) -> None:
    import httpx

    async def run() -> None:
        limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
        headers = {"Authorization": "Bearer sk-bench", "Content-Type": "application/json"}
        async with httpx.AsyncClient(base_url=server.base_url, headers=headers, limits=limits) as client:
            queue = iter(bodies)

            async def worker() -> None:
                for body in queue:
                    response = await client.post("/chat/completions", content=body)
                    float(orjson.loads(response.json()["choices"][0]["message"]["content"])["score"])

            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))

    asyncio.run(run())


def _raw_floor(bodies: list[bytes], server: ScriptedServer) -> None:
    parts = urlsplit(server.base_url)
    head = f"POST {parts.path}/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"

    async def run() -> None:
        queue = iter(bodies)

        async def worker() -> None:
            reader, writer = await asyncio.open_connection("127.0.0.1", parts.port)
            for body in queue:
                writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
                header = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line[15:])
                    for line in header.split(b"\r\n")
                    if line[:15].lower() == b"content-length:"
                )
                reply = orjson.loads(await reader.readexactly(length))
                float(orjson.loads(reply["choices"][0]["message"]["content"])["score"])
            writer.close()

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))

    asyncio.run(run())


def test_eval_rubric_vs_floors(
    benchmark: Any, workspace: Path, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bench")
    litellm_before = "litellm" in sys.modules
    bodies = _bodies(workspace, server)
    contenders = {
        "ours, base_url": lambda: _ours(workspace, "custom.yaml"),
        "ours, provider openai": lambda: _ours(workspace, "provider.yaml"),
        "httpx floor": lambda: _httpx_floor(bodies, server),
        "raw HTTP/1.1 floor": lambda: _raw_floor(bodies, server),
    }
    for run in contenders.values():
        run()  # warm-up: imports and first connections
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}

    def measured() -> None:
        for name, run in contenders.items():
            samples[name].append(_cpu_wall(run))

    benchmark.group = f"eval-rubric {RECORDS} records, concurrency {CONCURRENCY}"
    benchmark.pedantic(measured, rounds=ROUNDS, iterations=1)
    ms = {name: 1000 * min(c for c, _ in s) / RECORDS for name, s in samples.items()}
    rate = {name: RECORDS / min(w for _, w in s) for name, s in samples.items()}
    benchmark.extra_info.update({f"{name} CPU-ms/record": value for name, value in ms.items()})
    parts = [f"{name} {rate[name]:.0f} rec/s {ms[name]:.3f} CPU-ms/rec" for name in contenders]
    NOTES.append(
        f"eval-rubric {RECORDS} records c={CONCURRENCY}: " + "; ".join(parts) + f"; ours/httpx floor "
        f"{ms['ours, base_url'] / ms['httpx floor']:.2f}x, ours/raw floor {ms['ours, base_url'] / ms['raw HTTP/1.1 floor']:.2f}x"
    )
    if not litellm_before:
        assert "litellm" not in sys.modules, "an OpenAI-wire provider must not import LiteLLM"
