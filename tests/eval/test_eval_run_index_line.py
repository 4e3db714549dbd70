"""`index.jsonl` lines of `osmosis eval run`: exactly `json.dumps(row, allow_nan=False)`, whatever the row holds."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osmosis_ai.eval.run_dir import INDEX_KEYS, _index_line, _index_row

_VALUES = st.one_of(
    st.text(),  # control characters, quotes, backslashes, accents, astral characters
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(),  # NaN and the infinities included: the encoder's ValueError
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),  # no index value, but one must still be written as json does
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _expected(row: dict) -> bytes | type[ValueError]:
    try:
        return (json.dumps(row, allow_nan=False) + "\n").encode()
    except ValueError:
        return ValueError


@settings(max_examples=300, deadline=None)  # no timing: a loaded machine must not fail it
@given(st.dictionaries(st.sampled_from(INDEX_KEYS), _VALUES))
def test_an_index_line_is_the_json_dumps_text_of_its_row(record: dict) -> None:
    row = _index_row(record, resumed=False)
    expected = _expected(row)
    if expected is ValueError:
        with pytest.raises(ValueError):
            _index_line(row)
    else:
        assert _index_line(row) == expected


def test_a_resumed_rollout_is_marked_and_the_keys_keep_their_order() -> None:
    record = {"status": "success", "rollout_id": "r1", "row_index": 2, "run_index": 0, "reward": 1.0}
    row = _index_row({**record, "messages": [{"role": "user", "content": "x"}]}, resumed=True)
    assert _index_line(row) == (
        b'{"row_index": 2, "run_index": 0, "rollout_id": "r1", "status": "success", "reward": 1.0, '
        b'"resumed": true}\n'
    )
