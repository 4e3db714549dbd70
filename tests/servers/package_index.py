"""A package index stand-in for `osmosis upgrade` tests: ``GET /pypi/osmosis-ai/json`` answers the bytes of
the file given with ``--answer`` (read on every request, so a test can change it); other paths are 404.

Usage: ``python package_index.py --answer FILE [--port 0]``; prints ``READY <port>`` when listening.
"""

from __future__ import annotations

import argparse
import contextlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answer", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    answer = Path(args.answer)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def do_GET(self) -> None:
            found = self.path == "/pypi/osmosis-ai/json"
            body = answer.read_bytes() if found else b'{"message": "Not Found"}'
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"READY {server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
