"""Hypothesis strategies for the JSON a results log holds, shared by the tests that compare the core's
writers of `-o` files with the Python ones: short text over an alphabet of the characters escaping and
terminal safety treat apart, floats where formatting changes (1e-4, 1e16, -0.0), and nested values."""

from __future__ import annotations

from hypothesis import strategies as st

TEXT = st.text(
    alphabet=st.sampled_from(
        ["a", "é", "😀", "\n", "\r", '"', "\\", "\x01", "\x1b", "\x7f", "\x85", "\u2028", "\u202e", " ",
         "\t", "\x0b", "\x1c", "中"]
    ),
    max_size=8,
)  # fmt: skip
FLOAT = st.one_of(
    st.sampled_from([0.0, 1.0, 0.5, 0.125, 0.375, 1e-4, 1e-5, 123456.789, 1e15, 1e16, -0.0, 2.5e-7]),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False),
)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), FLOAT, TEXT)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=6,
)
