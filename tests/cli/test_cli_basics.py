"""The `osmosis` entry points: help, version, the no-subcommand behaviour, and the three script names."""

import os
import pathlib
import subprocess
import sys

import pytest
from click.testing import CliRunner

import osmosis_ai
from osmosis_ai.cli.main import cli, main

BIN = pathlib.Path(sys.executable).parent


def test_version_flag() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"osmosis-ai {osmosis_ai.__version__}"


def test_help_lists_commands() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "Usage: osmosis" in result.output
    assert "eval" in result.output


@pytest.mark.parametrize("command", [["eval", "run"], ["eval"], ["rollout"], ["doctor"], ["template"]])
def test_help_texts_are_whole_and_say_what_a_value_is(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "None" not in result.output  # click words a range without bounds "x<=None"
    assert (
        "..." not in result.output.partition("Commands:")[2]
    )  # a subcommand's listing cut at click's 45 characters
    assert " TEXT " not in result.output  # a file, key or URL option says which
    if command == ["rollout"]:  # the group holds `init` as well as the platform's list
        assert "Create a rollout" in result.output


def test_no_subcommand_prints_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert "Usage:" in capsys.readouterr().out


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err


@pytest.mark.parametrize(
    "typo,suggestion", [(["auht"], "auth"), (["evl"], "eval"), (["eval", "rubrc"], "rubric")]
)
def test_a_mistyped_command_gets_a_suggestion(
    capsys: pytest.CaptureFixture[str], typo: list[str], suggestion: str
) -> None:
    assert main(typo) == 2
    assert f"Did you mean '{suggestion}'?" in capsys.readouterr().err
    assert main(["xyzzy"]) == 2
    assert "Did you mean" not in capsys.readouterr().err


@pytest.mark.parametrize("script", ["osmosis", "osmosis-ai", "osmosis_ai"])
def test_console_scripts_are_installed(script: str) -> None:
    completed = subprocess.run(
        [str(BIN / script), "--version"], capture_output=True, text=True, check=False, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"osmosis-ai {osmosis_ai.__version__}"


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys; from osmosis_ai.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = {'litellm', 'polars', 'pyarrow', 'fastapi', 'uvicorn', 'pydantic', 'yaml', 'mcp', 'numpy'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60, env=env
    )
    assert completed.stdout.strip().splitlines()[-1] == "[]"
