"""Request-size and read-time limits of the rollout server: a client cannot pin memory or a worker.

The body is read chunk by chunk: a declared ``Content-Length`` over the limit is refused (413) before a
byte of it is read, an undeclared (chunked) body as soon as it passes the limit, and a body that has not
arrived whole ``timeout`` seconds after its head gets 408, however steadily it trickles in.
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
    """The body of a Starlette ``request``, at most ``limit`` bytes, the whole of it within ``timeout`` s.

    Raises:
        BodyTooLarge: Declared or sent size over ``limit``.
        BodyTimeout: The body was not complete ``timeout`` seconds after the read began.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"request body of {int(declared)} bytes is over the limit of {limit} bytes")
    try:
        return await asyncio.wait_for(_read(request, limit), timeout)
    except (TimeoutError, asyncio.TimeoutError):
        raise BodyTimeout(f"the request body did not arrive whole within {timeout:g}s") from None


async def _read(request: Any, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"request body is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
