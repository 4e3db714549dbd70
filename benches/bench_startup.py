"""Process start-up: `osmosis --help`, `--version` and `import osmosis_ai` against a bare `python -c pass`.

CPU (user + system, ``wait4``) of each process, in interleaved rounds; the figure is each command's
fastest round (load only ever adds). The processes run with a bytecode cache, as a user's installed
package has one: ``PYTHONDONTWRITEBYTECODE`` (set on some machines) would make every run compile click
and our modules from source, which is a cost of that setting, not of the command.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tempfile

from benchutil import NOTES, scaled

PYTHON = sys.executable
OSMOSIS = str(pathlib.Path(PYTHON).parent / "osmosis")
COMMANDS = {
    "python -c pass": [PYTHON, "-c", "pass"],
    "osmosis --help": [OSMOSIS, "--help"],
    "osmosis --version": [OSMOSIS, "--version"],
    "import osmosis_ai": [PYTHON, "-c", "import osmosis_ai"],
}


def _cpu_ms(argv: list[str], env: dict[str, str]) -> float:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, argv
    return 1000 * (usage.ru_utime + usage.ru_stime)


def test_startup_cpu(benchmark) -> None:
    with tempfile.TemporaryDirectory(prefix="osmosis-bench-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        for argv in COMMANDS.values():
            _cpu_ms(argv, env)  # writes the bytecode cache
        samples: dict[str, list[float]] = {name: [] for name in COMMANDS}

        def rounds() -> None:
            for _ in range(scaled(30, 10)):
                for name, argv in COMMANDS.items():
                    samples[name].append(_cpu_ms(argv, env))

        benchmark.group = "start-up CPU"
        benchmark.pedantic(rounds, rounds=1, iterations=1)
    fastest = {name: min(values) for name, values in samples.items()}
    benchmark.extra_info.update({f"{name} CPU-ms": ms for name, ms in fastest.items()})
    base = fastest["python -c pass"]
    NOTES.append(
        "start-up CPU (fastest round): "
        + "; ".join(f"{name} {ms:.1f} ms ({ms / base:.2f}x)" for name, ms in fastest.items())
    )
