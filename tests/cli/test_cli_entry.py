"""The console script's own answers (`osmosis`, `--help`, `-h`, `--version`): click's text, without click."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from osmosis_ai.cli.entry import root_help
from osmosis_ai.cli.main import cli

OSMOSIS = str(Path(sys.executable).parent / "osmosis")


def _click_help(width: int) -> str:
    with cli.make_context("osmosis", [], terminal_width=width, resilient_parsing=True) as ctx:
        return cli.get_help(ctx)


@pytest.mark.parametrize("width", range(50, 201, 3))
def test_the_root_help_is_clicks_at_every_width(width: int) -> None:
    assert root_help(width) == _click_help(width)


def test_a_bare_context_asking_first_leaves_the_root_help_alone() -> None:
    # click keeps the first help option it builds on a command; a bare context would make it `--help` alone.
    cli._help_option = None
    assert "-h, --help" in cli.get_help(click.Context(cli))
    assert root_help(80) == _click_help(80)


def _run(argv: list[str], columns: int, module: bool) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "osmosis_ai.cli.main", *argv] if module else [OSMOSIS, *argv]
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env, timeout=120)


@pytest.mark.parametrize(
    ("argv", "columns"), [([], 72), (["--help"], 120), (["-h"], 55), (["--version"], 80)]
)
def test_the_script_prints_what_the_click_group_prints(argv: list[str], columns: int) -> None:
    fast, full = _run(argv, columns, module=False), _run(argv, columns, module=True)
    assert (fast.returncode, fast.stdout, fast.stderr) == (full.returncode, full.stdout, full.stderr)
    assert fast.returncode == 0 and fast.stdout


def test_help_imports_neither_click_nor_a_command() -> None:
    code = (
        "import sys; from osmosis_ai.cli.entry import main; main(['--help'])\n"
        "print(sorted(m for m in sys.modules if m == 'click' or m.startswith(('click.', 'osmosis_ai.cli.'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip().splitlines()[-1] == "['osmosis_ai.cli.commands', 'osmosis_ai.cli.entry']"


def test_importing_the_package_loads_no_heavy_stdlib_module() -> None:
    # `typing` alone (imported by errors.py for TYPE_CHECKING) doubled `import osmosis_ai` in bench-ci.
    code = (
        "import sys; before = set(sys.modules); import osmosis_ai\nprint(sorted(set(sys.modules) - before))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = ast.literal_eval(done.stdout)
    heavy = {"typing", "re", "enum", "dataclasses", "json", "inspect", "functools", "collections"}
    assert heavy.isdisjoint(loaded), sorted(heavy.intersection(loaded))


def test_anything_else_runs_the_click_group(capsys: pytest.CaptureFixture[str]) -> None:
    from osmosis_ai.cli.entry import main

    assert main(["--help", "--json"]) == 0
    assert "Usage: osmosis" in capsys.readouterr().out
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err
