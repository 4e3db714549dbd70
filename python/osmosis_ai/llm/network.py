"""Proxy and certificate settings of every outbound HTTP client, decided in one place.

:func:`network_settings` reads the environment the way httpx does, so our clients agree with the user's
other tools (and with the established package, whose LiteLLM ran on httpx):

* ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``ALL_PROXY`` (any case; a lower-case name wins over another spelling,
  as in :func:`urllib.request.getproxies`), a value without a scheme meaning ``http://``;
* ``NO_PROXY``: ``*`` turns every proxy off; ``.example.com`` covers sub-domains only, ``example.com`` the
  domain and its sub-domains, an IP address or ``localhost`` that host only, ``scheme://host[:port]`` that
  exact origin; the most specific rule wins (a port first, then the longest host, then the longest scheme);
* ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle: the authorities a TLS server is checked
  against (the proxy's own certificate included).

The direct transport (:mod:`.http1`) asks :meth:`NetworkSettings.proxy_for` once per connection pool; the
httpx clients of :mod:`.httpx_clients` (platform, storage, trainer callbacks) ask :meth:`NetworkSettings.route`
per request, and LiteLLM gets the same certificate context. Proxy credentials are registered with the
redactor as soon as they are read.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import ipaddress
import os
import re
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from osmosis_ai.errors import ConfigError
from osmosis_ai.redact import remember, safe_url

if TYPE_CHECKING:
    import ssl

__all__ = [
    "CA_VARIABLES",
    "LOOPBACK_HOSTS",
    "NetworkSettings",
    "ProxyURL",
    "cover_loopback",
    "is_loopback_host",
    "network_settings",
    "proxy_variables",
]

CA_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
_DEFAULT_PORTS = {"ftp": 21, "http": 80, "https": 443, "ws": 80, "wss": 443}
_PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")
_ROUTED = ("http", "https", "all")


@dataclass(frozen=True)
class ProxyURL:
    """A proxy to send requests through, read from ``variable``.

    Attributes:
        url: The URL as configured, credentials included: never print it, print :attr:`shown`.
        scheme, host, port: Where the proxy listens (``port`` defaulted from the scheme).
        authorization: The ``Proxy-Authorization`` value for credentials in the URL, else None.
        variable: The environment variable it came from (``HTTPS_PROXY``, ``all_proxy``...).
    """

    url: str
    scheme: str
    host: str
    port: int
    authorization: str | None
    variable: str

    @property
    def shown(self) -> str:
        """The URL fit to print (credentials masked)."""
        return safe_url(self.url) or ""


@dataclass(frozen=True)
class _Rule:
    """One routing rule in httpx's ``scheme://host:port`` pattern form, with its proxy (None: go direct)."""

    pattern: str
    scheme: str  # "" matches any scheme
    host: str  # "" matches any host
    port: int | None
    proxy: ProxyURL | None
    host_regex: re.Pattern[str] | None = field(default=None, compare=False)

    @property
    def priority(self) -> tuple[int, int, int]:
        return (0 if self.port is not None else 1, -len(self.host), -len(self.scheme))

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        if self.scheme and self.scheme != scheme:
            return False
        if self.host and self.host_regex is not None and not self.host_regex.match(host):
            return False
        return self.port is None or self.port == port


@dataclass(frozen=True)
class NetworkSettings:
    """What the environment says about proxies and certificate authorities (see the module docstring).

    Example:
        >>> s = network_settings({"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "internal.example"})
        >>> s.proxy_for("https://api.openai.com/v1").shown, s.proxy_for("https://internal.example/v1")
        ('http://proxy:3128', None)
    """

    rules: tuple[_Rule, ...] = ()
    no_proxy: tuple[str, ...] = ()
    ca_file: str | None = None
    ca_dir: str | None = None
    problems: tuple[str, ...] = ()
    variables: tuple[tuple[str, str], ...] = ()

    @property
    def proxies(self) -> tuple[ProxyURL, ...]:
        """The distinct proxies some request may go through."""
        return tuple(dict.fromkeys(r.proxy for r in self.rules if r.proxy is not None))

    def proxy_for(self, url: str) -> ProxyURL | None:
        """The proxy a request to ``url`` goes through, or None for a direct connection.

        Raises:
            ConfigError: A proxy variable is unusable (see :attr:`problems`).
        """
        self.check()
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        port = parts.port
        if port == _DEFAULT_PORTS.get(scheme):
            port = None
        return self.route(scheme, (parts.hostname or "").lower(), port)

    def route(self, scheme: str, host: str, port: int | None) -> ProxyURL | None:
        """:meth:`proxy_for` for a parsed URL (``port`` None when it is the scheme's default)."""
        for rule in self.rules:
            if rule.matches(scheme, host, port):
                return rule.proxy
        return None

    def direct(self) -> NetworkSettings:
        """These settings without any proxy (for our own loopback servers); the certificates stay."""
        return NetworkSettings(ca_file=self.ca_file, ca_dir=self.ca_dir)

    def check(self) -> None:
        """Raises ConfigError naming the variable when a proxy or certificate setting is unusable."""
        if self.problems:
            raise ConfigError(self.problems[0])

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS client context every client shares (certificates per ``SSL_CERT_FILE`` / ``_DIR``).

        Raises:
            ConfigError: The file or directory named does not exist or holds no certificates.
        """
        self.check()
        return _ssl_context(self.ca_file, self.ca_dir)

    def ca_bundle(self) -> str:
        """The authorities as one PEM file, for clients that take a path only (LiteLLM): ``SSL_CERT_FILE``,
        the certificates of ``SSL_CERT_DIR`` gathered into a file of this process, or certifi's bundle."""
        if self.ca_file:
            return self.ca_file
        if self.ca_dir:
            return _bundle_of(self.ca_dir)
        import certifi

        return str(certifi.where())

    def describe(self) -> dict[str, Any]:
        """What ``osmosis doctor`` shows: variables set, proxies per scheme, CA source (credentials masked)."""
        by_scheme = {}
        for scheme in ("http", "https"):
            proxy = self.route(scheme, "", None) if not self.problems else None
            by_scheme[scheme] = proxy.shown if proxy else None
        return {
            "proxies": by_scheme,
            "no_proxy": list(self.no_proxy),
            "ca_file": self.ca_file,
            "ca_dir": self.ca_dir,
            "ca_source": _ca_source(self.ca_file, self.ca_dir),
            "variables": {k: safe_url(v) for k, v in self.variables},
            "problems": list(self.problems),
        }


def _ca_source(ca_file: str | None, ca_dir: str | None) -> str:
    if ca_file:
        return f"SSL_CERT_FILE ({ca_file})"
    if ca_dir:
        return f"SSL_CERT_DIR ({ca_dir})"
    import certifi

    return f"certifi ({certifi.where()})"


@functools.lru_cache(maxsize=8)
def _ssl_context(ca_file: str | None, ca_dir: str | None) -> ssl.SSLContext:
    import ssl

    name, path = ("SSL_CERT_FILE", ca_file) if ca_file else ("SSL_CERT_DIR", ca_dir)
    try:
        if ca_file:
            return ssl.create_default_context(cafile=ca_file)
        if ca_dir:
            return ssl.create_default_context(capath=ca_dir)
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            f"{name}={path}: cannot load certificate authorities ({exc.strerror or exc}); point it at a PEM "
            "bundle (SSL_CERT_FILE) or a hashed certificate directory (SSL_CERT_DIR), or unset it"
        ) from None


@functools.lru_cache(maxsize=4)
def _bundle_of(directory: str) -> str:
    import tempfile
    from pathlib import Path

    blocks = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)
    found: dict[str, None] = {}
    for path in sorted(Path(directory).iterdir()):
        if path.is_file():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                found.update(dict.fromkeys(blocks.findall(path.read_text(encoding="ascii"))))
    if not found:
        raise ConfigError(
            f"SSL_CERT_DIR={directory}: no PEM certificates in it; point it at a certificate directory"
        )
    with tempfile.NamedTemporaryFile("w", suffix=".pem", prefix="osmosis-ca-", delete=False) as handle:
        handle.write("\n".join(found) + "\n")
    return handle.name


def proxy_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The proxy and certificate variables set, by the name they are set under (values unmasked; an empty
    lower-case one is kept: it switches off its upper-case twin)."""
    environ = os.environ if environ is None else environ
    wanted = {f"{scheme}_proxy" for scheme in (*_ROUTED, "no")}
    return {name: value for name, value in environ.items() if name.lower() in wanted or name in CA_VARIABLES}


def _environment_proxies(environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """``{scheme: (value, variable)}`` exactly as :func:`urllib.request.getproxies_environment` picks them.

    Two passes: any spelling first, then all-lower-case ``*_proxy`` names again, so those win (an empty one
    removes the entry). Under CGI (``REQUEST_METHOD`` set) an upper-case ``HTTP_PROXY`` may come from a
    client's ``Proxy:`` header and is ignored.
    """
    found: dict[str, tuple[str, str]] = {}
    for name, value in environ.items():
        lowered = name.lower()
        if value and lowered[-6:] == "_proxy":
            found[lowered[:-6]] = (value, name)
    if "REQUEST_METHOD" in environ:
        found.pop("http", None)
    for name, value in environ.items():
        if name[-6:] == "_proxy":
            if value:
                found[name.lower()[:-6]] = (value, name)
            else:
                found.pop(name.lower()[:-6], None)
    if not found and environ is os.environ and sys.platform in ("darwin", "win32"):
        from urllib.request import getproxies  # the system's settings, as httpx falls back to them

        found = {k: (v, "system proxy settings") for k, v in getproxies().items()}
    return found


def _proxy_url(value: str, variable: str) -> ProxyURL:
    url = value.strip() if "://" in value else f"http://{value.strip()}"
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{variable}={safe_url(url)}: the port is not a number") from None
    if scheme not in _PROXY_SCHEMES:
        raise ValueError(
            f"{variable}={safe_url(url)}: unsupported proxy scheme '{scheme}' (use http://, https:// or socks5://)"
        )
    if not parts.hostname:
        raise ValueError(f"{variable}={safe_url(url)}: no proxy host")
    authorization = None
    if parts.username is not None or parts.password is not None:
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
        remember([unquote(parts.password or ""), parts.password, authorization.split(" ", 1)[1]])
    default = {"http": 80, "https": 443}.get(scheme, 1080)
    return ProxyURL(url, scheme, parts.hostname.lower(), port or default, authorization, variable)


def _no_proxy_pattern(entry: str) -> str:
    """An entry of ``NO_PROXY`` as httpx turns it into a pattern (see the module docstring)."""
    if "://" in entry:
        return entry
    bare = entry.split("/")[0]
    for kind in (ipaddress.IPv4Address, ipaddress.IPv6Address):
        try:
            kind(bare)
        except ValueError:
            continue
        return f"all://{entry}" if kind is ipaddress.IPv4Address else f"all://[{entry}]"
    if entry.lower() == "localhost":
        return f"all://{entry}"
    return f"all://*{entry}"


def _rule(pattern: str, proxy: ProxyURL | None) -> _Rule:
    """A pattern (``scheme://host:port``, ``*`` wildcards as in httpx) as a rule; ValueError if unparseable."""
    scheme, separator, rest = pattern.partition("://")
    if not separator:
        raise ValueError(f"not a URL pattern: {pattern!r}")
    scheme = scheme.lower()
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0].rsplit("@", 1)[-1]
    if authority.startswith("["):
        host, _, tail = authority[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port_text = authority.partition(":")
    if port_text and not port_text.isdigit():
        raise ValueError(f"not a port: {port_text!r}")
    port = int(port_text) if port_text else None
    if port == _DEFAULT_PORTS.get(scheme):
        port = None
    host = host.lower()
    regex = None
    if host and host != "*":
        if host.startswith("*."):
            regex = re.compile(rf"^.+\.{re.escape(host[2:])}$")
        elif host.startswith("*"):
            regex = re.compile(rf"^(.+\.)?{re.escape(host[1:])}$")
        else:
            regex = re.compile(rf"^{re.escape(host)}$")
    return _Rule(pattern, "" if scheme == "all" else scheme, "" if host == "*" else host, port, proxy, regex)


def network_settings(environ: Mapping[str, str] | None = None) -> NetworkSettings:
    """The proxy and certificate settings in effect (``environ`` defaults to this process's environment).

    Unusable values do not raise here (``osmosis doctor`` shows them): they are listed in
    :attr:`NetworkSettings.problems`, and using the settings raises :class:`~osmosis_ai.errors.ConfigError`.

    Example:
        >>> network_settings({"HTTP_PROXY": "http://user:pw-1234@proxy:3128"}).proxy_for("http://x/").shown
        'http://***@proxy:3128'
    """
    environ = os.environ if environ is None else environ
    found = _environment_proxies(environ)
    patterns: dict[str, ProxyURL | None] = {}
    problems: list[str] = []
    for scheme in _ROUTED:
        if scheme in found:
            value, variable = found[scheme]
            try:
                patterns[f"{scheme}://"] = _proxy_url(value, variable)
            except ValueError as exc:
                problems.append(str(exc))
    entries = tuple(e.strip() for e in found.get("no", ("", ""))[0].split(",") if e.strip())
    for entry in entries:
        if entry == "*":
            patterns = {}
            break
        patterns[_no_proxy_pattern(entry)] = None
    rules = []
    for pattern, proxy in patterns.items():
        try:
            rules.append(_rule(pattern, proxy))
        except ValueError:
            problems.append(f"NO_PROXY entry {pattern.removeprefix('all://')!r} is not a host name; ignored")
    rules.sort(key=lambda r: r.priority)  # stable: ties keep the environment's order, as in httpx
    ca_file = environ.get("SSL_CERT_FILE") or None
    ca_dir = None if ca_file else (environ.get("SSL_CERT_DIR") or None)
    variables = tuple(proxy_variables(environ).items())
    return NetworkSettings(tuple(rules), entries, ca_file, ca_dir, tuple(problems), variables)


def cover_loopback(environ: MutableMapping[str, str] | None = None) -> None:
    """Adds ``127.0.0.1`` and ``localhost`` to ``NO_PROXY`` (kept as it was otherwise), so clients reaching
    servers we run on this machine (the model bridge, the local model) never send those requests to a proxy.

    Every spelling of the variable gets the same value, so whichever one a tool reads, it sees the user's
    entries and ours.

    Example:
        >>> env = {"NO_PROXY": "corp.example"}
        >>> cover_loopback(env); env["NO_PROXY"], env["no_proxy"]
        ('corp.example,127.0.0.1,localhost', 'corp.example,127.0.0.1,localhost')
    """
    environ = os.environ if environ is None else environ
    current = _environment_proxies(environ).get("no", ("", ""))[0]
    entries = [e.strip() for e in current.split(",") if e.strip()]
    if "*" in entries:
        return
    value = ",".join([*entries, *(h for h in LOOPBACK_HOSTS if h not in entries)])
    names = {"NO_PROXY", "no_proxy", *(n for n in environ if n.lower() == "no_proxy")}
    for name in names:
        if environ.get(name) != value:
            environ[name] = value


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ``::1``, bracketed or not).

    Example:
        >>> is_loopback_host("127.0.0.5"), is_loopback_host("[::1]"), is_loopback_host("0.0.0.0")
        (True, True, False)
    """
    host = host.strip().strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
