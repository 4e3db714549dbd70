"""`osmosis compare A B` where one side scored nothing (every run errored): nothing scored is null, never 0.

Both logs are written by `osmosis eval` against a scripted model server: A by the shipped math agent, B by an
agent that raises on every row. Before, every surface showed B as 0.0000 and the differences as -A (the text
table, `--json` and the page), the flips counted B's errored first runs as failures (McNemar p on them), and
the changed rows listed "0.50 -> 0.00". Now B's values and every difference are null / n/a with the reason
named, McNemar has no rows to test (null), and no verdict claims a change.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_eval_cli import EXAMPLES, eval_args, osmosis, write_rows
from tests.results.test_compare_page_surfaces import _READ_PAGE

BROKEN_AGENT = """
from osmosis_ai.rollout import RolloutAgentLoop

class Broken(RolloutAgentLoop):
    name = "broken"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        raise RuntimeError("the agent broke on purpose")

agent = Broken()
"""

REASON = "has no scored run on the 3 matched rows (every run errored or recorded no score): no difference"


@pytest.fixture
def logs(scripted: Any, tmp_path: Path) -> tuple[Path, Path]:
    """A: the math agent, 2 runs per row (row alpha passes once, beta never, gamma twice); B: every run errored."""
    dataset = write_rows(
        tmp_path / "data.jsonl", [("q-alpha: 1+1?", "2"), ("q-beta: 2+2?", "4"), ("q-gamma: 3+3?", "6")]
    )
    server = scripted(
        {
            "by_prompt": {
                "q-alpha": [{"content": "2"}, {"content": "5"}],
                "q-beta": [{"content": "no idea"}],
                "q-gamma": [{"content": "6"}],
            }
        }
    )
    folders = {side: tmp_path / side for side in ("a", "b")}
    for folder in folders.values():
        folder.mkdir()
    scored = osmosis(*eval_args(server, dataset, folders["a"], "--n", "2", "--no-preflight"))
    assert scored.returncode == 0, scored.stderr
    (tmp_path / "broken_agent.py").write_text(BROKEN_AGENT)
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    broken = osmosis(
        *eval_args(server, dataset, folders["b"], "--n", "2", "--no-preflight", agent="broken_agent:agent"),
        cwd=tmp_path,
    )
    assert broken.returncode == 1 and "no run was scored (6 errored" in broken.stderr, broken.stderr
    return folders["a"] / "log.jsonl", folders["b"] / "log.jsonl"


@pytest.mark.parametrize("unscored", ["B", "A"])
def test_a_side_with_nothing_scored_is_null_on_every_compare_surface(
    logs: tuple[Path, Path], unscored: str, tmp_path: Path, browser: Any
) -> None:
    scored_log, broken_log = logs
    a, b = (scored_log, broken_log) if unscored == "B" else (broken_log, scored_log)
    side, other = unscored.lower(), "a" if unscored == "B" else "b"
    page = tmp_path / "compare.html"
    result = osmosis("compare", str(a), str(b), "-o", str(page), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)["data"]
    reason = f"{unscored} {REASON}"
    assert list(data["differences"]) == ["mean", "pass_at_1", "pass_hat_1", "pass_at_2", "pass_hat_2"]
    for name, d in data["differences"].items():
        # Before: B 0.0, the estimate -A's value, as if B had scored 0 on every run.
        assert (d[side], d["estimate"], d["low"], d["high"], d["p_value"]) == (
            None,
            None,
            None,
            None,
            None,
        ), name
        assert d[other] is not None and d["note"] == reason and d["verdict"] == "no_clear_difference"
    assert data[f"{side}_values"] == dict.fromkeys(data["differences"])
    assert data["a_values" if side == "b" else "b_values"]["pass_at_1"] == pytest.approx(0.5)
    # Before: "A passed/B did not 2" (B's errored first runs as failures) and a McNemar p on them.
    assert data["mcnemar_p"] is None and not any(data["flips"].values())
    assert data["verdict"]["outcome"] == "no_clear_difference" and data["verdict"]["reason"] == reason
    assert data["changed_rows"] == []  # before: "0.50 -> 0.00" rows

    text = osmosis("compare", str(a), str(b))
    assert text.returncode == 0, text.stderr
    table = text.stdout.splitlines()
    row = next(line for line in table if line.startswith("pass@1 ")).split()
    assert row[1:4] == (["0.5000", "n/a", "n/a"] if side == "b" else ["n/a", "0.5000", "n/a"])
    assert "0.0000" not in text.stdout and "-0.5" not in text.stdout
    assert f"n/a: {reason}" in table and f"Verdict: {reason}" in table
    assert "McNemar exact p = n/a" in table

    from tests.page_driver import open_page

    open_page(browser, page)
    shown = browser.evaluate(_READ_PAGE)
    for statistic, cells in shown["differences"]:
        a_cell, b_cell = cells[1:3]
        assert (b_cell if side == "b" else a_cell) == "n/a", statistic
        assert cells[3:5] == ["n/a", reason], statistic
    assert shown["flips"] and "0.0000" not in json.dumps(shown)
