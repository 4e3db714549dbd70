"""Real HTTP servers that tests start on 127.0.0.1 and stop again (no test reaches the internet)."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("scripted_openai.py")


@dataclass(frozen=True)
class TLSFiles:
    """A server certificate (chain and key) and the test CA that signed it (PEM files)."""

    cert: str
    key: str
    ca: str


class _ServerProcess:
    """A server script run as a subprocess that prints ``READY <port>`` once it listens; stopped on exit.

    ``tls`` makes it serve https with that certificate. The test's own calls to it (control routes) never
    go through a proxy, whatever the environment says.
    """

    name = "server"

    def __init__(self, tls: TLSFiles | None = None) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0
        self.tls = tls

    @property
    def origin(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def _tls_args(self) -> list[str]:
        return ["--tls-cert", self.tls.cert, "--tls-key", self.tls.key] if self.tls else []

    def urlopen(self, request: Any, timeout: float = 10) -> Any:
        """``urllib.request.urlopen`` straight to this server (no proxy; the test CA when it serves TLS)."""
        handlers: list[Any] = [urllib.request.ProxyHandler({})]
        if self.tls:
            handlers.append(
                urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=self.tls.ca))
            )
        return urllib.request.build_opener(*handlers).open(request, timeout=timeout)

    def start(self) -> Any:
        raise NotImplementedError  # each server builds its command line, then calls _spawn

    def _spawn(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("READY "):
            self.stop()
            raise RuntimeError(f"{self.name} did not start: {line!r}")
        self.port = int(line.split()[1])

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stdout:
                self.proc.stdout.close()
            self.proc = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ScriptedServer(_ServerProcess):
    """The scripted OpenAI-compatible server (``scripted_openai.py``) in a subprocess.

    Example:
        >>> with ScriptedServer({"default": {"score": 0.7}}) as server:
        ...     server.base_url  # doctest: +SKIP
        'http://127.0.0.1:40123/v1'
    """

    name = "scripted server"

    def __init__(
        self, plan: dict[str, Any] | None = None, plan_dir: Path | None = None, tls: TLSFiles | None = None
    ) -> None:
        self.plan = plan or {}
        self.plan_dir = plan_dir
        super().__init__(tls)

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def start(self) -> ScriptedServer:
        args = [sys.executable, str(SCRIPT), *self._tls_args()]
        if self.plan:
            import tempfile

            directory = self.plan_dir or Path(tempfile.mkdtemp(prefix="scripted-plan-"))
            plan_file = directory / "plan.json"
            plan_file.write_text(json.dumps(self.plan), encoding="utf-8")
            args += ["--plan", str(plan_file)]
        self._spawn(args)
        return self

    def set_plan(self, plan: dict[str, Any]) -> None:
        """Replaces the plan and forgets recorded requests."""
        request = urllib.request.Request(
            f"{self.origin}/_plan",
            data=json.dumps(plan).encode(),
            headers={"Content-Type": "application/json"},
        )
        with self.urlopen(request, timeout=5) as response:
            response.read()

    def requests(self) -> list[dict[str, Any]]:
        """The request bodies the server received, in order."""
        with self.urlopen(f"{self.origin}/_requests", timeout=5) as response:
            return json.loads(response.read())

    def most_in_flight(self) -> int:
        """The most chat requests the server was answering at once."""
        with self.urlopen(f"{self.origin}/_in_flight", timeout=5) as response:
            return int(json.loads(response.read())["most"])

    def wait_held(self, at_least: int = 1, timeout: float = 120) -> int:
        """Returns once ``at_least`` requests are held (a ``"hold": true`` spec): the client is then waiting
        on its model call. ``timeout`` is a hang guard: reaching it fails the test."""
        with self.urlopen(
            f"{self.origin}/_held?at_least={at_least}&timeout={timeout}", timeout + 10
        ) as reply:
            return int(json.loads(reply.read())["held"])


PLATFORM_SCRIPT = Path(__file__).with_name("platform_server.py")


class PlatformServer(_ServerProcess):
    """The platform stand-in (``platform_server.py``) in a subprocess on 127.0.0.1.

    Example:
        >>> with PlatformServer() as platform:  # doctest: +SKIP
        ...     platform.seed_token("tok-1")
        ...     platform.url
        'http://127.0.0.1:40123'
    """

    name = "platform server"

    @property
    def url(self) -> str:
        return self.origin

    def start(self) -> PlatformServer:
        self._spawn([sys.executable, str(PLATFORM_SCRIPT), *self._tls_args()])
        return self

    def _call(self, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, headers={"Content-Type": "application/json"}
        )
        with self.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"{}")

    def state(self) -> dict[str, Any]:
        """Everything the server holds, including ``requests`` (every request it received)."""
        return self._call("/_control/state")

    def update(self, **values: Any) -> None:
        """Sets top-level state keys (``eval_runs=[...]``, ``multipart_threshold=...``)."""
        self._call("/_control/state", values)

    def fail(
        self, path: str, status: int = 500, *, method: str | None = None, times: int = 1, **rule: Any
    ) -> None:
        """Makes the next ``times`` requests to ``path`` (a prefix) fail (``drop=True``: close mid-request)."""
        body = {"path": path, "status": status, "times": times, **rule}
        if method:
            body["method"] = method
        self._call("/_control/fail", body)

    def seed_token(
        self, token: str, *, expires_at: str = "2099-01-01T00:00:00+00:00", token_id: str = "tok-seed"
    ) -> None:
        """Makes ``token`` valid for the stand-in's one user."""
        tokens = self.state()["tokens"]
        tokens[token] = {
            "token_id": token_id,
            "user": {"id": "user-1", "email": "ada@example.com", "name": "Ada Lovelace"},
            "expires_at": expires_at,
        }
        self.update(tokens=tokens)

    def requests(self, path: str | None = None) -> list[dict[str, Any]]:
        """Requests received (optionally those whose path starts with ``path``)."""
        return [r for r in self.state()["requests"] if path is None or r["path"].startswith(path)]


PROXY_SCRIPT = Path(__file__).with_name("forward_proxy.py")


class ForwardProxy(_ServerProcess):
    """The forward proxy (``forward_proxy.py``): plain http forwarding and ``CONNECT``, every name resolving
    to 127.0.0.1, an optional ``user:password`` it requires, optionally itself served over TLS.

    Example:
        >>> with ForwardProxy() as proxy:  # doctest: +SKIP
        ...     proxy.url, proxy.log()
        ('http://127.0.0.1:40123', [])
    """

    name = "forward proxy"

    def __init__(self, auth: str | None = None, tls: TLSFiles | None = None) -> None:
        self.auth = auth
        super().__init__(tls)

    @property
    def url(self) -> str:
        """The proxy URL to put in ``HTTP(S)_PROXY`` (with the credentials when it requires some)."""
        scheme = "https" if self.tls else "http"
        credentials = f"{self.auth}@" if self.auth else ""
        return f"{scheme}://{credentials}127.0.0.1:{self.port}"

    def start(self) -> ForwardProxy:
        auth = ["--auth", self.auth] if self.auth else []
        self._spawn([sys.executable, str(PROXY_SCRIPT), *auth, *self._tls_args()])
        return self

    def log(self) -> list[dict[str, Any]]:
        """Every request the proxy received: ``{"method", "host", "port", "path", "authorized"}``."""
        with self.urlopen(f"{self.origin}/_log") as response:
            return json.loads(response.read())

    def hosts(self) -> set[str]:
        """The host names requests went to through the proxy."""
        return {entry["host"] for entry in self.log()}


INDEX_SCRIPT = Path(__file__).with_name("package_index.py")


class PackageIndex(_ServerProcess):
    """The package index stand-in (``package_index.py``): its JSON API answers ``answer_file``'s bytes.

    Example:
        >>> with PackageIndex(tmp_path / "answer.json") as index:  # doctest: +SKIP
        ...     index.url
        'http://127.0.0.1:40123/pypi'
    """

    name = "package index"

    def __init__(self, answer_file: Path) -> None:
        self.answer_file = answer_file
        super().__init__()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/pypi"

    def start(self) -> PackageIndex:
        self._spawn([sys.executable, str(INDEX_SCRIPT), "--answer", str(self.answer_file)])
        return self
