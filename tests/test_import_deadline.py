"""User code imported under a deadline (issue #32): a module that blocks at import is stopped with an error
naming it, and Ctrl+C / SIGTERM during the import end the command cleanly.

The modules here block forever; the tests use a short deadline and assert on the outcome, never on time.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

from osmosis_ai.errors import ConfigError
from osmosis_ai.import_deadline import IMPORT_TIMEOUT_ENV, import_timeout
from osmosis_ai.importer import ImportTargetError, import_object

OSMOSIS = str(Path(sys.executable).with_name("osmosis"))
SPIN = "VALUE = 1\nwhile True:\n    pass\n"
# Waits on the network (an accept nobody answers), after saying so on stderr.
BLOCK = (
    "import socket, sys\n"
    "sys.stderr.write('IMPORT STARTED\\n'); sys.stderr.flush()\n"
    "listener = socket.socket(); listener.bind(('127.0.0.1', 0)); listener.listen()\n"
    "listener.accept()\n"
)
STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)


def test_a_module_that_spins_at_import_is_stopped_at_the_deadline_naming_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "spin_agent.py").write_text(SPIN)
    monkeypatch.setenv(IMPORT_TIMEOUT_ENV, "1")
    before = [signal.getsignal(s) for s in STOPS]
    with pytest.raises(ImportTargetError) as caught:
        import_object("spin_agent.py:VALUE", root=tmp_path)
    message = str(caught.value)
    assert "spin_agent.py did not finish within 1 s" in message
    assert f"(stopped at {tmp_path / 'spin_agent.py'}:" in message and IMPORT_TIMEOUT_ENV in message
    # The process's own handlers are back, and no timer is left armed.
    assert [signal.getsignal(s) for s in STOPS] == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_off_the_main_thread_the_import_is_abandoned_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = types.ModuleType("_osmosis_test_gate")
    gate.event = threading.Event()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "_osmosis_test_gate", gate)
    (tmp_path / "gated.py").write_text(
        "import _osmosis_test_gate\n_osmosis_test_gate.event.wait()\nVALUE = 1\n"
    )
    monkeypatch.setenv(IMPORT_TIMEOUT_ENV, "1")
    outcome: list[BaseException] = []

    def load() -> None:
        try:
            import_object("gated.py:VALUE", root=tmp_path)
        except BaseException as exc:
            outcome.append(exc)

    caller = threading.Thread(target=load)
    caller.start()
    caller.join()
    gate.event.set()  # lets the abandoned import finish
    assert len(outcome) == 1 and isinstance(outcome[0], ImportTargetError)
    assert "gated.py did not finish within 1 s" in str(outcome[0])
    assert f"(stopped at {tmp_path / 'gated.py'}:2: _osmosis_test_gate.event.wait())" in str(outcome[0])


def test_the_deadline_is_configurable_and_zero_means_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(IMPORT_TIMEOUT_ENV, raising=False)
    assert import_timeout() == 60.0
    monkeypatch.setenv(IMPORT_TIMEOUT_ENV, "0")
    assert import_timeout() is None
    for bad in ("soon", "-1", "inf"):
        monkeypatch.setenv(IMPORT_TIMEOUT_ENV, bad)
        with pytest.raises(ConfigError, match=f"{IMPORT_TIMEOUT_ENV}='{bad}': expected the seconds"):
            import_timeout()


def test_check_reports_a_hanging_reward_module_and_checks_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_ai.cli.check_cmd import check_repository

    (tmp_path / "reward_fn").mkdir()
    (tmp_path / "reward_fn" / "__init__.py").write_text("")
    (tmp_path / "reward_fn" / "a_spin.py").write_text(SPIN)
    (tmp_path / "reward_fn" / "b_good.py").write_text(
        "from osmosis_ai import osmosis_reward\n\n@osmosis_reward\n"
        "def exact(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:\n    return 1.0\n"
    )
    monkeypatch.setenv(IMPORT_TIMEOUT_ENV, "1")

    def forget_reward_fn() -> None:
        for name in [n for n in sys.modules if n == "reward_fn" or n.startswith("reward_fn.")]:
            del sys.modules[name]

    # `check` runs in a process of its own; in this one, another test's `reward_fn` package (the examples
    # have one) would stand in for this repository's, and this one must not stay for the next test.
    forget_reward_fn()
    try:
        report = check_repository(tmp_path)
    finally:
        forget_reward_fn()
    findings = report.sections["@osmosis_reward functions (reward_fn/)"]
    assert any(
        level == "error" and "a_spin" in text and "did not finish within 1 s" in text
        for level, text in findings
    ), findings
    assert ("ok", "reward_fn.b_good:exact (reward contract)") in findings


def _eval_command(module: str) -> list[str]:
    return [OSMOSIS, "eval", "-m", module, "-d", "rows.jsonl", "--model", "m", "--eval-fn", "x:y"]


def _project(tmp_path: Path, name: str, code: str) -> Path:
    (tmp_path / name).write_text(code)
    (tmp_path / "rows.jsonl").write_text('{"system_prompt": "s", "user_prompt": "u", "ground_truth": "1"}\n')
    return tmp_path


def test_eval_stops_at_the_deadline_with_an_error_and_no_traceback(tmp_path: Path) -> None:
    project = _project(tmp_path, "spin_agent.py", SPIN)
    done = subprocess.run(
        _eval_command("spin_agent:agent_loop"),
        cwd=project,
        env={**os.environ, IMPORT_TIMEOUT_ENV: "1"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    assert "module 'spin_agent' did not finish within 1 s (stopped at " in done.stderr
    assert "spin_agent.py:" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [(signal.SIGINT, 130, "Interrupted"), (signal.SIGTERM, 143, "Terminated (SIGTERM)")],
    ids=["ctrl-c", "sigterm"],
)
def test_a_signal_during_the_import_ends_eval_at_once_naming_the_module(
    tmp_path: Path, signum: int, code: int, word: str
) -> None:
    # The agent loads inside asyncio.run, whose own Ctrl+C handler only cancels a task the import blocks.
    project = _project(tmp_path, "blocking_agent.py", BLOCK)
    proc = subprocess.Popen(
        _eval_command("blocking_agent:agent_loop"),
        cwd=project,
        # faulthandler: should the command ever hang here, SIGABRT makes it print every thread's stack.
        env={**os.environ, IMPORT_TIMEOUT_ENV: "0", "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr = _StderrReader(proc)
    if not stderr.started.wait(GUARD_S):
        pytest.fail(stderr.abort("the import never started"))
    proc.send_signal(signum)
    if not stderr.ended.wait(GUARD_S):
        pytest.fail(stderr.abort(f"signal {signum} did not end the command"))
    rest = stderr.text()
    assert proc.wait() == code, rest
    assert f"{word} while importing module 'blocking_agent'." in rest
    assert "Traceback" not in rest


# A guard against a hang (which then fails naming where the command was stuck), not a timing claim.
GUARD_S = 300


class _StderrReader:
    """Collects a command's stderr on a thread, so the test waits on events with a guard, never blocks."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.started = threading.Event()
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if line.strip() == "IMPORT STARTED":
                self.started.set()
        self.started.set()  # EOF: the command failed before the import began (the assertions say how)
        self.ended.set()

    def text(self) -> str:
        return "".join(self.lines)

    def abort(self, what: str) -> str:
        self.proc.send_signal(signal.SIGABRT)  # faulthandler dumps every thread's stack to stderr
        self.ended.wait(60)
        self.proc.kill()
        return f"{what}; the command's stderr (with its stacks):\n{self.text()}"


def test_sigterm_while_config_validate_imports_in_its_child_ends_both(tmp_path: Path) -> None:
    # The entrypoint connects to this test's socket and waits for a reply that never comes: the accepted
    # connection is the event that says the import is under way (in the child the check runs in).
    subprocess.run([OSMOSIS, "init", str(tmp_path / "ws"), "--name", "demo"], check=True, capture_output=True)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(120)  # a guard against a hang if the command fails first, not a timing claim
    port = listener.getsockname()[1]
    main = (
        f"import socket\nconnection = socket.create_connection(('127.0.0.1', {port}))\nconnection.recv(1)\n"
    )
    (tmp_path / "ws/rollouts/demo/main.py").write_text(main)
    proc = subprocess.Popen(
        [OSMOSIS, "config", "validate", "configs/eval/demo.toml"],
        cwd=tmp_path / "ws",
        env={**os.environ, IMPORT_TIMEOUT_ENV: "0"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with listener, listener.accept()[0] as connection:
        connection.settimeout(120)  # the same guard
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate()
        assert proc.returncode == 143, out + err
        assert connection.recv(1) == b""  # the child was stopped too: its end of the connection closed
    assert "Terminated (SIGTERM) while importing rollouts/demo/main.py." in err and "Traceback" not in err
