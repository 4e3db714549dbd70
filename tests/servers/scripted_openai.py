"""A scripted OpenAI-compatible chat server for tests and benches (stdlib only, run as a subprocess).

It answers ``POST /v1/chat/completions`` from a JSON plan, so tests can produce what a real model will not
on demand: rate limits with ``Retry-After``, 5xx, hangs, unparseable replies, out-of-range scores, unknown
models. Every request body it receives is kept and served back from ``GET /_requests``.

Plan (JSON)::

    {
      "responses": [<spec>, ...],      # used in order, one per request, then "default"
      "default": <spec>,
      "by_model": {"<model>": <spec>}, # wins over the above for that model id
      "by_prompt": {"<text>": [<spec>, ...]}  # first match in the last user message; used in order,
                                              # the last one repeats (wins over everything above)
    }

A spec is a dict with any of: ``status`` (default 200), ``headers``, ``delay`` (seconds before answering),
``score`` + ``explanation`` (reply content becomes that JSON object), ``content`` (verbatim reply content),
``body`` (a verbatim JSON body, e.g. an error object), ``usage``, ``tool_calls`` (the reply asks for these
calls: a list of ``{"name", "arguments"}``, or ``{"name", "raw_arguments"}`` to send an arguments string
verbatim, e.g. invalid JSON), ``fault`` (a broken reply instead of an answer: ``"reset"`` sends half the body then resets the
connection, ``"truncate"`` sends half the body and closes, ``"stall"`` sends the headers and half the body,
then nothing more until the client leaves, ``"empty_choices"`` answers 200 with ``"choices": []``,
``"not_json"`` answers 200 with a body that is not JSON), ``hold`` (true: never answered; the request waits
until the client leaves, so a test can signal a command while it waits on a model call).

The plan's ``"props"`` (a JSON object) is served at ``GET /props``, as llama.cpp's server reports its
``total_slots`` there; without it ``/props`` is a 404. ``GET /_in_flight`` answers ``{"most": n}``: the
most chat requests the server was answering at once.

``GET /_held?at_least=N&timeout=S`` answers once N requests are being held (``{"held": n}``), or 504 after S
seconds: an event to wait on instead of a sleep.

``POST /v1/embeddings`` answers from the plan's ``"embeddings": {"<text>": [floats]}`` (a text missing
from it is a 400), so cosine-similarity graders get vectors chosen by the test.

Usage: ``python scripted_openai.py --plan plan.json [--port 0] [--tls-cert F --tls-key F]``; prints
``READY <port>`` when listening.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tls_serving import add_tls_arguments, enable_tls

DEFAULT_SPEC: dict[str, Any] = {"score": 0.5, "explanation": "scripted default"}


class _State:
    def __init__(self, plan: dict[str, Any]) -> None:
        self.lock = threading.Lock()
        self.held_changed = threading.Condition(self.lock)
        self.held = 0  # requests held so far (a "hold" spec), over every plan
        self.in_flight = 0  # chat requests being answered now
        self.most_in_flight = 0
        self.set_plan(plan)

    def wait_held(self, at_least: int, timeout: float) -> int:
        with self.held_changed:
            self.held_changed.wait_for(lambda: self.held >= at_least, timeout)
            return self.held

    def set_plan(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.queue = list(plan.get("responses", []))
        self.requests: list[dict[str, Any]] = []

    def next_spec(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append(body)
            prompt = _last_user_text(body)
            for text, specs in self.plan.get("by_prompt", {}).items():
                if text in prompt and specs:
                    return specs.pop(0) if len(specs) > 1 else specs[0]
            by_model = self.plan.get("by_model", {})
            if body.get("model") in by_model:
                return by_model[body["model"]]
            if self.queue:
                return self.queue.pop(0)
            return self.plan.get("default", DEFAULT_SPEC)


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def _completion_body(spec: dict[str, Any], model: str) -> dict[str, Any]:
    if "tool_calls" in spec:
        calls = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": c["name"],
                    "arguments": c["raw_arguments"]
                    if "raw_arguments" in c
                    else json.dumps(c.get("arguments", {})),
                },
            }
            for i, c in enumerate(spec["tool_calls"])
        ]
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        usage = spec.get("usage", {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60})
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "model": model,
            "choices": [choice],
            "usage": usage,
        }
    if "content" in spec:
        content = spec["content"]
    else:
        content = json.dumps({"score": spec.get("score", 0.5), "explanation": spec.get("explanation", "ok")})
    usage = spec.get("usage", {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60})
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": usage,
    }


def make_handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in separate writes; without this, Nagle + delayed ACK add ~40 ms.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, str(value))
            self.end_headers()
            self.wfile.write(data)

        def _fault(self, fault: str, model: str) -> None:
            data = json.dumps(_completion_body({"content": "1"}, model)).encode()
            if fault == "empty_choices":
                self._send(200, {"id": "x", "object": "chat.completion", "model": model, "choices": []})
                return
            if fault == "not_json":
                data = b"<html>502 Bad Gateway</html>"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if fault == "not_json":
                self.wfile.write(data)
                return
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            if fault == "reset":
                # SO_LINGER 0: close() sends RST instead of FIN.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            elif fault == "stall":
                self._until_the_client_leaves()
            self.close_connection = True

        def _until_the_client_leaves(self) -> None:
            while not self.server.stopping.wait(0.2):  # type: ignore[attr-defined]
                with contextlib.suppress(OSError):
                    if self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                        return  # the client gave up

        def _hold(self) -> None:
            with state.held_changed:
                state.held += 1
                state.held_changed.notify_all()
            self._until_the_client_leaves()
            self.close_connection = True

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            return json.loads(raw or b"{}")

        def _embeddings(self, body: dict[str, Any]) -> None:
            with state.lock:
                state.requests.append(body)
                table = state.plan.get("embeddings", {})
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else list(texts or [])
            missing = [t for t in texts if t not in table]
            if missing:
                self._send(400, {"error": {"message": f"no scripted embedding for {missing[0]!r}"}})
                return
            data = [{"object": "embedding", "index": i, "embedding": table[t]} for i, t in enumerate(texts)]
            self._send(200, {"object": "list", "data": data, "model": body.get("model", "")})

        def do_GET(self) -> None:
            if self.path.startswith("/_held"):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                at_least = int(query.get("at_least", ["1"])[0])
                held = state.wait_held(at_least, float(query.get("timeout", ["60"])[0]))
                self._send(200 if held >= at_least else 504, {"held": held})
            elif self.path == "/props" and "props" in state.plan:
                self._send(200, state.plan["props"])
            elif self.path == "/_in_flight":
                with state.lock:
                    self._send(200, {"most": state.most_in_flight})
            elif self.path == "/_requests":
                with state.lock:
                    self._send(200, state.requests)
            elif self.path in ("/health", "/v1/models"):
                self._send(200, {"status": "ok", "data": []})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            body = self._body()
            if self.path == "/_plan":
                with state.lock:
                    state.set_plan(body)
                self._send(200, {"ok": True})
                return
            if self.path.rstrip("/").endswith("/embeddings"):
                self._embeddings(body)
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            with state.lock:
                state.in_flight += 1
                state.most_in_flight = max(state.most_in_flight, state.in_flight)
            try:
                self._complete(body)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _complete(self, body: dict[str, Any]) -> None:
            spec = state.next_spec(body)
            if spec.get("hold"):
                self._hold()
                return
            if spec.get("delay"):
                time.sleep(float(spec["delay"]))
            if spec.get("fault"):
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._fault(str(spec["fault"]), str(body.get("model", "")))
                return
            status = int(spec.get("status", 200))
            if "body" in spec:
                payload = spec["body"]
            elif status == 200:
                payload = _completion_body(spec, str(body.get("model", "")))
            else:
                payload = {"error": {"message": spec.get("message", f"scripted {status}"), "code": status}}
            # The client may have given up already (a timeout test).
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(status, payload, spec.get("headers"))

    return Handler


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 drops connections when a client opens 16 at once.
    request_queue_size = 256
    stopping = threading.Event()  # ends stalled replies on shutdown


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", help="JSON plan file (default: always score 0.5)")
    parser.add_argument("--port", type=int, default=0)
    add_tls_arguments(parser)
    args = parser.parse_args(argv)
    plan = {}
    if args.plan:
        with open(args.plan, encoding="utf-8") as fh:
            plan = json.load(fh)
    server = _Server(("127.0.0.1", args.port), make_handler(_State(plan)))
    server.daemon_threads = True
    enable_tls(server, args)
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()


if __name__ == "__main__":
    main(sys.argv[1:])
