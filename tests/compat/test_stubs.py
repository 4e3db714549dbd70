"""The established paths resolve statically (type stubs from the table) and at runtime whatever is on disk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import osmosis_ai
from osmosis_ai._compat.paths import ESTABLISHED, PACKAGES
from osmosis_ai._compat.stubs import _HEADER, stub_files

PACKAGE_ROOT = Path(osmosis_ai.__file__).parent


def test_the_stubs_on_disk_are_what_the_table_generates() -> None:
    expected = stub_files(PACKAGE_ROOT)
    generated_on_disk = {
        file for file in PACKAGE_ROOT.rglob("*.pyi") if file.read_text(encoding="utf-8").startswith(_HEADER)
    }
    fix = "run `.venv/bin/python -m osmosis_ai._compat.stubs` (and delete stubs of removed rows)"
    assert generated_on_disk == set(expected), fix
    for file, text in expected.items():
        assert file.read_text(encoding="utf-8") == text, f"{file} differs from the table: {fix}"


def _user_file() -> tuple[str, dict[int, str]]:
    """A user's module importing every name of every established path, and which line reveals which name.

    A name its home lacks would reach users as a silent ``Any`` (mypy does not report errors inside an
    installed package), so every imported name goes through ``reveal_type``.
    """
    lines, revealed = [], {}
    for number, (path, names) in enumerate(ESTABLISHED.items()):
        lines.append(f"import {path}")
        for name in names:
            lines.append(f"from {path} import {name} as _{number}_{name}")
            lines.append(f"reveal_type(_{number}_{name})")
            revealed[len(lines)] = f"{path}.{name}"
    return "\n".join(lines) + "\n", revealed


def test_mypy_resolves_every_established_path_to_its_home(tmp_path: Path) -> None:
    user_file = tmp_path / "user_code.py"
    text, revealed = _user_file()
    user_file.write_text(text, encoding="utf-8")
    # From a directory of its own, so mypy sees the package as users' checkers do: installed (maturin
    # develop's .pth into python/), typed by py.typed, not as files next to the checked one.
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--strict",
        "--cache-dir",
        str(tmp_path / "cache"),
        user_file.name,
    ]
    env = {key: value for key, value in os.environ.items() if key not in ("MYPYPATH", "PYTHONPATH")}
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    types = {}
    for line in done.stdout.splitlines():
        if ": note: Revealed type is " in line:
            types[revealed[int(line.split(":")[1])]] = line.split("Revealed type is ", 1)[1].strip('"')
    assert set(types) == set(revealed.values()), done.stdout
    assert [name for name, type_ in types.items() if type_ == "Any"] == [], "names whose home lacks them"


def test_a_directory_at_a_package_path_does_not_hide_its_row(tmp_path: Path) -> None:
    # An upgrade in place leaves `rollout/types/__pycache__/` after the 0.3 files are gone, and the stubs
    # make `rollout/types/` and `rollout/core/` directories: either would be an empty namespace package if
    # the path finder were asked before the table.
    stale = tmp_path / "rollout"
    for package in sorted(PACKAGES):
        if package.startswith("osmosis_ai.rollout."):
            (stale / Path(*package.split(".")[2:]) / "__pycache__").mkdir(parents=True, exist_ok=True)
    code = (
        "import osmosis_ai.rollout, sys\n"
        f"osmosis_ai.rollout.__path__.insert(0, {str(stale)!r})\n"
        "from osmosis_ai.rollout.types import AgentWorkflowConfig\n"
        "from osmosis_ai.rollout.types.sample import RolloutSample\n"
        "from osmosis_ai.rollout.core.base import RolloutAgentLoop\n"
        "from osmosis_ai.rollout.eval.common import DatasetReader\n"
        "print(AgentWorkflowConfig.__name__, RolloutSample.__name__, RolloutAgentLoop.__name__,"
        " DatasetReader.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "AgentWorkflowConfig",
        "RolloutSample",
        "RolloutAgentLoop",
        "DatasetReader",
    ]
