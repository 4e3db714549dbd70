"""Shared fixtures: real servers on 127.0.0.1 (scripted OpenAI-compatible, embedded SmolLM2)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from servers import ScriptedServer

# LiteLLM must never try the network for its cost map during tests.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(autouse=True)
def _results_logs_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default results logs go to a temporary folder, never to the developer's ~/.cache."""
    monkeypatch.setenv("OSMOSIS_LOG_DIR", str(tmp_path_factory.getbasetemp() / "results-logs"))


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], ScriptedServer]]:
    """Starts scripted OpenAI-compatible servers for this test: ``server = scripted(plan)``."""
    started: list[ScriptedServer] = []

    def start(plan: dict[str, Any]) -> ScriptedServer:
        server = ScriptedServer(plan, plan_dir=tmp_path).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium for the page tests (tests/page_driver.py drives it)."""
    from tests.page_driver import browser_session

    yield from browser_session()


@pytest.fixture(scope="session")
def local_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The embedded SmolLM2 server (xllamacpp, 1 thread), started once per test session."""
    from osmosis_ai.llm.local_server import spawn_local_server

    log = tmp_path_factory.mktemp("local-model") / "server.log"
    server = spawn_local_server(threads=1, log_file=str(log))
    yield server
    server.stop()


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provider key or endpoint from the developer's shell leaks into a test."""
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_BASE_URL", "_API_BASE")):
            monkeypatch.delenv(name, raising=False)


def _start_ray(ray: Any, attempts: int = 5) -> None:
    """``ray.init`` that survives a loaded machine: Ray gives its node 30 s to come up (fixed in its code)
    and its raylet the same to find its agent's ports (RAY_agent_register_timeout_ms, raised here); past
    them the start fails, and a second try finds the agent's imports warm."""
    os.environ.setdefault("RAY_agent_register_timeout_ms", "300000")
    for attempt in range(1, attempts + 1):
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
            return
        except Exception as exc:
            if "timed out during startup" not in str(exc) or attempt == attempts:
                raise
            ray.shutdown()


@pytest.fixture
def trainer() -> Iterator[Any]:
    """A fake TrainGate (completions and callbacks) on 127.0.0.1 for this test (modules that share one
    define their own, module-scoped)."""
    from tests.fixtures.rollout_harness import FakeTrainer

    fake = FakeTrainer().start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def ray_head() -> Iterator[Any]:
    """A Ray head in this process (2 CPUs, every Ray process on this machine), one per test module."""
    ray = pytest.importorskip("ray")
    # Ray reports usage statistics over the internet unless told not to; tests never reach it.
    saved = os.environ.get("RAY_USAGE_STATS_ENABLED")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    _start_ray(ray)
    yield ray
    ray.shutdown()
    if saved is None:
        os.environ.pop("RAY_USAGE_STATS_ENABLED", None)
    else:
        os.environ["RAY_USAGE_STATS_ENABLED"] = saved


@pytest.fixture
def ray_never_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails the test if a command starts the Ray backend (for sessions with nothing to run)."""
    pytest.importorskip("ray")
    from osmosis_ai.runs.ray_backend import RayBackend

    async def start(self: Any) -> None:
        raise AssertionError("the Ray backend was started")

    monkeypatch.setattr(RayBackend, "start", start)
