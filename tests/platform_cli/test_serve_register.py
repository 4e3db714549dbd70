"""`osmosis serve` registers with the platform when logged in (a real server process, the stand-in platform)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from .conftest import Run

FIXTURES = Path(__file__).parent.parent / "fixtures"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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
