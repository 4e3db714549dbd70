"""`osmosis serve` registers with the platform when logged in (a real server process, the stand-in platform)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import Run

FIXTURES = Path(__file__).parent.parent / "fixtures"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_registration(proc: subprocess.Popen[str], platform: Any) -> None:
    deadline = time.monotonic() + 120  # a hang guard
    while not platform.state()["registrations"]:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)


def test_serve_registers_with_the_platform(home: Path, platform: Any) -> None:
    pytest.importorskip("fastapi")
    platform.seed_token("serve-token-secret")
    port = free_port()
    env = {
        **os.environ,
        "OSMOSIS_TOKEN": "serve-token-secret",
        "OSMOSIS_TOKEN_PLATFORM_URL": platform.url,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("OSMOSIS_ROLLOUT_API_KEY", None)
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("osmosis")),
            "serve",
            "-m",
            "rollout_agents:ScenarioAgent",
            "-p",
            str(port),
        ],
        cwd=FIXTURES,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    registered = threading.Event()

    def read_stdout() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "[OK] Registered" in line:
                registered.set()

    reader = threading.Thread(target=read_stdout, daemon=True)
    reader.start()
    try:
        # Waits on the server's own success line (unbuffered), not on a guess of how long it takes.
        assert registered.wait(timeout=120) or proc.poll() is not None, "no registration line"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        reader.join(timeout=30)
    out = err = "".join(lines)  # stderr is merged into it
    registration = platform.state()["registrations"][0]
    assert registration["host"] == "127.0.0.1" and registration["port"] == port
    assert registration["agent_loop_name"] == "scenario"
    key = re.search(r"API Key:\s+(osm_rollout_\S+)", out)
    assert key and registration["api_key"] == key.group(1)
    assert "[OK] Registered with the Osmosis platform" in out, out + err
    assert "serve-token-secret" not in out + err
    sent = platform.requests("/api/cli/rollout-server/register")[0]
    assert sent["headers"]["authorization"] == "Bearer serve-token-secret"


def test_serve_without_login_names_both_ways_forward(
    home: Path, osmosis: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FIXTURES)
    monkeypatch.delenv("OSMOSIS_ROLLOUT_API_KEY", raising=False)
    code, _, err = osmosis("serve", "-m", "rollout_agents:ScenarioAgent")
    sys.modules.pop("rollout_agents", None)
    assert code == 1
    assert "osmosis auth login" in err and "--skip-register" in err and "--local" in err


CREATE_APP_SERVER = """
import sys, uvicorn
from osmosis_ai.platform.auth import load_credentials
from osmosis_ai.rollout import create_app
from rollout_agents import ScenarioAgent

port = int(sys.argv[1])
app = create_app(
    ScenarioAgent(), credentials=load_credentials(), server_host="127.0.0.1", server_port=port, api_key="k-1"
)
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
"""


def test_create_app_with_credentials_registers_like_serve(home: Path, platform: Any, tmp_path: Path) -> None:
    # 0.2.17 code builds the server itself: create_app(agent, credentials=..., server_host=, server_port=).
    pytest.importorskip("fastapi")
    platform.seed_token("app-token-secret")
    script = tmp_path / "server.py"
    script.write_text(CREATE_APP_SERVER)
    port = free_port()
    env = {
        **os.environ,
        "OSMOSIS_TOKEN": "app-token-secret",
        "OSMOSIS_TOKEN_PLATFORM_URL": platform.url,
        "PYTHONPATH": str(FIXTURES),
    }
    proc = subprocess.Popen(
        [sys.executable, str(script), str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for_registration(proc, platform)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    registration = platform.state()["registrations"][0]
    assert (registration["host"], registration["port"]) == ("127.0.0.1", port)
    assert registration["agent_loop_name"] == "scenario" and registration["api_key"] == "k-1"
    assert "app-token-secret" not in out + err
    assert platform.requests("/api/cli/rollout-server/register")[0]["headers"]["authorization"] == (
        "Bearer app-token-secret"
    )


def test_create_app_refuses_credentials_that_are_no_login() -> None:
    pytest.importorskip("fastapi")
    from osmosis_ai.rollout import create_app
    from tests.fixtures.rollout_agents import ScenarioAgent

    with pytest.raises(TypeError, match="load_credentials"):
        create_app(ScenarioAgent(), credentials="a-token", server_host="127.0.0.1", server_port=9000)
