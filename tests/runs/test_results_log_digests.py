"""The results log's digests (row keys, dataset fingerprints) come from the core's BLAKE2b: the same hex
digests as hashlib's, so keys written by earlier versions still match on resume."""

import hashlib
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osmosis_ai._core import Blake2b, blake2b_hexdigest
from osmosis_ai.runs.log import dataset_fingerprint, row_key

_SCALARS = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text()
)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20
)


def test_a_row_key_is_pinned() -> None:
    # Computed with hashlib.blake2b(orjson.dumps(row, option=OPT_SORT_KEYS), digest_size=12) before the core's.
    row = {"user_prompt": "é 🙂", "ground_truth": "4", "system_prompt": "Be brief."}
    assert row_key(row) == "3dedd133dac3fc6013542721"


@settings(max_examples=200, deadline=None)
@given(row=st.dictionaries(st.text(), _VALUES))
def test_row_keys_are_hashlibs_blake2b_of_the_sorted_json(row: dict) -> None:
    encoded = orjson.dumps(row, option=orjson.OPT_SORT_KEYS)
    assert row_key(row) == hashlib.blake2b(encoded, digest_size=12).hexdigest()


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=3000), size=st.integers(1, 64), cut=st.integers(0, 3000))
def test_digests_are_hashlibs_whole_or_in_pieces(data: bytes, size: int, cut: int) -> None:
    expected = hashlib.blake2b(data, digest_size=size).hexdigest()
    assert blake2b_hexdigest(data, size) == expected
    pieces = Blake2b(size)
    pieces.update(data[:cut])
    pieces.update(data[cut:])
    assert pieces.hexdigest() == expected


@pytest.mark.parametrize("size", [0, 65])
def test_a_digest_size_outside_1_to_64_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match="digest_size"):
        blake2b_hexdigest(b"", size)
    with pytest.raises(ValueError, match="digest_size"):
        Blake2b(size)


def test_a_dataset_fingerprint_is_hashlibs_blake2b_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(bytes(range(256)) * 5000)  # more than one 1 MiB block
    fingerprint = dataset_fingerprint(path)
    assert fingerprint["fingerprint"] == hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    assert fingerprint["size"] == 1_280_000
