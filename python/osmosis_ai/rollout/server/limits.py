"""Request-size and read-time limits of the rollout server: a client cannot pin memory or a worker.

The body is read chunk by chunk: a declared ``Content-Length`` over the limit is refused (413) before a
byte of it is read, an undeclared (chunked) body as soon as it passes the limit, and a client that stops
sending mid-body gets 408 after ``timeout`` seconds without a chunk.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["BodyTimeout", "BodyTooLarge", "read_limited_body"]


class BodyTooLarge(Exception):
    """The request body is over the limit (answer 413)."""


class BodyTimeout(Exception):
    """The client stopped sending the body (answer 408)."""


async def read_limited_body(request: Any, limit: int, timeout: float) -> bytes:
    """The body of a Starlette ``request``, at most ``limit`` bytes, each chunk within ``timeout`` s.

    Raises:
        BodyTooLarge: Declared or sent size over ``limit``.
        BodyTimeout: No chunk arrived for ``timeout`` seconds.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"request body of {int(declared)} bytes is over the limit of {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    stream = request.stream().__aiter__()
    while True:
        try:
            chunk = await asyncio.wait_for(stream.__anext__(), timeout)
        except StopAsyncIteration:
            break
        except (TimeoutError, asyncio.TimeoutError):
            raise BodyTimeout(f"no part of the request body arrived for {timeout:g}s") from None
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"request body is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
