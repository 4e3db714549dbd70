"""httpx clients routed by :func:`~osmosis_ai.llm.network.network_settings`: the platform client, storage
transfers, the trainer client and the rollout server's callbacks are all made here.

httpx would read the proxy variables itself; it is told not to (``trust_env=False``) and given a transport
that asks :meth:`~osmosis_ai.llm.network.NetworkSettings.route` for each request instead, so the direct
transport and every httpx client follow one decision. One connection pool per proxy (and one direct),
all checking servers against the same certificate context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import httpx

from osmosis_ai.errors import ConfigError
from osmosis_ai.llm.network import NetworkSettings, ProxyURL, network_settings

__all__ = ["AsyncRoutingTransport", "RoutingTransport", "async_http_client", "http_client"]

T = TypeVar("T")


class _Routes(Generic[T]):
    """A transport per destination: direct, and one per proxy the settings name."""

    def __init__(self, settings: NetworkSettings, make: Callable[[ProxyURL | None], T]) -> None:
        self.settings = settings
        self.direct = make(None)
        self.via = {proxy: make(proxy) for proxy in settings.proxies}

    def pick(self, url: httpx.URL) -> T:
        proxy = self.settings.route(url.scheme, url.host, url.port)
        return self.direct if proxy is None else self.via[proxy]

    def all(self) -> list[T]:
        return [self.direct, *self.via.values()]


def _options(settings: NetworkSettings, limits: httpx.Limits | None) -> dict[str, Any]:
    return {"verify": settings.ssl_context(), **({"limits": limits} if limits is not None else {})}


def _proxy(proxy: ProxyURL | None, settings: NetworkSettings) -> httpx.Proxy | None:
    if proxy is None:
        return None
    if proxy.scheme != "https":
        return httpx.Proxy(proxy.url)
    # The proxy's own TLS certificate is checked against the same authorities as any server's.
    return httpx.Proxy(proxy.url, ssl_context=settings.ssl_context())


def _made(make: Callable[[], T], proxy: ProxyURL | None) -> T:
    try:
        return make()
    except ImportError as exc:  # httpx needs socksio for socks5:// proxies
        where = f"{proxy.variable}={proxy.shown}" if proxy else "the proxy settings"
        raise ConfigError(f"{where}: {exc}; pip install 'httpx[socks]' or use an http:// proxy") from None


class RoutingTransport(httpx.BaseTransport):
    """Sends each request directly or through its proxy, as the settings decide."""

    def __init__(self, settings: NetworkSettings, *, limits: httpx.Limits | None = None) -> None:
        options = _options(settings, limits)
        self._routes = _Routes(
            settings,
            lambda p: _made(lambda: httpx.HTTPTransport(proxy=_proxy(p, settings), **options), p),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._routes.pick(request.url).handle_request(request)

    def close(self) -> None:
        for transport in self._routes.all():
            transport.close()


class AsyncRoutingTransport(httpx.AsyncBaseTransport):
    """The asyncio twin of :class:`RoutingTransport`."""

    def __init__(self, settings: NetworkSettings, *, limits: httpx.Limits | None = None) -> None:
        options = _options(settings, limits)
        self._routes = _Routes(
            settings,
            lambda p: _made(lambda: httpx.AsyncHTTPTransport(proxy=_proxy(p, settings), **options), p),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._routes.pick(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        for transport in self._routes.all():
            await transport.aclose()


def _settings(direct: bool) -> NetworkSettings:
    settings = network_settings()
    return settings.direct() if direct else settings


def http_client(*, direct: bool = False, **options: Any) -> httpx.Client:
    """An ``httpx.Client`` following the proxy and certificate settings in effect.

    Args:
        direct: Never through a proxy (for servers we run on 127.0.0.1 ourselves).
        **options: ``httpx.Client`` options; ``limits`` goes to each connection pool.

    Raises:
        ConfigError: A proxy or certificate variable is unusable (the message names it).

    Example:
        >>> with http_client(timeout=5.0) as client:  # doctest: +SKIP
        ...     client.get("https://platform.osmosis.ai/api/cli/verify")
    """
    limits = options.pop("limits", None)
    transport = RoutingTransport(_settings(direct), limits=limits)
    return httpx.Client(transport=transport, trust_env=False, **options)


def async_http_client(*, direct: bool = False, **options: Any) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` twin of :func:`http_client`."""
    limits = options.pop("limits", None)
    transport = AsyncRoutingTransport(_settings(direct), limits=limits)
    return httpx.AsyncClient(transport=transport, trust_env=False, **options)
