"""An Osmosis platform stand-in for tests (stdlib only, run as a subprocess on 127.0.0.1).

It implements the ``/api/cli/*`` endpoints the CLI uses with in-memory state: the device login flow,
token verification and revocation, workspaces keyed by ``X-Osmosis-Git``, eval and training runs, secrets,
datasets (with presigned simple and multipart uploads that point back at this server's ``/_storage/``),
models, rollouts, rollout-server registration, eval sample downloads and eval imports (``platform_imports``).

Test control (no auth):
    ``GET  /_control/state``      the whole state, including every request received (``requests``)
    ``POST /_control/state``      merge keys into the state (seed runs, tokens, settings)
    ``POST /_control/fail``       queue a failure: ``{"method", "path" (prefix), "status", "body",
                                  "headers", "times", "delay", "drop"}``; ``drop`` closes the connection
                                  mid-request without answering
    ``POST /_control/approve``    approve the pending device login

State ``"streams_stay_open": true`` keeps an event stream (a dev server's logs) open after its events, until
the client leaves: the client is then following it, as it would a live server.

Usage: ``python platform_server.py [--port 0]``; prints ``READY <port>`` when listening.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

# Sibling modules: the script runs with this directory first on sys.path.
from platform_routes import ROUTES, UNSCOPED
from platform_state import BLOBS, NOW, STATE, USER, ApiError
from tls_serving import add_tls_arguments, enable_tls


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    # --- plumbing ---------------------------------------------------------------------------------------

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        if not isinstance(body, bytes):
            self.send_header("Content-Type", "application/json")
        stream = (headers or {}).get("Content-Type") == "text/event-stream"
        if stream and STATE.data.get("streams_stay_open"):
            self._send_open_stream(raw, headers or {})
            return
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    def _send_open_stream(self, raw: bytes, headers: dict[str, str]) -> None:
        """The events, then nothing (no length: the body ends when the connection does) until the client
        closes its side."""
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(raw)
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            while self.connection.recv(1024):
                pass

    def _handle(self, method: str) -> None:
        parts = urlsplit(self.path)
        path = parts.path
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        failure = self._take_failure(method, path)
        if failure and failure.get("drop"):
            if length:
                self.rfile.read(min(length, 1024))  # read a little, then vanish mid-request
            self.close_connection = True
            self.connection.shutdown(2)
            return
        raw = self.rfile.read(length) if length else b""
        with STATE.lock:
            if not path.startswith("/_control/"):  # the tests' own calls are not part of the record
                STATE.data["requests"].append(
                    {
                        "method": method,
                        "path": path,
                        "query": query,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": _maybe_json(raw) if not path.startswith("/_storage/") else {"size": len(raw)},
                    }
                )
        if failure:
            time.sleep(float(failure.get("delay", 0)))
            if failure.get("status"):
                self._send(int(failure["status"]), failure.get("body", {}), failure.get("headers"))
                return
        try:
            status, body, headers = self._route(method, path, query, raw)
        except ApiError as exc:
            status, body, headers = exc.status, exc.body, {}
        version = STATE.data.get("version_status")
        if version and path.startswith("/api/"):
            headers = {**headers, "X-Osmosis-Version-Status": version}
        self._send(status, body, headers)

    def _take_failure(self, method: str, path: str) -> dict[str, Any] | None:
        with STATE.lock:
            for rule in STATE.data["failures"]:
                if rule.get("method", method) == method and path.startswith(rule["path"]):
                    rule["times"] = rule.get("times", 1) - 1
                    if rule["times"] <= 0:
                        STATE.data["failures"].remove(rule)
                    return dict(rule)
        return None

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # --- routing ----------------------------------------------------------------------------------------

    def _route(self, method: str, path: str, query: dict[str, str], raw: bytes) -> tuple[int, Any, dict]:
        body = _maybe_json(raw)
        with STATE.lock:
            if path.startswith("/_control/"):
                return self._control(method, path, body)
            if path.startswith("/_storage/"):
                return self._storage(method, unquote(path[len("/_storage/") :]), raw)
            if path.startswith("/api/cli/device/"):
                return self._device(path, body)
            user = self._auth()
            for pattern, handler in ROUTES:
                match = re.fullmatch(pattern, f"{method} {path}")
                if match:
                    args = [unquote(g) for g in match.groups()]
                    if handler.__name__ not in UNSCOPED:
                        self._scope()
                    answer = handler(self, body, query, user, *args)
                    # A handler answers a JSON object, or (raw bytes, headers) for a stream.
                    return (200, *answer) if isinstance(answer, tuple) else (200, answer, {})
        raise ApiError(404, {"error": f"no route {method} {path}"})

    def _auth(self) -> dict[str, Any]:
        header = self.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            raise ApiError(401, {"error": "missing token", "code": "AUTH_HEADER_MISSING"})
        token = STATE.data["tokens"].get(header[7:])
        if token is None:
            raise ApiError(401, {"error": "invalid token", "code": "TOKEN_INVALID"})
        if token.get("revoked"):
            raise ApiError(401, {"error": "token revoked", "code": "TOKEN_REVOKED"})
        if token["expires_at"] < NOW:
            raise ApiError(401, {"error": "token expired", "code": "TOKEN_EXPIRED"})
        return token

    def _scope(self) -> dict[str, Any]:
        identity = self.headers.get("X-Osmosis-Git")
        if not identity:
            raise ApiError(400, {"error": "X-Osmosis-Git required", "code": "GIT_SCOPE_HEADER_REQUIRED"})
        workspace = STATE.data["workspaces"].get(identity)
        if workspace is None:
            raise ApiError(404, {"error": "not connected", "code": "GIT_REPOSITORY_NOT_CONNECTED"})
        return workspace

    def _control(self, method: str, path: str, body: Any) -> tuple[int, Any, dict]:
        data = STATE.data
        if path == "/_control/state" and method == "GET":
            return 200, data, {}
        if path == "/_control/state":
            data.update(body)
            return 200, {}, {}
        if path == "/_control/fail":
            data["failures"].append(body)
            return 200, {}, {}
        if path == "/_control/approve":
            data["device"]["approved"] = True
            return 200, {}, {}
        raise ApiError(404, {"error": "unknown control"})

    def _device(self, path: str, body: dict[str, Any]) -> tuple[int, Any, dict]:
        device = STATE.data["device"]
        if path.endswith("/authorize"):
            code = uuid.uuid4().hex
            device["codes"][code] = {"polls": 0, "device_name": body.get("deviceName")}
            port = self.server.server_address[1]
            return (
                200,
                {
                    "device_code": code,
                    "user_code": "WXYZ-1234",
                    "verification_uri": f"http://127.0.0.1:{port}/device",
                    "expires_in": 600,
                    "interval": device.get("interval", 0),
                },
                {},
            )
        entry = device["codes"].get(body.get("device_code"))
        if entry is None:
            raise ApiError(400, {"error": "expired_token"})
        entry["polls"] += 1
        if device["deny"]:
            raise ApiError(400, {"error": "access_denied"})
        if entry["polls"] <= device["slow_down_polls"]:
            raise ApiError(400, {"error": "slow_down"})
        if not device["approved"] and entry["polls"] <= device["slow_down_polls"] + device["pending_polls"]:
            raise ApiError(400, {"error": "authorization_pending"})
        token = "osm_" + uuid.uuid4().hex
        token_id = STATE.next_id("tok")
        STATE.data["tokens"][token] = {
            "token_id": token_id,
            "user": USER,
            "expires_at": "2099-01-01T00:00:00+00:00",
        }
        del device["codes"][body["device_code"]]
        return (
            200,
            {"token": token, "token_id": token_id, "expires_at": "2099-01-01T00:00:00+00:00", "user": USER},
            {},
        )

    def _storage(self, method: str, key: str, raw: bytes) -> tuple[int, Any, dict]:
        storage = STATE.data["storage"]
        if method == "PUT":
            digest = hashlib.md5(raw).hexdigest()
            storage[key] = {"size": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
            BLOBS[key] = raw
            return 200, None, {"ETag": f'"{digest}"'}
        if key in STATE.data.get("blobs", {}):
            blob = STATE.data["blobs"][key].encode()
            wanted = self.headers.get("Range", "")
            if wanted.startswith("bytes=") and wanted.endswith("-"):
                start = int(wanted[6:-1])
                return 206, blob[start:], {"Content-Range": f"bytes {start}-{len(blob) - 1}/{len(blob)}"}
            return 200, blob, {}
        raise ApiError(404, {"error": "no such object"})


def _maybe_json(raw: bytes) -> Any:
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return {"size": len(raw)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    add_tls_arguments(parser)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    enable_tls(server, args)
    print(f"READY {server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
