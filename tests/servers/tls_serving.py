"""TLS for the stdlib test servers: ``--tls-cert``/``--tls-key`` turn a ``ThreadingHTTPServer`` into https.

The handshake runs in each connection's own thread, so a client that connects and says nothing holds up
only itself.
"""

from __future__ import annotations

import argparse
import ssl
from socketserver import BaseServer
from typing import Any


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tls-cert", help="PEM certificate chain: serve https instead of http")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")


def enable_tls(server: BaseServer, args: argparse.Namespace) -> None:
    """Makes ``server`` speak TLS when ``args`` name a certificate (otherwise leaves it as it is)."""
    if not args.tls_cert:
        return
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.tls_cert, args.tls_key)
    accept = server.get_request  # type: ignore[attr-defined]
    finish = server.finish_request

    def get_request() -> tuple[Any, Any]:
        sock, address = accept()
        return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def finish_request(request: Any, address: Any) -> None:
        try:
            request.do_handshake()
        except (ssl.SSLError, OSError):
            return  # a client that gave up or distrusts us; nothing to answer
        finish(request, address)

    server.get_request = get_request  # type: ignore[attr-defined]
    server.finish_request = finish_request  # type: ignore[method-assign]
