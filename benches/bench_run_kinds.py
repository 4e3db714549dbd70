"""The three run kinds on realistic rows: CPU per item against the raw floor, and peak memory by size.

``osmosis eval`` (an agent loop with a tool on offer, an eval function), ``osmosis eval rubric`` (an LLM
judge) and ``osmosis eval run`` (a 0.3 workflow and grader), each on rows with ~2 KB prompts, writing the
results log and ``-o`` (eval run: its run directory), against an instantly answering scripted server in
its own process (its CPU is charged to no side). The floor is ``raw_floor_client.py``: hand-written
HTTP/1.1 and orjson sending the very request bodies our run sent (captured from the server), at the same
concurrency. CPU is user + system of each process (``wait4``); per item is *marginal*, (CPU at the large
size - CPU at the small one) / the rows between, so start-up is charged to neither side. The server and
each client run on one shared core (``benchutil.pin_to_one_core``): on two cores the floor's CPU per item
fell by a quarter to a third under load (more replies per wakeup) while ours moved less, so the ratio rose
with the load; on one core both sides batch alike whatever else runs. Peak RSS is the
process's own high-water mark (VmHWM) at each size: flat memory means the 100k-row figure stays within
1.2x of the 1k one. ``make bench-ci`` runs 1k and 10k rows; ``make bench`` adds 100k.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench_eval_run import MAIN as WORKFLOW
from bench_eval_run import TOML as EVAL_RUN_TOML
from benchutil import NOTES, SHORT, measured, pin_to_one_core
from servers import ScriptedServer

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
OSMOSIS = str(Path(sys.executable).parent / "osmosis")
RAW_FLOOR = Path(__file__).with_name("raw_floor_client.py")
SMALL, LARGE = 1_000, 10_000
SIZES = (SMALL, LARGE) if SHORT else (SMALL, LARGE, 100_000)
CONCURRENCY = 16
KINDS = ("eval", "eval rubric", "eval run")

_WORDS = [
    "the",
    "model",
    "should",
    "answer",
    "concisely",
    "and",
    "cite",
    "the",
    "relevant",
    "passage",
    "from",
    "the",
    "context",
    "before",
    "giving",
    "a",
    "final",
    "number",
    "solve",
    "explain",
    "step",
    "why",
    "because",
    "therefore",
]


def _texts(words: int, count: int = 997) -> list[str]:
    rng = random.Random(words)
    return [" ".join(rng.choice(_WORDS) for _ in range(words)) for _ in range(count)]


def _rows(kind: str, count: int) -> Iterator[dict[str, object]]:
    """~2 KB rows: a ~300 B system prompt and a ~1.7 KB user prompt (eval rubric: a chat to judge)."""
    system, prompts, answers = _texts(45)[0], _texts(260), _texts(40)
    for i in range(count):
        prompt = f"{prompts[i % len(prompts)]}\n\nQuestion {i}: what is {i} + 1?"
        if kind == "eval rubric":
            answer = f"{answers[i % len(answers)]} The answer is {i + 1}."
            yield {
                "messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]
            }
        else:
            yield {"system_prompt": system, "user_prompt": prompt, "ground_truth": str(i + 1)}


def _write(path: Path, kind: str, count: int) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for row in _rows(kind, count):
            out.write(json.dumps(row) + "\n")
    return path


class _Kind:
    """One run kind: its dataset files, its command line, and where it runs."""

    def __init__(self, kind: str, root: Path, url: str) -> None:
        self.kind, self.url = kind, url
        self.root = root / kind.replace(" ", "-")
        (self.root / "data").mkdir(parents=True)
        self.cwd = EXAMPLES
        if kind == "eval run":
            self.cwd = self.root
            for folder in ("configs/eval", "configs/training", "rollouts/bench"):
                (self.root / folder).mkdir(parents=True, exist_ok=True)
            (self.root / "rollouts/bench/main.py").write_text(WORKFLOW)
            (self.root / "configs/eval/bench.toml").write_text(EVAL_RUN_TOML % ("bench", CONCURRENCY))
        self.data = {rows: _write(self.root / f"data/rows{rows}.jsonl", kind, rows) for rows in (100, *SIZES)}

    def argv(self, rows: int) -> list[str]:
        stamp = f"{rows}-{time.monotonic_ns()}"
        log, out, data = (
            self.root / f"log-{stamp}.jsonl",
            self.root / f"out-{stamp}.json",
            str(self.data[rows]),
        )
        if self.kind == "eval":
            return [
                OSMOSIS, "eval", "-m", "math_agent:agent_loop", "-d", data, "--model", "bench-model",
                "--base-url", self.url, "--eval-fn", "reward_fn.compute_reward:numbers_match_reward",
                "--batch-size", str(CONCURRENCY), "--log", str(log), "-o", str(out), "-q",
                "--max-failure-rate", "1",
            ]  # fmt: skip
        if self.kind == "eval rubric":
            return [
                OSMOSIS, "eval", "rubric", "-d", data, "-r", "Give 1.0 if the answer is right and polite.",
                "--model", "openai/judge-1", "--base-url", self.url, "--concurrency", str(CONCURRENCY),
                "--log", str(log), "-o", str(out),
            ]  # fmt: skip
        return [
            OSMOSIS, "eval", "run", "configs/eval/bench.toml", "--dataset-file", data, "--name", f"bench-{stamp}",
            "-y", "--base-url", self.url, "--plain",
        ]  # fmt: skip

    def run(self, rows: int) -> dict[str, float]:
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
        figures = measured(self.argv(rows), self.cwd, env, one_core=True)
        self.drop_outputs()
        for stale in [*self.root.glob("log-*.jsonl"), *self.root.glob("out-*.json")]:
            stale.unlink()
        return figures

    def drop_outputs(self) -> None:
        """Deletes the run directories a run wrote (100k trajectories would fill /dev/shm in a long session)."""
        # eval run writes under <workspace>/.osmosis/evals/; the 0.2 layout under evaluation_runs/.
        for pattern in (".osmosis/evals/*", "**/evaluation_runs/*"):
            for run_dir in self.root.glob(pattern):
                shutil.rmtree(run_dir, ignore_errors=True)


def _capture_bodies(server: ScriptedServer, kind: _Kind) -> Path:
    """The request bodies of a 100-row run of ours, as the floor's input."""
    kind.run(100)
    with urllib.request.urlopen(server.base_url.removesuffix("/v1") + "/_requests") as response:
        bodies = json.loads(response.read())
    path = kind.root / "bodies.jsonl"
    path.write_text("".join(json.dumps(body) + "\n" for body in bodies[-100:]))
    return path


def _floor(server: ScriptedServer, bodies: Path, rows: int, score: bool) -> dict[str, float]:
    argv = [
        sys.executable,
        str(RAW_FLOOR),
        server.base_url,
        "bench-model",
        str(rows),
        str(CONCURRENCY),
        str(bodies),
    ]
    return measured(argv + (["score"] if score else []), ROOT, one_core=True)


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    # In memory where there is /dev/shm (eval run writes a file per item; see bench_eval_run.py).
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    root = Path(tempfile.mkdtemp(prefix="osmosis-bench-kinds-", dir=base))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("kind", KINDS)
def test_run_kind(benchmark, workspace: Path, kind: str) -> None:
    """Marginal CPU per item against the raw floor, and peak RSS at each size."""
    with ScriptedServer({"default": {"score": 0.5, "explanation": "scripted"}}) as server:
        pin_to_one_core(server.proc.pid)
        target = _Kind(kind, workspace, server.base_url)
        bodies = _capture_bodies(server, target)
        figures: dict[str, dict[int, dict[str, float]]] = {"ours": {}, "floor": {}}

        def measure() -> None:
            for rows in SIZES:
                figures["ours"][rows] = target.run(rows)
            for rows in (SMALL, LARGE):
                figures["floor"][rows] = _floor(server, bodies, rows, score=kind == "eval rubric")

        benchmark.group = f"{kind}, realistic rows"
        benchmark.pedantic(measure, rounds=1, iterations=1)

    def marginal_ms(side: str) -> float:
        cpu = figures[side]
        return 1000 * (cpu[LARGE]["cpu"] - cpu[SMALL]["cpu"]) / (LARGE - SMALL)

    ours, floor = marginal_ms("ours"), marginal_ms("floor")
    peaks = {rows: figures["ours"][rows]["rss_mib"] for rows in SIZES}
    benchmark.extra_info.update(ours_marginal_cpu_ms=ours, raw_floor_ms=floor)
    benchmark.extra_info.update({f"peak MiB {rows}": mib for rows, mib in peaks.items()})
    NOTES.append(
        f"{kind}, ~2 KB rows, c={CONCURRENCY}: {ours:.3f} marginal CPU-ms/item, raw floor {floor:.3f} "
        f"({ours / floor:.1f}x); peak RSS "
        + ", ".join(f"{rows // 1000}k {mib:.0f} MiB" for rows, mib in peaks.items())
        + f" ({peaks[SIZES[-1]] / peaks[SMALL]:.2f}x from {SMALL // 1000}k to {SIZES[-1] // 1000}k)"
    )
