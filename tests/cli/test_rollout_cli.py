"""`osmosis validate` and the checks `osmosis serve` makes before it binds anything."""

from __future__ import annotations

import pathlib
import socket
import sys

import pytest

from osmosis_ai.cli.main import main

FIXTURES = pathlib.Path(__file__).parent.parent / "fixtures"


@pytest.fixture(autouse=True)
def in_fixtures(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.chdir(FIXTURES)
    monkeypatch.delenv("OSMOSIS_ROLLOUT_API_KEY", raising=False)
    # No platform login, whatever the developer's machine has (registration is tested in platform_cli/).
    monkeypatch.setenv("OSMOSIS_CONFIG_DIR", str(tmp_path / "config"))
    for name in ("OSMOSIS_TOKEN", "OSMOSIS_PLATFORM_URL", "OSMOSIS_TOKEN_PLATFORM_URL"):
        monkeypatch.delenv(name, raising=False)
    yield
    sys.modules.pop("rollout_agents", None)


def test_validate_valid_agent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-m", "rollout_agents:ScenarioAgent"]) == 0
    out = capsys.readouterr().out
    assert "Agent loop 'scenario' validated successfully." in out
    assert "  - Tools: 1" in out and "  - Warnings: 0" in out


def test_validate_invalid_agent_lists_errors_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-m", "rollout_agents:InvalidAgent", "-v"]) == 1
    err = capsys.readouterr().err
    assert "Agent loop validation failed with 2 error(s):" in err
    assert "  - [INVALID_FUNCTION_NAME] tools[0].function.name:" in err
    assert "  - [INVALID_TOOL_TYPE] tools[1]:" in err


def test_validate_load_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-m", "rollout_agents:Missing"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: Module 'rollout_agents' has no attribute 'Missing'")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "Not logged in to https://platform.osmosis.ai. Run `osmosis auth login`"),
        (["--local", "--api-key", "k"], "--local disables API-key auth"),
        (["--local", "-H", "0.0.0.0"], "--local (no auth) only binds a loopback address"),
        (["--skip-register", "--api-key", " "], "--api-key must not be empty"),
    ],
)
def test_serve_refuses_unsafe_or_unavailable_setups(
    args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "-m", "rollout_agents:ScenarioAgent", *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and fragment in err
    assert "Traceback" not in err


def test_serve_reports_a_busy_port_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["serve", "-m", "rollout_agents:ScenarioAgent", "--skip-register", "-p", str(port)])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith(f"Error: cannot listen on 127.0.0.1:{port}: Address already in use")
    assert "Traceback" not in err


def test_serve_reports_a_bad_setting_before_starting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_ai.rollout.config import reset_settings

    monkeypatch.setenv("OSMOSIS_ROLLOUT_SERVER_MAX_CONCURRENT_ROLLOUTS", "0")
    reset_settings()
    try:
        assert main(["serve", "-m", "rollout_agents:ScenarioAgent", "--skip-register"]) == 1
    finally:
        reset_settings()
    captured = capsys.readouterr()
    assert captured.err.startswith("Error: invalid rollout settings: environment variable ")
    assert "OSMOSIS_ROLLOUT_SERVER_MAX_CONCURRENT_ROLLOUTS='0': Input should be greater than" in captured.err
    assert "RolloutServer" not in captured.out


def test_serve_refuses_an_invalid_agent_before_binding(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "-m", "rollout_agents:InvalidAgent", "--skip-register"]) == 1
    captured = capsys.readouterr()
    assert "Error: Agent loop validation failed with 2 error(s):" in captured.err
    assert "RolloutServer" not in captured.out


def test_serve_reload_without_module_path_is_refused() -> None:
    from osmosis_ai.rollout import ServeError, serve_agent_loop
    from osmosis_ai.rollout.loader import load_agent_loop

    agent = load_agent_loop("rollout_agents:ScenarioAgent")
    with pytest.raises(ServeError, match="reload needs the agent as 'module:attribute'"):
        serve_agent_loop(agent, skip_register=True, reload=True, validate=False)


def test_loopback_detection() -> None:
    from osmosis_ai.rollout.serve import is_loopback_host

    assert [is_loopback_host(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost")] == [
        True
    ] * 5
    assert [is_loopback_host(h) for h in ("0.0.0.0", "10.0.0.1", "::", "example.com")] == [False] * 4
