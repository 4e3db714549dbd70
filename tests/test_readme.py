"""The README is true: every fenced block it marks runnable (```bash runnable) is executed here.

Each block runs in ``bash -euo pipefail`` from a scratch folder holding a copy of ``examples/`` (so a block
that writes files never touches the checkout), with this virtualenv's ``osmosis`` first on PATH, HOME and
the caches in the scratch folder, no API keys, and the embedded local model (the ``local_model`` fixture)
standing in at the address the README gives for it, ``http://127.0.0.1:8080/v1``. A block passes when it
exits 0.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The address the README tells readers to start the local model on (`--port 8080`).
README_MODEL_ADDRESS = "127.0.0.1:8080"
_FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def runnable_blocks(text: str) -> list[tuple[int, str]]:
    """``(line, body)`` of every fenced block whose info string is ``<shell> runnable``."""
    blocks = []
    for match in _FENCE.finditer(text):
        words = match.group("info").split()
        if len(words) >= 2 and words[0] in ("bash", "sh", "shell") and "runnable" in words[1:]:
            blocks.append((text.count("\n", 0, match.start()) + 1, match.group("body")))
    return blocks


BLOCKS = runnable_blocks(README.read_text(encoding="utf-8"))


def test_the_parser_finds_only_marked_blocks() -> None:
    text = "x\n```bash runnable\necho one\n```\n```bash\necho two\n```\n```python runnable\nprint(3)\n```\n"
    assert runnable_blocks(text) == [(2, "echo one\n")]


def test_the_readme_has_runnable_blocks_for_its_main_paths() -> None:
    bodies = "\n".join(body for _, body in BLOCKS)
    for command in (
        "osmosis eval ",
        "osmosis test ",
        "osmosis check",
        "osmosis config validate",
        "osmosis preview",
    ):
        assert command in bodies, f"no runnable README block runs `{command.strip()}`"


@pytest.mark.parametrize(("line", "body"), BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_runnable_block(line: int, body: str, local_model: Any, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    address = local_model.base_url.split("://", 1)[1].split("/", 1)[0]
    script = body.replace(README_MODEL_ADDRESS, address)
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(tmp_path / "home"),
        OSMOSIS_LOG_DIR=str(tmp_path / "logs"),
        OSMOSIS_EVAL_RESULT_DIR=str(tmp_path / "results"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    completed = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, (
        f"README.md:{line} exited {completed.returncode}\n--- stdout\n{completed.stdout}\n"
        f"--- stderr\n{completed.stderr}"
    )


def repeated_lines(text: str) -> list[str]:
    """Headings and long prose lines (outside code blocks and tables) that occur more than once."""
    in_code = False
    seen: list[str] = []
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and (line.startswith("#") or (len(line) > 80 and not line.startswith("|"))):
            seen.append(line)
    return sorted({line for line in seen if seen.count(line) > 1})


def test_the_readme_says_nothing_twice() -> None:
    """A figure or claim stated twice drifts apart; a merge that duplicates a section is caught here."""
    assert repeated_lines(README.read_text()) == []
    assert repeated_lines("## A\nsome text\n## A\n") == ["## A"]
