"""Process start-up: `osmosis --help` and `--version` against a bare `python -c pass`, same run."""

import pathlib
import subprocess
import sys

from benchutil import compare, scaled

PYTHON = sys.executable
OSMOSIS = str(pathlib.Path(PYTHON).parent / "osmosis")


def run(*argv: str) -> None:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def test_startup_baseline(benchmark) -> None:
    compare(benchmark, "startup", "baseline", run, PYTHON, "-c", "pass", rounds=scaled(30, 10))


def test_startup_osmosis_help(benchmark) -> None:
    compare(benchmark, "startup", "osmosis --help", run, OSMOSIS, "--help", rounds=scaled(30, 10))


def test_startup_osmosis_version(benchmark) -> None:
    compare(benchmark, "startup", "osmosis --version", run, OSMOSIS, "--version", rounds=scaled(30, 10))


def test_startup_import_package(benchmark) -> None:
    compare(
        benchmark,
        "startup",
        "import osmosis_ai",
        run,
        PYTHON,
        "-c",
        "import osmosis_ai",
        rounds=scaled(30, 10),
    )
