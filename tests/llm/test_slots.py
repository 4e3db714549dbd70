"""A loopback server's request slots (``llm.slots``), against the scripted server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from osmosis_ai.llm.slots import fit_to_slots, server_slots


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"total_slots": 2}, 2),
        ({}, None),  # no field
        ({"total_slots": "2"}, None),  # not a number
        ({"total_slots": 0}, None),
        ({"total_slots": True}, None),
        (None, None),  # no /props at all (404)
    ],
)
def test_only_a_positive_total_slots_is_known(scripted: Any, props: Any, expected: int | None) -> None:
    server = scripted({} if props is None else {"props": props})
    assert asyncio.run(server_slots(server.base_url)) == expected
    localhost = server.base_url.replace("127.0.0.1", "localhost")
    assert asyncio.run(server_slots(localhost)) == expected


def test_nothing_listening_is_unknown_and_changes_nothing() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    fit = asyncio.run(fit_to_slots(8, f"http://127.0.0.1:{port}/v1"))
    assert (fit.slots, fit.concurrency, fit.lowered) == (None, 8, False)


def test_fewer_slots_lower_the_concurrency_and_more_do_not_raise_it(scripted: Any) -> None:
    server = scripted({"props": {"total_slots": 3}})
    assert asyncio.run(fit_to_slots(8, server.base_url)).concurrency == 3
    fit = asyncio.run(fit_to_slots(2, server.base_url))
    assert (fit.concurrency, fit.lowered) == (2, False)
