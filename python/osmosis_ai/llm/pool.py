"""Transports shared by every call of a session, so concurrent calls to one endpoint reuse connections.

A command opens ``async with TransportPool():`` around its work; library calls made inside it (the judge,
eval functions calling ``evaluate_rubric``) find the pool through a context variable and reuse its
transports. Outside a pool a call makes its own transport and closes it afterwards.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

from osmosis_ai.llm.providers import Endpoint
from osmosis_ai.llm.transport import Transport, make_transport

__all__ = ["TransportPool", "active_pool"]

_ACTIVE: ContextVar[TransportPool | None] = ContextVar("osmosis_transport_pool", default=None)


class TransportPool:
    """One transport per endpoint, closed together.

    Example:
        >>> async def main():  # doctest: +SKIP
        ...     async with TransportPool() as pool:
        ...         await pool.get(endpoint).complete(messages)
    """

    def __init__(self, *, max_connections: int = 64) -> None:
        self._max_connections = max_connections
        self._transports: dict[Endpoint, Transport] = {}
        self._token: Token[TransportPool | None] | None = None

    def get(self, endpoint: Endpoint) -> Transport:
        """The pool's transport for ``endpoint``, made on first use."""
        transport = self._transports.get(endpoint)
        if transport is None:
            transport = make_transport(endpoint, max_connections=self._max_connections)
            self._transports[endpoint] = transport
        return transport

    async def aclose(self) -> None:
        transports, self._transports = list(self._transports.values()), {}
        for transport in transports:
            await transport.aclose()

    async def __aenter__(self) -> TransportPool:
        self._token = _ACTIVE.set(self)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
        await self.aclose()


def active_pool() -> TransportPool | None:
    """The pool of the enclosing ``async with TransportPool()``, if any."""
    return _ACTIVE.get()
