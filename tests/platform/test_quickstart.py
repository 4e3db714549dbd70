"""`osmosis quickstart` in a pseudo-terminal against the platform stand-in.

The workspace repository is "cloned from GitHub" through git's own ``insteadOf`` rewriting to a local bare
repository, so the real `git clone` runs and no test reaches the internet.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import GIT_ENV, Run


class Terminal:
    """`osmosis ARGS` on a pseudo-terminal: wait for text to appear, then answer."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        osmosis = str(Path(sys.executable).with_name("osmosis"))
        self.proc = subprocess.Popen(
            [osmosis, *args], cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave
        )
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"never saw {text!r}; got:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"the command ended before {text!r}; got:\n{self.seen}"
                self.seen += chunk.decode(errors="replace").replace("\r\n", "\n")

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def finish(self) -> int:
        code = self.proc.wait(timeout=60)
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk.decode(errors="replace").replace("\r\n", "\n")
        os.close(self.master)
        return code


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """A bare `acme/agents` repository that https://github.com/ and git@github.com: URLs are rewritten to."""
    remotes = tmp_path / "remotes"
    source = tmp_path / "source"
    env = {**os.environ, **GIT_ENV}
    git = ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
    subprocess.run(["git", "init", "-q", str(source)], check=True, env=env)
    (source / "README.md").write_text("workspace\n")
    subprocess.run([*git, "add", "-A"], cwd=source, check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=source, check=True, env=env)
    (remotes / "acme").mkdir(parents=True)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(source), str(remotes / "acme/agents.git")], check=True, env=env
    )
    config = tmp_path / "gitconfig"
    config.write_text(
        f'[url "file://{remotes}/"]\n\tinsteadOf = https://github.com/\n\tinsteadOf = git@github.com:\n'
        '[protocol "file"]\n\tallow = always\n'
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    return remotes


def test_quickstart_needs_a_terminal(home: Path, osmosis: Run) -> None:
    code, out, err = osmosis("--json", "quickstart")
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert code == 1 and out == "" and error["code"] == "INTERACTIVE_REQUIRED"
    assert "manual-setup" in error["message"]


def test_quickstart_clones_checks_billing_and_hands_over_a_prompt(
    home: Path, platform: Any, logged_in: str, github: Path
) -> None:
    platform.update(
        quickstart={
            "ws-1": {
                "connected": True,
                "full_name": "acme/agents",
                "billing_ready": False,
                "completed": False,
            }
        }
    )
    env = {**os.environ, "TERM": "dumb"}
    term = Terminal(["quickstart"], home, env)
    term.expect("CLI auth")
    term.expect("Where should acme/agents be cloned?")
    term.send("agents-clone")
    term.expect("Clone over HTTPS or SSH?")
    term.expect("Choose")
    term.send("1")
    term.expect("Press Enter to continue")
    platform.update(
        quickstart={
            "ws-1": {"connected": True, "full_name": "acme/agents", "billing_ready": True, "completed": False}
        }
    )
    term.send("")
    term.expect("What do you want to do?")
    term.send("2")
    term.expect("Describe your task")
    term.send("math word problems")
    assert term.finish() == 0, term.seen
    assert "Setup complete" in term.seen and "evaluate a model on math word problems" in term.seen
    clone = home / "agents-clone"
    origin = subprocess.run(
        ["git", "config", "--get", "remote.origin.url"], cwd=clone, capture_output=True, text=True, check=True
    )
    assert origin.stdout.strip() == "https://github.com/acme/agents.git" and (clone / "README.md").is_file()
    assert platform.requests("/api/cli/quickstart")[-1]["body"] == {
        "organizationId": "ws-1",
        "intent": "eval",
    }
    assert "x-osmosis-git" not in platform.requests("/api/cli/quickstart")[-1]["headers"]
    registry = json.loads((home / ".config/osmosis/workspace-directories.json").read_text())
    assert registry["platforms"][platform.url]["ws-1"] == str(clone)

    again = Terminal(["quickstart"], home, env)  # resumes: the remembered clone, no clone question
    again.expect("workspace directory: " + str(clone))
    again.expect("What do you want to do?")
    again.send("4")
    assert again.finish() == 0, again.seen
    assert "Where should" not in again.seen and "Setup complete. Your workspace directory is" in again.seen


def test_waiting_for_a_repository_polls_until_an_admin_connects_it(platform: Any, logged_in: str) -> None:
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.quickstart import wait_for_repository

    platform.update(
        quickstart={
            "ws-1": {
                "connected": False,
                "full_name": "acme/agents",
                "billing_ready": True,
                "completed": False,
            }
        }
    )
    polls: list[float] = []

    def admin_connects_on_the_second_poll(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) == 2:
            platform.update(
                quickstart={
                    "ws-1": {
                        "connected": True,
                        "full_name": "acme/agents",
                        "billing_ready": True,
                        "completed": False,
                    }
                }
            )

    with PlatformClient(platform.url, token=logged_in) as client:
        state = wait_for_repository(client, "ws-1", sleep=admin_connects_on_the_second_poll)
    assert state.repo_full_name == "acme/agents" and polls == [5.0, 5.0]
