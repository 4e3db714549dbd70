"""Real HTTP servers that tests start on 127.0.0.1 and stop again (no test reaches the internet)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("scripted_openai.py")


class _ServerProcess:
    """A server script run as a subprocess that prints ``READY <port>`` once it listens; stopped on exit."""

    name = "server"

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

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

    def __init__(self, plan: dict[str, Any] | None = None, plan_dir: Path | None = None) -> None:
        self.plan = plan or {}
        self.plan_dir = plan_dir
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedServer:
        args = [sys.executable, str(SCRIPT)]
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
            f"http://127.0.0.1:{self.port}/_plan",
            data=json.dumps(plan).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            response.read()

    def requests(self) -> list[dict[str, Any]]:
        """The request bodies the server received, in order."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_requests", timeout=5) as response:
            return json.loads(response.read())


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
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> PlatformServer:
        self._spawn([sys.executable, str(PLATFORM_SCRIPT)])
        return self

    def _call(self, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
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
