"""Strings read from datasets are exactly the strings `json.loads` gives, whichever way the reader makes them.

The reader makes a `str` one of two ways depending on how dense its characters past Latin-1 are (measured
by the reader as it reads the text: at least one in six bytes goes through code points) and its length,
and caches keys and short values by position from row to row; these rows sit on every boundary of those
choices. Equality with `json.loads`'s strings also checks that each `str` is in CPython's
canonical form (a wider form than needed would compare unequal).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.datasets import read_dataset
from tests.test_datasets import WRITERS

# Around the first character past Latin-1 (U+0100), past the 2-byte form (U+FFFF / U+10000), and the
# largest code point; emoji are one character each, never a surrogate pair.
EDGE_CHARS = ["é", "ÿ", "Ā", "数", "\uffff", "😀", "\U0010ffff", "🇫🇷", "\u0000"]


def _texts() -> list[str]:
    texts = ["", " ", "a", "a" * 15, "a" * 16, "a" * 17, "ÿ" * 8, "ÿ" * 9]
    for char in EDGE_CHARS:
        for pad in (0, 7, 14, 15, 16, 40):
            texts += [char + "a" * pad, "a" * pad + char, "a" * pad + char + "b" * pad]
    texts += ["数学 问题 😀 hello 🚀 the answer", "é" * 20 + "数", "😀" * 50, "a" * 5000 + "😀"]
    # Either side of the density that picks the way: one such character in six bytes, and in seven.
    texts += [
        "ab数c" * 5,
        "ab数cd" * 5,
        "é数" * 9,
        "abcd😀" * 6,
        "abcde😀" * 6,
        "the model 数学 answers " * 20,
    ]
    return texts


def _rows() -> list[dict[str, Any]]:
    texts = _texts()
    rows = []
    for i, text in enumerate(texts):
        rows.append(
            {
                "system_prompt": "shared " + EDGE_CHARS[i % len(EDGE_CHARS)] * 20,
                "user_prompt": text or "x",
                "ground_truth": texts[(i * 7) % len(texts)],
                "note": texts[-1 - i],
            }
        )
    return rows


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_strings_on_every_boundary_read_as_json_gives_them(tmp_path: Path, fmt: str) -> None:
    rows = _rows()
    path = WRITERS[fmt](tmp_path / f"t.{fmt}", rows)
    expected = rows if fmt != "csv" else [{k: v.replace("\r", "") for k, v in r.items()} for r in rows]
    for batch_size in (1, 3, 1024):
        got = list(read_dataset(path, contract="any", batch_size=batch_size))
        assert got == expected
        for row, want in zip(got, expected, strict=True):
            for key, value in row.items():
                assert len(value) == len(want[key]) and value.isascii() == want[key].isascii()


def test_keys_wide_long_and_colliding_by_position(tmp_path: Path) -> None:
    # Keys at one position change from row to row (same length, other text; ASCII then wide), and keys
    # long enough to pass every cache bound; each row's dict must hold exactly its own keys.
    long_key = "k" * 10_000
    rows: list[dict[str, Any]] = []
    for i in range(40):
        row: dict[str, Any] = {
            "system_prompt": "s",
            "user_prompt": f"u{i}",
            "ground_truth": "g",
            ("ab", "ba", "数学", "😀😀", "")[i % 5]: i,
            long_key + str(i % 3): "v" * (i % 20),
            "nested": {("x", "y")[i % 2]: {"数学问题 and more text": "😀" * (i % 4)}},
        }
        rows.append(row)
    for fmt in ("jsonl", "json"):
        path = WRITERS[fmt](tmp_path / f"k.{fmt}", rows)
        got = list(read_dataset(path, contract="any", batch_size=7))
        assert got == rows
        assert [list(r) for r in got] == [list(r) for r in rows]


def test_escaped_wide_text_decodes_like_json(tmp_path: Path) -> None:
    # The same characters written as \\u escapes (surrogate pairs for emoji) and raw.
    rows = [{"system_prompt": "s", "user_prompt": text or "x", "ground_truth": "g"} for text in _texts()]
    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in rows), encoding="utf-8")
    assert list(read_dataset(path, contract="any")) == rows
