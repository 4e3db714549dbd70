"""`osmosis check`: a whole local-rollout repository validated before any spend (real CLI in a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_repo import make_repo, osmosis, write, write_rows

RUBRIC = """
from osmosis_ai import osmosis_rubric


@osmosis_rubric
def judge(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
    return 0.5


@osmosis_rubric
def engagement(state: dict, action: dict, metadata: dict = None) -> float:
    return 0.1
"""

BAD_REWARD = """

@osmosis_reward
def bad_reward(solution_str: int, ground_truth: str, extra_info: dict = None) -> float:
    return 0.0


@osmosis_reward
def worse_reward(solution_str: str) -> float:
    return 0.0


@osmosis_reward
def fine_reward(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    return 1.0
"""


def test_a_complete_repository_passes_with_every_part_listed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "reward_rubric" / "judge.py", RUBRIC)
    write_rows(repo / "test_data.jsonl", [("a", "1"), ("b", "2")])
    result = osmosis("check", ".", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "OK   5 tool(s): add, total, twice, explode, sleepy" in out
    assert "OK   reward_fn.compute_reward:numbers_match_reward (reward contract)" in out
    assert "OK   reward_rubric.judge:judge (rubric contract)" in out
    # 0.2.17 accepts any signature not starting with solution_str; check says it left it unchecked.
    assert "OK   reward_rubric.judge:engagement (custom signature, not checked)" in out
    assert "OK   2 row(s)" in out
    assert "All checks passed" in out


def test_every_broken_part_is_reported_and_the_exit_code_is_1(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "mcp" / "main.py").unlink()
    with (repo / "reward_fn" / "compute_reward.py").open("a") as out:
        out.write(BAD_REWARD)
    write_rows(repo / "test_data.jsonl", [("a", "1")])
    with (repo / "test_data.jsonl").open("a") as out:
        out.write(json.dumps({"user_prompt": "no truth"}) + "\n")
    result = osmosis("check", str(repo), cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    out = result.stdout
    assert f"FAIL No main.py in MCP tool folder {repo / 'mcp'}" in out
    # Every broken function of the module is listed, and the good ones after them still are.
    assert "compute_reward.py: SignatureError: Function 'bad_reward'" in out
    assert "compute_reward.py: SignatureError: Function 'worse_reward'" in out
    assert "OK   reward_fn.compute_reward:fine_reward (reward contract)" in out
    assert "reward_rubric" in out and "not found" in out  # optional: listed, not failed
    assert "test_data.jsonl, line 2" in out
    assert "Error: 4 check(s) failed" in result.stderr


REMOTE_SERVER = """
from osmosis_ai.rollout import RolloutAgentLoop

raise SystemExit("a server module is read, never imported by check")


class Calculator(RolloutAgentLoop):
    name = "calculator"


agent_loop = Calculator()
"""


def test_a_remote_rollout_repository_is_pointed_to_validate(tmp_path: Path) -> None:
    # Finding 17: check said only "mcp not found" / "reward_fn not found" on a remote-rollout repository.
    repo = tmp_path / "remote"
    write(repo / "server.py", REMOTE_SERVER)
    write_rows(repo / "test_data.jsonl", [("a", "1")])
    result = osmosis("check", ".", cwd=repo)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        "HINT server:agent_loop is a RolloutAgentLoop: check it with `osmosis validate -m server:agent_loop`"
        in (result.stdout)
    )
    (repo / "server.py").unlink()
    result = osmosis("check", ".", cwd=repo)
    assert (
        "HINT a remote-rollout repository is checked with `osmosis validate -m module:agent_loop`"
        in result.stdout
    )
