"""Address helpers, public-IP detection against plain-text servers on 127.0.0.1, and the lazy names."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

import osmosis_ai.rollout as rollout
from osmosis_ai.rollout import (
    PublicIPDetectionError,
    detect_public_ip,
    is_private_ip,
    is_valid_hostname_or_ip,
    validate_ipv4,
)
from tests.fixtures.rollout_harness import free_port


@pytest.fixture
def ip_server() -> Iterator[str]:
    """Answers GET /<text> with <text>, like a "what is my IP" service."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = self.path.lstrip("/").encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_address_predicates() -> None:
    assert validate_ipv4("192.168.0.1") and not validate_ipv4("192.168.0") and not validate_ipv4("::1")
    assert is_valid_hostname_or_ip("::1") and is_valid_hostname_or_ip("host-1.example.org.")
    assert not is_valid_hostname_or_ip("-bad.example") and not is_valid_hostname_or_ip("")
    assert not is_valid_hostname_or_ip("999.1.1.1")
    assert is_private_ip("127.0.0.1") and is_private_ip("172.16.3.4") and is_private_ip("garbage")
    assert not is_private_ip("8.8.8.8")


def test_detect_public_ip_takes_the_first_public_answer(ip_server: str) -> None:
    assert (
        detect_public_ip(timeout=5, services=[f"{ip_server}/10.0.0.1", f"{ip_server}/8.8.8.8"]) == "8.8.8.8"
    )


def test_detect_public_ip_explains_every_failure(ip_server: str) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(PublicIPDetectionError, match="not a public IPv4 address") as caught:
        detect_public_ip(timeout=5, services=[f"{ip_server}/192.168.1.1", closed])
    assert closed in str(caught.value)


def test_lazy_rollout_names_resolve() -> None:
    for name in rollout._LAZY:
        assert getattr(rollout, name) is not None, name
    assert rollout.DEFAULT_HOST == "127.0.0.1" and rollout.DEFAULT_PORT == 9000
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = rollout.nope
