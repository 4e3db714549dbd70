"""How many requests a model server on this machine serves at once, and a session's concurrency fitted to it.

llama.cpp's server (the embedded local model has 1 slot) queues requests beyond its slots, and the wait in
that queue counts against the client's per-request timeout: 8 judge calls sent at once to 1 slot on a
loaded machine time out and are retried, though the server is healthy. The server says how many slots it
has (``GET /props``: ``total_slots``), so a session aimed at it runs no more calls at once than that.

Only loopback base URLs are asked (a server of this machine; a remote one is the user's to size), with a
short bounded request; anything but a positive ``total_slots`` means "unknown" and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import orjson

from osmosis_ai.llm.http1 import Http1Pool
from osmosis_ai.llm.network import is_loopback_host, network_settings
from osmosis_ai.redact import safe_url

__all__ = ["PROBE_TIMEOUT", "SlotFit", "fit_to_slots", "server_slots"]

#: Seconds the ``/props`` request may take in all (connecting included): ample for a server on this
#: machine even under load, short beside a session.
PROBE_TIMEOUT = 5.0


async def server_slots(base_url: str | None, *, timeout: float = PROBE_TIMEOUT) -> int | None:
    """The request slots of the server at ``base_url`` when it is on this machine and says (llama.cpp's
    ``GET /props`` at the server's root), else None.

    Example:
        >>> import asyncio
        >>> asyncio.run(server_slots("https://api.openai.com/v1")) is None  # not asked: not loopback
        True
    """
    parts = urlsplit(base_url or "")
    if parts.scheme != "http" or not is_loopback_host(parts.hostname or ""):
        return None
    pool: Http1Pool | None = None
    try:
        # Our own machine: asked directly, whatever proxy the environment names.
        pool = Http1Pool(f"http://{parts.netloc}", limit=1, network=network_settings().direct())
        response = await pool.get("/props", timeout=timeout)
        slots = orjson.loads(response.body).get("total_slots") if response.status == 200 else None
    except Exception:  # a bad port, no answer, not JSON, not an object: unknown, and nothing changes
        return None
    finally:
        if pool is not None:
            await pool.aclose()
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None


@dataclass(frozen=True)
class SlotFit:
    """A session's concurrency against its server's slots.

    Attributes:
        wanted: The concurrency asked for.
        slots: The server's request slots, or None when unknown.
        base_url: The server asked.
    """

    wanted: int
    slots: int | None
    base_url: str | None

    @property
    def concurrency(self) -> int:
        """``wanted``, or the slots when the server has fewer."""
        return min(self.wanted, self.slots) if self.slots is not None else self.wanted

    @property
    def lowered(self) -> bool:
        """Whether the server's slots lowered the concurrency."""
        return self.concurrency < self.wanted

    def note(self, what: str = "calls") -> str:
        """The line telling the user why fewer ``what`` run at once (meant when :attr:`lowered`)."""
        return (
            f"The server at {safe_url(self.base_url)} has {self.slots} request slot(s): running "
            f"{self.concurrency} {what} at a time instead of {self.wanted} (calls beyond its slots wait "
            "in its queue, and the wait counts against their timeout)."
        )


async def fit_to_slots(wanted: int, base_url: str | None) -> SlotFit:
    """``wanted`` concurrency fitted to the slots of the server at ``base_url`` (see the module docstring).

    Example:
        >>> import asyncio
        >>> asyncio.run(fit_to_slots(8, None)).concurrency
        8
    """
    return SlotFit(wanted, await server_slots(base_url) if wanted > 1 else None, base_url)
