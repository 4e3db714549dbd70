"""Blocking calls into the async LLM layer: one background event loop per process, with pooled transports.

The 0.2 ``evaluate_rubric`` is synchronous and may be called from code that already runs an event loop
(a notebook, a user's async server), where ``asyncio.run`` would fail. Running the coroutine on a private
loop in a daemon thread works in both cases, and keeps one connection pool per endpoint across calls.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from osmosis_ai.llm.pool import TransportPool
from osmosis_ai.llm.providers import Endpoint

__all__ = ["pooled_transport", "run_blocking"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_pool = TransportPool()


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="osmosis-llm", daemon=True)
            thread.start()
            atexit.register(_shutdown, loop)
            _loop = loop
        return _loop


def _shutdown(loop: asyncio.AbstractEventLoop) -> None:
    # The interpreter is exiting; an unclosed socket is not worth a traceback.
    with contextlib.suppress(Exception):
        asyncio.run_coroutine_threadsafe(_pool.aclose(), loop).result(timeout=5)
    loop.call_soon_threadsafe(loop.stop)


def pooled_transport(endpoint: Endpoint) -> Any:
    """The background loop's transport for ``endpoint`` (call only from coroutines run by run_blocking)."""
    return _pool.get(endpoint)


def run_blocking(factory: Callable[[], Awaitable[T]]) -> T:
    """Runs ``factory()`` on the background loop and waits for its result (exceptions propagate).

    Example:
        >>> async def two(): return 2
        >>> run_blocking(two)
        2
    """
    loop = _background_loop()
    if threading.current_thread().name == "osmosis-llm":
        raise RuntimeError("a blocking LLM call was made on the LLM layer's own loop; await the async form")
    future = asyncio.run_coroutine_threadsafe(_call(factory), loop)
    return future.result()


async def _call(factory: Callable[[], Awaitable[T]]) -> T:
    return await factory()
