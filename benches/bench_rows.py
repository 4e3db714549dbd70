"""Rows to dicts on one core: CPU of reading JSONL, JSON and CSV against a Python `orjson.loads` loop.

Three text mixes of ~2 KB rows: ASCII prompts, accented (Latin-1) prompts, and chat rows (a ``messages``
list whose user turn is Chinese text with emoji, stored by CPython 4 bytes a character). Every side
builds the same dicts. The floor is ``for line in file: orjson.loads(line)`` over the JSONL of the same
rows (for CSV: a JSONL file of the same flat rows), which is what a user writes instead of us.

Each contender runs in a fresh process pinned to one core (the reader's parsing thread shares it with the
caller, so the figure holds on a loaded machine, where a second core is not there to use), in rounds that
alternate the order; the figure is the CPU (user + system, all threads) of the read loop alone, imports
excluded; medians over the rounds. Rows are consumed as they come and dropped, as the run engine does.
Run with ``make bench``; ``make bench-ci`` guards ours / orjson per mix for JSONL, and the worst mix for JSON
and CSV.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from benchutil import NOTES, scaled

ROWS = scaled(100_000, 20_000)
ROUNDS = scaled(5, 3)
MIXES = ("ascii", "accented", "chat")
# Distinct texts per mix, used in turn: consecutive rows never share a prompt (no reuse of a repeated text).
TEXTS = 997

_WORDS = {
    "ascii": "the model should answer concisely and cite the relevant passage from the context before giving "
    "a final number solve explain step why because therefore",
    "accented": "résumé naïve café déjà vu über straße garçon crème brûlée façade jalapeño señor année élève "
    "où été Müller Köln the answer is",
    "chat": "数学 问题 你好 世界 模型 回答 请 解释 为什么 因为 所以 答案 😀 🚀 👍 🎉 ✅ hello the answer is",
}

_CHILD = textwrap.dedent(
    """
    import os, resource, sys
    who, path = sys.argv[1], sys.argv[2]
    # One core for the whole process: the reader's thread and the caller share it.
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    import orjson
    from osmosis_ai.datasets import read_dataset

    def cpu():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    start = cpu()
    if who == "orjson":
        with open(path, "rb") as f:
            for line in f:
                if line.strip():
                    orjson.loads(line)
    elif who == "orjson, whole file":
        orjson.loads(open(path, "rb").read())
    else:
        for row in read_dataset(path, contract="any"):
            pass
    print(cpu() - start)
    """
)


def _texts(mix: str, words: int) -> list[str]:
    rng = random.Random(mix)
    vocabulary = _WORDS[mix].split(" ")
    return [" ".join(rng.choice(vocabulary) for _ in range(words)) for _ in range(TEXTS)]


def _rows(mix: str, flat: bool) -> list[dict[str, object]]:
    """~2 KB rows of one mix; ``flat`` rows hold strings only (what a CSV cell can)."""
    system, prompts = _texts(mix, 45)[0], _texts(mix, 300 if mix == "chat" else 260)
    rows = []
    for i in range(ROWS):
        prompt = prompts[i % TEXTS] + f"\n\nQuestion {i}?"
        if mix == "chat":
            messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
            row: dict[str, object] = {"id": f"row-{i}", "messages": messages, "ground_truth": str(i % 97)}
        else:
            row = {
                "id": f"row-{i}",
                "system_prompt": system,
                "user_prompt": prompt,
                "ground_truth": str(i % 97),
            }
        if flat:
            row = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in row.items()}
        else:
            row["metadata"] = {"source": "synthetic", "difficulty": ("easy", "hard")[i % 2], "n": i, "w": 0.5}
        rows.append(row)
    return rows


def _write(root: Path, mix: str, fmt: str) -> tuple[Path, Path]:
    """The file read by us and the JSONL the orjson loop reads (the same rows)."""
    flat = fmt == "csv"
    rows = _rows(mix, flat)
    baseline = root / f"{mix}{'-flat' if flat else ''}.jsonl"
    if not baseline.exists():
        with baseline.open("wb") as f:
            for row in rows:
                f.write(orjson.dumps(row) + b"\n")
    if fmt == "jsonl":
        return baseline, baseline
    path = root / f"{mix}.{fmt}"
    if fmt == "json":
        path.write_bytes(orjson.dumps(rows))
    else:
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return path, baseline


def _cpu(who: str, path: Path) -> float:
    done = subprocess.run([sys.executable, "-c", _CHILD, who, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout.strip())


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_rows_cpu(benchmark, tmp_path_factory: pytest.TempPathFactory, fmt: str) -> None:
    """CPU of reading every row into dicts, ours against the orjson loop, per text mix."""
    root = tmp_path_factory.getbasetemp() / "bench-rows"
    root.mkdir(exist_ok=True)
    files = {mix: _write(root, mix, fmt) for mix in MIXES}
    contenders = ["ours", "orjson"] + (["orjson, whole file"] if fmt == "json" else [])
    samples: dict[tuple[str, str], list[float]] = {(mix, who): [] for mix in MIXES for who in contenders}

    def rounds() -> None:
        # The first read of a file just written costs more CPU whoever reads it (the JSON and CSV files are
        # new for this test, the JSONL baselines are not): one untimed read of each evens that out.
        for ours, baseline in files.values():
            _cpu("orjson", baseline)
            _cpu("ours", ours)
        for r in range(ROUNDS):
            for mix, (ours, baseline) in files.items():
                for who in contenders if r % 2 == 0 else contenders[::-1]:
                    samples[(mix, who)].append(_cpu(who, baseline if who == "orjson" else ours))

    benchmark.group = f"rows to dicts on one core, {fmt}"
    benchmark.pedantic(rounds, rounds=1, iterations=1)
    ratios = {}
    for mix in MIXES:
        cpu = {who: statistics.median(samples[(mix, who)]) for who in contenders}
        ratios[mix] = cpu["ours"] / cpu["orjson"]
        benchmark.extra_info[f"ours CPU-s {mix}"] = cpu["ours"]
        benchmark.extra_info[f"orjson CPU-s {mix}"] = cpu["orjson"]
        whole = f", orjson.loads of the whole file {cpu['orjson, whole file']:.3f} s" if fmt == "json" else ""
        NOTES.append(
            f"rows to dicts, {fmt} {mix}, {ROWS} rows, one core: ours {cpu['ours']:.3f} CPU-s, orjson loop "
            f"{cpu['orjson']:.3f} CPU-s{whole}: {ratios[mix]:.2f}x its CPU"
        )
    worst = max(MIXES, key=ratios.__getitem__)
    benchmark.extra_info["ours CPU-s worst mix"] = benchmark.extra_info[f"ours CPU-s {worst}"]
    benchmark.extra_info["orjson CPU-s worst mix"] = benchmark.extra_info[f"orjson CPU-s {worst}"]
    if fmt != "jsonl":  # the JSONL files are the other formats' baselines
        for mix in MIXES:
            (root / f"{mix}.{fmt}").unlink(missing_ok=True)
