"""Before/after CPU per item of the run kinds, the two versions alternated in one load.

``python scripts/ab_run_kinds.py KINDS ROUNDS [BASE]`` (after ``make build-release setup-dev``): KINDS is a
comma-separated list of ``eval``, ``eval rubric`` and ``eval run`` (as in ``benches/bench_run_kinds.py``,
whose rows, commands and raw floor this uses). Each round runs every kind at 1k and 10k rows with the
Python files that differ from BASE (default ``main``) in BASE's version and in this worktree's, in
alternating order, plus the floor once; it prints the medians over the rounds of the marginal CPU per item
(10k minus 1k), every command and the server on one shared core as the bench runs them. Only ``python/``
differences are swapped; the worktree's own files are put back at the end, however the script ends, so do
not edit them while it runs.

When the Rust core changed too, BASE is a directory instead: the ``python/`` folder of a checkout of the
version before, built there (``make build-release`` puts its core in ``python/osmosis_ai``). The "before"
side then runs with that folder first on ``PYTHONPATH`` (its Python and its core together) and nothing in
this worktree is swapped.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))
sys.path.append(str(ROOT / "tests"))  # appended: tests/platform must not shadow the stdlib's platform

import bench_run_kinds as kinds_bench  # noqa: E402
from benchutil import measured, pin_to_one_core  # noqa: E402
from servers import ScriptedServer  # noqa: E402

SMALL, LARGE = 1_000, 10_000


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=True)


def _cpu(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    return measured(argv, cwd, env, one_core=True)["cpu"]


def main(names: list[str], rounds: int, base: str) -> None:
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    envs = {"before": env, "after": env}
    tree = (Path(base) / "osmosis_ai" / "__init__.py").is_file()  # a built tree of the version before
    if tree:
        changed: list[str] = []
        envs["before"] = {**env, "PYTHONPATH": str(Path(base).resolve())}
        new: dict[str, bytes] = {}
        old: dict[str, bytes] = {}
    else:
        changed = _git("diff", "--name-only", base, "--", "python/").stdout.decode().split()
        new = {p: (ROOT / p).read_bytes() for p in changed if (ROOT / p).exists()}
        # A file new since BASE stays in place for the "before" side (BASE's code never imports it).
        in_base = set(_git("ls-tree", "-r", "--name-only", base, "--", "python/").stdout.decode().split())
        old = {p: _git("show", f"{base}:{p}").stdout for p in changed if p in in_base}

    def put(version: dict[str, bytes]) -> None:
        for path, data in version.items():
            (ROOT / path).write_bytes(data)

    kinds_bench.SIZES = (SMALL, LARGE)
    shm = Path("/dev/shm")
    workspace = Path(tempfile.mkdtemp(prefix="osmosis-ab-", dir=shm if shm.is_dir() else None))
    before = f"the version before: {base}" if tree else f"files differing from {base}: {changed}"
    print(f"{before}; load average {os.getloadavg()[0]:.1f}")
    try:
        with ScriptedServer({"default": {"score": 0.5, "explanation": "scripted"}}) as server:
            pin_to_one_core(server.proc.pid)
            for name in names:
                kind = kinds_bench._Kind(name, workspace, server.base_url)
                bodies = kinds_bench._capture_bodies(server, kind)
                cpu: dict[tuple[str, int], list[float]] = {}
                for round_ in range(rounds):
                    sides = [("before", old), ("after", new)]
                    for side, version in sides if round_ % 2 == 0 else sides[::-1]:
                        put(version)
                        for rows in (SMALL, LARGE):
                            cpu.setdefault((side, rows), []).append(
                                _cpu(kind.argv(rows), kind.cwd, envs[side])
                            )
                            kind.drop_outputs()
                    for rows in (SMALL, LARGE):
                        floor = [sys.executable, str(kinds_bench.RAW_FLOOR), server.base_url, "bench-model"]
                        floor += [str(rows), str(kinds_bench.CONCURRENCY), str(bodies)]
                        floor += ["score"] if name == "eval rubric" else []
                        cpu.setdefault(("floor", rows), []).append(_cpu(floor, ROOT))
                per_item = {
                    side: statistics.median(
                        1000 * (big - small) / (LARGE - SMALL)
                        for small, big in zip(cpu[(side, SMALL)], cpu[(side, LARGE)], strict=True)
                    )
                    for side in ("before", "after", "floor")
                }
                floor_ms = per_item["floor"]
                print(
                    f"{name}: before {per_item['before']:.3f}, after {per_item['after']:.3f} marginal CPU-ms "
                    f"per item; raw floor {floor_ms:.3f} ({per_item['before'] / floor_ms:.2f}x -> "
                    f"{per_item['after'] / floor_ms:.2f}x); medians of {rounds} rounds"
                )
    finally:
        put(new)
        shutil.rmtree(workspace, ignore_errors=True)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{stamp}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1].split(","), int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "main")
