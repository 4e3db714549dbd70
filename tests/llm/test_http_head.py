"""The core's reader of answer heads against the Python one it stands in for: any head the core reads, it reads
as ``read_framing`` does (status, headers in order, framing); every other head, and every head Python refuses,
it leaves to Python (None)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from osmosis_ai._http_head import response_framing
from osmosis_ai.llm.http1_connection import read_framing

# Bytes that make heads interesting: separators, spaces the two readers trim (or not), signs and digits.
_PIECES = [
    b"\r\n", b"\r", b"\n", b" ", b"\t", b":", b"\x0b", b"\x1f", b"\x85", b"\xa0", b"\xc9", b"+", b"-", b"_",
    b"0", b"7", b"42", b"HTTP/1.1", b"HTTP/1.0", b"200", b"OK", b"Content-Length", b"content-length",
    b"Transfer-Encoding", b"chunked", b"CHUNKED", b"Connection", b"close", b"Keep-Alive", b"X",
]  # fmt: skip
_HEADS = st.tuples(
    st.sampled_from([b"", b"HTTP/1.1 200 OK\r\n", b"HTTP/1.0 503"]),
    st.lists(st.sampled_from(_PIECES), max_size=24),
).map(lambda parts: parts[0] + b"".join(parts[1]))
_NAMES = st.sampled_from(
    ["Content-Length", "CONTENT-length", "Transfer-Encoding", "Connection", "Date", "X-A"]
)
_VALUES = st.sampled_from(["0", "12", "0012", " 7 ", "+5", "-3", "1_0", "", "chunked", "close", "keep-alive"])


@st.composite
def _plain_heads(draw: st.DrawFn) -> bytes:
    version = draw(st.sampled_from(["HTTP/1.1", "HTTP/1.0", "HTTP/2"]))
    status = draw(st.sampled_from(["200", "404", "503", "0200", "99", "2000"]))
    reason = draw(st.sampled_from(["", " OK", " Service Unavailable", " "]))
    fields = draw(st.lists(st.tuples(_NAMES, _VALUES), max_size=6))
    lines = [f"{version} {status}{reason}", *(f"{name}:{value}" for name, value in fields)]
    return "\r\n".join(lines).encode()


def _python(head: bytes) -> object:
    try:
        return read_framing(head)
    except Exception as exc:  # the Python reader's refusal: the core must leave the head to it
        return type(exc)


def _check(head: bytes) -> None:
    core = response_framing(head)
    if core is not None:
        python = _python(head)
        assert core == python, head
        assert list(core[1]) == list(python[1])  # type: ignore[index]  # the same order


@settings(max_examples=400, deadline=None)
@given(_HEADS)
@example(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nX: 1")
@example(b"\r\nHTTP/1.1 200 OK")
def test_any_head_the_core_reads_it_reads_as_python_does(head: bytes) -> None:
    _check(head)


@settings(max_examples=400, deadline=None)
@given(_plain_heads())
def test_plain_heads_alike(head: bytes) -> None:
    _check(head)


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nServer: BaseHTTP/0.6 Python/3.11.7\r\nDate: Sat, 28 Nov 2026 06:10:00 GMT\r\n"
        b"Content-Type: application/json\r\nContent-Length: 312",
        b"HTTP/1.1 200 OK\r\ndate: Sat, 28 Nov 2026 06:10:00 GMT\r\nserver: uvicorn\r\ncontent-length: 9\r\n"
        b"content-type: application/json",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive",
        b"HTTP/1.0 429 Too Many Requests\r\nRetry-After: 2\r\nContent-Length: 0",
    ],
)
def test_the_heads_model_servers_send_are_read_by_the_core(head: bytes) -> None:
    assert response_framing(head) == read_framing(head)


@pytest.mark.parametrize(
    "head", [b"HTTP/1.1 200 OK\r\nContent-Length: +5", b"HTTP/1.1 200 OK\r\nX: caf\xe9", b"HTTP/1.1 2x0 OK"]
)
def test_other_heads_are_left_to_python(head: bytes) -> None:
    assert response_framing(head) is None
