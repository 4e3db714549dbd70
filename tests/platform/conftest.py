"""Fixtures for the platform commands: the platform stand-in, an isolated home, a connected workspace."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from osmosis_ai.cli.main import main
from servers import PlatformServer

Run = Callable[..., tuple[int, str, str]]
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture
def platform() -> Iterator[PlatformServer]:
    """A fresh platform stand-in on 127.0.0.1 for this test."""
    with PlatformServer() as server:
        yield server


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """No keyring backend, as on CI runners and in containers."""
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: PlatformServer, no_keyring: None) -> Path:
    """An empty home and config directory, the stand-in as the platform, no token in the environment."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OSMOSIS_CONFIG_DIR", str(home / ".config" / "osmosis"))
    monkeypatch.setenv("OSMOSIS_PLATFORM_URL", platform.url)
    for name in ("OSMOSIS_TOKEN", "OSMOSIS_TOKEN_PLATFORM_URL", "OSMOSIS_ENV_FILE", "OSMOSIS_TOKEN_STORE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    # Child processes (`osmosis` subprocesses) must not touch the developer's real keyring either.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.chdir(home)
    return home


def make_workspace(root: Path, remote: str = "git@github.com:Acme/Agents.git") -> Path:
    """A workspace made by `osmosis init`, in a Git repository whose origin is ``remote``."""
    assert main(["init", str(root), "--name", "demo"]) == 0
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run(["git", "remote", "add", "origin", remote], cwd=root, check=True, env=env)
    return root


@pytest.fixture
def workspace(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """The current directory: a workspace connected (on the stand-in) as acme/agents."""
    root = make_workspace(home / "ws")
    capsys.readouterr()
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def osmosis(capsys: pytest.CaptureFixture[str]) -> Run:
    """Runs `osmosis ARGS...` in-process; returns (exit code, stdout, stderr)."""

    def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
        capsys.readouterr()
        if stdin is not None:
            import io
            import sys

            old = sys.stdin
            sys.stdin = io.StringIO(stdin)
            try:
                code = main(list(args))
            finally:
                sys.stdin = old
        else:
            code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def logged_in(home: Path, platform: PlatformServer, osmosis: Run) -> str:
    """A stored login (token kept in the 0600 file, as there is no keyring); returns the token."""
    platform.seed_token("tok-logged-in-secret", token_id="tok-1")
    code, _, err = osmosis("auth", "login", "--token", "tok-logged-in-secret", "--token-store", "file")
    assert code == 0, err
    return "tok-logged-in-secret"
