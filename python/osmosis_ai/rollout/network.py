"""Address helpers: checking hosts and IPs, and finding this machine's public IP."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from osmosis_ai.errors import OsmosisRolloutError

__all__ = [
    "PUBLIC_IP_SERVICES",
    "PublicIPDetectionError",
    "detect_public_ip",
    "is_private_ip",
    "is_valid_hostname_or_ip",
    "validate_ipv4",
]

# Plain-text "what is my IP" services, asked in parallel; the first valid public answer wins.
PUBLIC_IP_SERVICES = (
    "https://checkip.amazonaws.com",
    "https://api.ipify.org",
    "https://icanhazip.com",
    "https://ifconfig.me/ip",
)
_HOST_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


class PublicIPDetectionError(OsmosisRolloutError):
    """No service told us a valid public IP address."""


def validate_ipv4(address: str) -> bool:
    """True for a dotted-quad IPv4 address.

    Example:
        >>> validate_ipv4("10.0.0.1"), validate_ipv4("10.0.0.256"), validate_ipv4("::1")
        (True, False, False)
    """
    try:
        ipaddress.IPv4Address(address.strip())
    except (ValueError, AttributeError):
        return False
    return True


def is_valid_hostname_or_ip(value: str) -> bool:
    """True for an IPv4/IPv6 address or a syntactically valid hostname.

    Example:
        >>> is_valid_hostname_or_ip("rollouts.example.com"), is_valid_hostname_or_ip("bad_host!")
        (True, False)
    """
    if not isinstance(value, str) or not value.strip():
        return False
    value = value.strip()
    try:
        ipaddress.ip_address(value.strip("[]"))
        return True
    except ValueError:
        pass
    host = value[:-1] if value.endswith(".") else value
    if len(host) > 253 or re.fullmatch(r"[0-9.]+", host):
        return False
    return all(_HOST_LABEL.match(label) for label in host.split("."))


def is_private_ip(address: str) -> bool:
    """True for private, loopback, link-local and other non-public addresses (invalid input too).

    Example:
        >>> is_private_ip("192.168.1.5"), is_private_ip("8.8.8.8")
        (True, False)
    """
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return True
    return not ip.is_global


def _ask(url: str, timeout: float) -> str:
    from osmosis_ai.llm.httpx_clients import http_client

    with http_client(timeout=timeout, follow_redirects=True) as client:
        response = client.get(url)
    response.raise_for_status()
    answer = response.text.strip()
    if not validate_ipv4(answer) or is_private_ip(answer):
        raise ValueError(f"{url} answered {answer[:60]!r}, not a public IPv4 address")
    return answer


def detect_public_ip(timeout: float = 3.0, services: Sequence[str] = PUBLIC_IP_SERVICES) -> str:
    """Asks "what is my IP" services in parallel and returns the first valid public IPv4 address.

    Cloud metadata endpoints are not queried. Needs outbound internet access.

    Raises:
        PublicIPDetectionError: No service answered with a public IPv4 address within ``timeout``.

    Example:
        >>> detect_public_ip(timeout=2.0)  # doctest: +SKIP
        '203.0.113.7'
    """
    failures: list[str] = []
    pool = ThreadPoolExecutor(max_workers=max(1, len(services)))
    try:
        pending = {pool.submit(_ask, url, timeout): url for url in services}
        while pending:
            done, _ = wait(pending, timeout=timeout + 1, return_when=FIRST_COMPLETED)
            if not done:
                failures.append("no answer in time")
                break
            for future in done:
                url = pending.pop(future)
                try:
                    return future.result()
                except Exception as exc:
                    failures.append(f"{url}: {exc}")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    raise PublicIPDetectionError("could not detect the public IP address (" + "; ".join(failures) + ")")
