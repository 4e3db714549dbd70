"""Dataset reading and validation vs stdlib json, orjson and pyarrow, on a generated 100k-row file.

Rows are ~2 KB (a system prompt, a long user prompt, a short ground truth, a metadata object), like a
real eval dataset. Every contender builds the same list of Python dicts (or, for validation, checks the
same contract). Run with `make bench`.
"""

from __future__ import annotations

import functools
import gc
import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchutil import scaled
from osmosis_ai.datasets import read_dataset, validate_dataset

ROWS = scaled(100_000, 20_000)
REQUIRED = ("system_prompt", "user_prompt", "ground_truth")
_VOCABULARY = (
    "the model should answer concisely and cite the relevant passage from the context before giving "
    "a final number solve explain step why because therefore résumé naïve 数学 问题 ünïcödé"
)
WORDS = _VOCABULARY.split(" ")


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def make_row(rng: random.Random, i: int) -> dict[str, object]:
    return {
        "id": f"row-{i}",
        "system_prompt": _text(rng, 45),
        "user_prompt": _text(rng, 230) + "\n\nQuestion: " + _text(rng, 20) + "?",
        "ground_truth": str(rng.randint(0, 10_000)),
        "metadata": {"source": "synthetic", "difficulty": rng.choice(["easy", "hard"]), "tags": ["a", "b"]},
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bench")
    rng = random.Random(7)
    rows = [make_row(rng, i) for i in range(ROWS)]
    jsonl = root / "data.jsonl"
    with jsonl.open("wb") as f:
        for row in rows:
            f.write(orjson.dumps(row) + b"\n")
    # The same rows with one system prompt shared by all of them, as many eval sets have.
    shared = root / "shared.jsonl"
    with shared.open("wb") as f:
        for row in rows:
            f.write(orjson.dumps({**row, "system_prompt": rows[0]["system_prompt"] * 3}) + b"\n")
    parquet = root / "data.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet, row_group_size=10_000, compression="snappy")
    size = jsonl.stat().st_size
    print(f"\n{ROWS} rows, {size / ROWS:.0f} bytes per JSONL row, {size / 2**20:.0f} MiB")
    return {"jsonl": jsonl, "shared": shared, "parquet": parquet}


@pytest.fixture
def record(record):  # type: ignore[no-untyped-def]
    """Five rounds per contender (the shared machine's speed drifts; medians of five hold up better)."""
    return functools.partial(record, rounds=5)


def _lines(path: Path) -> list[bytes]:
    with path.open("rb") as f:
        return [line for line in f if line.strip()]


def stdlib_rows(path: Path) -> list[dict[str, object]]:
    with path.open("rb") as f:
        return [json.loads(line) for line in f if line.strip()]


def orjson_rows(path: Path) -> list[dict[str, object]]:
    with path.open("rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]


def gc_off(fn):  # type: ignore[no-untyped-def]
    """``fn`` with Python's cyclic GC off while it runs: the baselines' best case, since our reader holds
    the collector off while it builds each batch (every object of a batch is alive at its end)."""

    def run():  # type: ignore[no-untyped-def]
        gc.disable()
        try:
            return fn()
        finally:
            gc.enable()

    return run


def check_python(row: object) -> list[str]:
    """The eval contract in Python, as a per-line baseline would check it."""
    if not isinstance(row, dict):
        return ["not an object"]
    lowered = {k.lower(): v for k, v in row.items()}
    problems = []
    for name in REQUIRED:
        value = lowered.get(name)
        if not isinstance(value, str) or not value.strip():
            problems.append(name)
    return problems


def validate_with(loads, path: Path) -> int:  # type: ignore[no-untyped-def]
    bad = 0
    with path.open("rb") as f:
        for line in f:
            if line.strip() and check_python(loads(line)):
                bad += 1
    return bad


def test_read_jsonl_osmosis(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record("read jsonl -> dicts", "osmosis", lambda: list(read_dataset(files["jsonl"])))
    assert len(rows) == ROWS


def test_read_jsonl_stdlib(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record("read jsonl -> dicts", "stdlib json per line", lambda: stdlib_rows(files["jsonl"]))
    assert len(rows) == ROWS


def test_read_jsonl_orjson(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record("read jsonl -> dicts", "orjson per line", lambda: orjson_rows(files["jsonl"]))
    assert rows == list(read_dataset(files["jsonl"]))


def test_read_jsonl_orjson_gc_off(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record("read jsonl -> dicts", "orjson, GC off", gc_off(lambda: orjson_rows(files["jsonl"])))
    assert len(rows) == ROWS


def test_read_shared_prompt_osmosis(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record("read jsonl, shared prompt", "osmosis", lambda: list(read_dataset(files["shared"])))
    assert len(rows) == ROWS


def test_read_shared_prompt_orjson(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record("read jsonl, shared prompt", "orjson per line", lambda: orjson_rows(files["shared"]))
    assert rows == list(read_dataset(files["shared"]))


def test_read_shared_prompt_orjson_gc_off(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record("read jsonl, shared prompt", "orjson, GC off", gc_off(lambda: orjson_rows(files["shared"])))
    assert len(rows) == ROWS


def test_validate_osmosis(record, files) -> None:  # type: ignore[no-untyped-def]
    report = record("validate jsonl", "osmosis", lambda: validate_dataset(files["jsonl"]))
    assert report.ok and report.rows == ROWS


def test_validate_stdlib(record, files) -> None:  # type: ignore[no-untyped-def]
    bad = record("validate jsonl", "stdlib json per line", lambda: validate_with(json.loads, files["jsonl"]))
    assert bad == 0


def test_validate_orjson(record, files) -> None:  # type: ignore[no-untyped-def]
    bad = record("validate jsonl", "orjson per line", lambda: validate_with(orjson.loads, files["jsonl"]))
    assert bad == 0


def test_read_parquet_osmosis(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record("read parquet -> dicts", "osmosis", lambda: list(read_dataset(files["parquet"])))
    assert len(rows) == ROWS


def test_read_parquet_pyarrow(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record(
        "read parquet -> dicts", "pyarrow to_pylist", lambda: pq.read_table(files["parquet"]).to_pylist()
    )
    assert rows[:100] == list(read_dataset(files["parquet"], limit=100))


def test_read_parquet_pyarrow_gc_off(record, files) -> None:  # type: ignore[no-untyped-def]
    rows = record(
        "read parquet -> dicts",
        "pyarrow, GC off",
        gc_off(lambda: pq.read_table(files["parquet"]).to_pylist()),
    )
    assert len(rows) == ROWS


_MEMORY_PROBE = textwrap.dedent(
    """
    import sys
    from osmosis_ai.datasets import read_dataset
    n = 0
    for row in read_dataset(sys.argv[1]):
        n += len(row["user_prompt"])
    # VmHWM is this process's own peak (ru_maxrss would include the parent's peak before exec).
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    print(int(status.split()[0]))
    """
)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize("rows", [10_000, 1_000_000])
def test_peak_memory_is_flat(  # type: ignore[no-untyped-def]
    benchmark, tmp_path: Path, rows: int, fmt: str, peak_memory: dict[str, int]
) -> None:
    """Peak RSS (VmHWM, KiB) of streaming every row of a file; the 1M-row file is 100x the 10k one."""
    path = tmp_path / f"m{rows}.{fmt}"
    row = {"system_prompt": "s" * 40, "user_prompt": "u" * 120, "ground_truth": "g", "id": 0}
    if fmt == "jsonl":
        line = orjson.dumps(row)
        with path.open("wb") as f:
            for _ in range(rows // 10_000):
                f.write((line + b"\n") * 10_000)
    else:
        block = pa.Table.from_pylist([row] * 10_000)
        with pq.ParquetWriter(path, block.schema) as writer:
            for _ in range(rows // 10_000):
                writer.write_table(block)
    benchmark.group = "stream every row (peak memory probe)"
    out = benchmark.pedantic(
        lambda: subprocess.run(
            [sys.executable, "-c", _MEMORY_PROBE, str(path)], check=True, capture_output=True, text=True
        ),
        rounds=1,
        iterations=1,
    )
    peak_memory[f"streaming {rows:>9,} {fmt} rows"] = int(out.stdout.strip())
    small = peak_memory.get(f"streaming {10_000:>9,} {fmt} rows")
    large = peak_memory.get(f"streaming {1_000_000:>9,} {fmt} rows")
    if small and large:
        assert large < small * 1.25, f"{fmt}: peak RSS grew from {small} KiB to {large} KiB"
