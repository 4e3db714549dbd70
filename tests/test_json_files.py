"""One JSON encoder for the files users read (`osmosis_ai._files`): `write_json_atomic` (metrics.json,
manifests, `osmosis test -o`, trajectories) and `write_json_streamed` (`osmosis eval -o`, `eval rubric -o`)
both encode with `json_block` (orjson) and lay out the text as `json.dumps(indent=2)` did: the established
text, byte for byte, but for two things nobody parses differently or that strict JSON forbids: a float
below 1e-4 written in full (0.00001 for 1e-05) and NaN / infinities written null (nothing scored is null)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from osmosis_ai._files import write_json_atomic, write_json_streamed
from tests.json_text import assert_json_dumps_text, has_tiny_float

_SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)
_DOCUMENTS = st.dictionaries(st.text(max_size=6), _VALUES, max_size=5) | _VALUES


@_SETTINGS
@given(_DOCUMENTS, st.booleans())
@example({"big": 2**70, "lone": "\ud800", "astral": "\U0001f600", "rows": [[], {}, [1]]}, True)
@example({"big": 2**70, "astral": "\U0001f600", "rows": [[], {}, [1]]}, False)  # a lone surrogate is no UTF-8
@example({"rows": [], "empty": {}, "del": "\x7f", "tuple": (1, "é")}, True)
@example({"keys": {1: 0.5, None: 1.0, 2.5: "é", False: [2]}}, False)  # keys that are not strings
def test_write_json_atomic_writes_the_json_dumps_text(tmp_path: Path, value, ascii_only: bool) -> None:
    path = tmp_path / "out.json"
    write_json_atomic(path, value, ensure_ascii=ascii_only)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == json.loads(json.dumps(value))
    if not has_tiny_float(value):
        assert text == json.dumps(value, indent=2, ensure_ascii=ascii_only) + "\n"


@_SETTINGS
@given(
    st.dictionaries(st.text(max_size=6), _VALUES, max_size=3),
    st.lists(_VALUES, max_size=5),
    st.dictionaries(st.text(max_size=6), _VALUES, max_size=3),
    st.booleans(),
)
def test_write_json_streamed_writes_the_json_dumps_text_of_the_whole(
    tmp_path: Path, head, items, tail, ascii_only: bool
) -> None:
    path = tmp_path / "out.json"
    write_json_streamed(path, head, "rows", iter(items), lambda: tail, ensure_ascii=ascii_only)
    whole = {**head, "rows": items, **tail}
    if not has_tiny_float(whole) and len(whole) == len(head) + 1 + len(tail):  # no name written twice
        assert path.read_text(encoding="utf-8") == json.dumps(whole, indent=2, ensure_ascii=ascii_only) + "\n"


def test_the_established_layout_of_a_metrics_file_word_for_word(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    write_json_atomic(
        path,
        {
            "eval_run": {"name": "r1", "model": "Qwen\u00e9-7B"},
            "summary": {"mean": 0.5, "small": 1e-07, "k": [1, 2]},
        },
    )
    assert path.read_text() == (
        '{\n  "eval_run": {\n    "name": "r1",\n    "model": "Qwen\\u00e9-7B"\n  },\n'
        '  "summary": {\n    "mean": 0.5,\n    "small": 1e-7,\n    "k": [\n      1,\n      2\n    ]\n  }\n}\n'
    )


def test_nan_and_infinities_are_written_null_never_as_nan_text(tmp_path: Path) -> None:
    # Before: write_json_atomic wrote `NaN` / `Infinity` (not JSON: strict parsers refuse the file).
    summary = {"mean": math.nan, "max": math.inf, "min": -math.inf, "rows": [math.nan, 1.0]}
    for big in ({}, {"id": 2**70}):  # orjson, and the standard encoder it hands integers past 64 bits to
        path = tmp_path / "out.json"
        write_json_atomic(path, {**summary, **big})
        assert assert_json_dumps_text(path) == {
            "mean": None,
            "max": None,
            "min": None,
            "rows": [None, 1.0],
            **big,
        }
        write_json_streamed(path, {"summary": summary, **big}, "rows", iter([{"reward": math.nan}]), dict)
        assert assert_json_dumps_text(path)["rows"] == [{"reward": None}]
