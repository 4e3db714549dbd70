"""A local-rollout repository built in a test's tmp_path (mcp/ split like user repositories), and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

OSMOSIS = str(Path(sys.executable).parent / "osmosis")
REWARD = "reward_fn.compute_reward:numbers_match_reward"

SERVER = """
from fastmcp import FastMCP

mcp = FastMCP("calc")
"""

MATH_TOOLS = '''
import time
from typing import Literal

from pydantic import BaseModel

from server import mcp
from helpers import double


class Item(BaseModel):
    name: str
    qty: int


@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@mcp.tool()
def total(items: list[Item], scale: Literal[1, 10] = 1) -> dict:
    """Sums the quantities."""
    return {"total": sum(i.qty for i in items) * scale, "count": len(items)}


@mcp.tool()
def twice(x: int) -> int:
    """Doubles x."""
    return double(x)


@mcp.tool()
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"tool blew up: {reason}")


@mcp.tool()
def sleepy(seconds: float) -> str:
    """Sleeps."""
    time.sleep(seconds)
    return "awake"
'''

REWARD_FN = '''
from osmosis_ai import osmosis_reward


@osmosis_reward
def numbers_match_reward(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    """1.0 when the answer equals the expected text."""
    return float(solution_str.strip() == ground_truth.strip())
'''


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def make_repo(root: Path, helper_factor: int = 2) -> Path:
    """A local-rollout repository: mcp/ split over main.py, server/, tools/; reward_fn/; test_data.jsonl."""
    write(root / "mcp" / "main.py", "from server import mcp\nfrom tools import *  # noqa: F403\n")
    write(root / "mcp" / "server" / "__init__.py", SERVER)
    write(root / "mcp" / "tools" / "__init__.py", "from .math_tools import *  # noqa: F403\n")
    write(root / "mcp" / "tools" / "math_tools.py", MATH_TOOLS)
    write(root / "mcp" / "helpers.py", f"def double(x):\n    return x * {helper_factor}\n")
    write(root / "reward_fn" / "__init__.py", "")
    write(root / "reward_fn" / "compute_reward.py", REWARD_FN)
    return root


def write_rows(path: Path, prompts: list[tuple[str, str]]) -> Path:
    with path.open("w") as out:
        for prompt, truth in prompts:
            row = {"system_prompt": "Use the tools.", "user_prompt": prompt, "ground_truth": truth}
            out.write(json.dumps(row) + "\n")
    return path


def osmosis(
    *args: str, cwd: Path, env_extra: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs the real CLI in a subprocess without the caller's API keys or base URLs."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}
    env.update(env_extra or {})
    return subprocess.run(
        [OSMOSIS, *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=180, env=env
    )
