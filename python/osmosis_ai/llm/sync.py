"""Blocking calls into the async LLM layer: one background event loop per process, with pooled transports.

The 0.2 ``evaluate_rubric`` is synchronous and may be called from code that already runs an event loop
(a notebook, a user's async server), where ``asyncio.run`` would fail. Running the coroutine on a private
loop in a daemon thread works in both cases, and keeps one connection pool per endpoint across calls.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from osmosis_ai.llm.pool import TransportPool
from osmosis_ai.llm.providers import Endpoint
from osmosis_ai.llm.transport import Transport
from osmosis_ai.loop_thread import LoopThread

__all__ = ["pooled_transport", "run_blocking"]

T = TypeVar("T")

_lock = threading.Lock()
_host: LoopThread | None = None
_pool = TransportPool()


def _background() -> LoopThread:
    global _host
    with _lock:
        if _host is None:
            _host = LoopThread("osmosis-llm")
            atexit.register(_shutdown, _host)
        return _host


def _shutdown(host: LoopThread) -> None:
    # The interpreter is exiting; an unclosed socket is not worth a traceback.
    with contextlib.suppress(Exception):
        host.submit(_pool.aclose()).result(timeout=5)
    host.stop(grace=0, wait=False)


def pooled_transport(endpoint: Endpoint) -> Transport:
    """The background loop's transport for ``endpoint`` (call only from coroutines run by run_blocking)."""
    return _pool.get(endpoint)


def run_blocking(factory: Callable[[], Awaitable[T]]) -> T:
    """Runs ``factory()`` on the background loop and waits for its result (exceptions propagate).

    Example:
        >>> async def two(): return 2
        >>> run_blocking(two)
        2
    """
    host = _background()
    if host.is_current():
        raise RuntimeError("a blocking LLM call was made on the LLM layer's own loop; await the async form")
    return host.submit(_call(factory)).result()


async def _call(factory: Callable[[], Awaitable[T]]) -> T:
    return await factory()
