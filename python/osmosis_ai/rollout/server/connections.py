"""Who may hold a connection of ``osmosis serve``, and for how long: slow clients cannot lock it out.

uvicorn alone has no deadline for a request head, reads the body of a request it refuses, and counts every
open socket against one limit, so a few thousand sockets that never finish a head made ``/health`` and
TrainGate's inits answer 503 for as long as they stayed open. Here (uvicorn's h11 protocol plus a gate):

* a connection is *untrusted* until it sends a request with the right API key (with auth off, any request);
  trusted connections (TrainGate's pool) are never closed to make room;
* a request head must arrive whole within ``head_timeout_seconds`` of the connection (or, on a kept-alive
  connection, of its first byte), else the connection is closed;
* untrusted connections are bounded per client address and in total: a newcomer past either bound closes
  the oldest untrusted connection (of its address, else of all), so a newcomer always gets its turn and
  slow sockets cannot pile up; past ``max_connections`` in all, the newcomer is refused when no untrusted
  connection is left to close;
* authentication is decided on the head: a refused request (wrong key, or a protected path without one)
  gets its answer without another byte of its body being read, and its connection is closed.

The body's own deadline and size limit are the app's (:mod:`osmosis_ai.rollout.server.limits`).
"""

from __future__ import annotations

import asyncio
import resource
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["ConnectionGate", "GateLimits", "GuardedH11Protocol", "fit_to_file_limit"]

# Written as is when a head is late: the request never started, so h11 cannot frame an answer.
_HEAD_TIMEOUT_REPLY = (
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain\r\nContent-Length: 25\r\n"
    b"Connection: close\r\n\r\nrequest head not received"
)
# Descriptors kept free for everything but client sockets: log files, the callback pool, the agent's own.
_SPARE_FILES = 256

HeadCheck = Callable[[dict[str, Any]], str]
"""Decides a request from its ASGI scope (head only): ``"trusted"``, ``"open"`` or ``"refused"``."""


@dataclass(frozen=True)
class GateLimits:
    """The gate's numbers (from :class:`~osmosis_ai.rollout.settings.RolloutServerSettings`)."""

    head_timeout_seconds: float
    max_connections: int
    max_untrusted: int
    max_untrusted_per_address: int


def fit_to_file_limit(limits: GateLimits) -> GateLimits:
    """``limits`` with connection counts the process can open: the soft descriptor limit is raised to the
    hard one if needed, and the counts are lowered when even that is too small.

    Without this, accepting past the limit fails with EMFILE and asyncio stops accepting for a second, which
    is exactly the lock-out the gate prevents.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = limits.max_connections + _SPARE_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return limits
    room = max(soft - _SPARE_FILES, 16)
    return GateLimits(
        limits.head_timeout_seconds,
        room,
        min(limits.max_untrusted, room),
        min(limits.max_untrusted_per_address, room),
    )


class ConnectionGate:
    """The server's connections by trust and address; see the module docstring.

    Example:
        >>> gate = ConnectionGate(GateLimits(10.0, 2048, 1024, 256), lambda scope: "open")  # doctest: +SKIP
    """

    def __init__(self, limits: GateLimits, check: HeadCheck) -> None:
        self.limits = limits
        self.check = check
        self.trusted: set[Any] = set()
        # Insertion order is age: the first entry is the oldest untrusted connection.
        self.untrusted: OrderedDict[Any, str] = OrderedDict()
        self._by_address: dict[str, OrderedDict[Any, None]] = {}
        self.closed_slow = 0  # connections closed for a late head or to make room (for tests and logs)

    def admit(self, conn: Any, address: str) -> bool:
        """Registers a new connection; False when it must be refused (every connection is trusted)."""
        peers = self._by_address.get(address)
        if peers and len(peers) >= self.limits.max_untrusted_per_address:
            self._evict(next(iter(peers)))
        if len(self.untrusted) >= self.limits.max_untrusted:
            self._evict(next(iter(self.untrusted)))
        if len(self.trusted) + len(self.untrusted) >= self.limits.max_connections:
            if not self.untrusted:
                return False
            self._evict(next(iter(self.untrusted)))
        self.untrusted[conn] = address
        self._by_address.setdefault(address, OrderedDict())[conn] = None
        return True

    def trust(self, conn: Any) -> None:
        """Moves a connection that sent an authenticated request out of reach of eviction."""
        if conn in self.untrusted:
            self._drop_untrusted(conn)
            self.trusted.add(conn)

    def forget(self, conn: Any) -> None:
        """Drops a closed connection."""
        self.trusted.discard(conn)
        if conn in self.untrusted:
            self._drop_untrusted(conn)

    def _drop_untrusted(self, conn: Any) -> None:
        address = self.untrusted.pop(conn)
        peers = self._by_address[address]
        del peers[conn]
        if not peers:
            del self._by_address[address]

    def _evict(self, conn: Any) -> None:
        self.forget(conn)  # now: the transport reports its loss only on a later turn of the loop
        self.closed_slow += 1
        conn.close_slow()


def _address(client: tuple[str, int] | None) -> str:
    return client[0] if client else "?"


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the gate of the server (``server_state.osmosis_gate``) in front.

    Without a gate (another server built it) it behaves exactly as uvicorn's.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._gate: ConnectionGate | None = getattr(self.server_state, "osmosis_gate", None)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self._gate is None:
            return
        if not self._gate.admit(self, _address(self.client)):
            transport.abort()
            return
        self._start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        if self._gate is not None:
            self._gate.forget(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._gate is not None and self._head_timer is None and self._between_requests():
            self._start_head_timer()  # the first byte of the next head on a kept-alive connection
        super().data_received(data)

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self._gate is not None and self.cycle is not cycle:
            self._on_head()

    def _between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _on_head(self) -> None:
        """A whole request head arrived: its deadline is met; decide its fate before its body is read."""
        self._stop_head_timer()
        assert self._gate is not None
        verdict = self._gate.check(dict(self.scope))
        if verdict == "trusted":
            self._gate.trust(self)
        elif verdict == "refused":
            # The app answers from the head (401 / 404); nothing more is read, and the connection ends.
            self.flow.pause_reading()
            self.cycle.keep_alive = False

    def _start_head_timer(self) -> None:
        assert self._gate is not None
        self._head_timer = self.loop.call_later(self._gate.limits.head_timeout_seconds, self._head_late)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self._between_requests() and not self.transport.is_closing():
            self.close_slow(_HEAD_TIMEOUT_REPLY)

    def close_slow(self, reply: bytes = b"") -> None:
        """Closes this connection now (a late head, or room made for a newcomer)."""
        self._stop_head_timer()
        if self.transport.is_closing():
            return
        if reply:
            self.transport.write(reply)
            self.transport.close()
        else:
            self.transport.abort()
