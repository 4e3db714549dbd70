"""`osmosis test`: batch mode and interactive mode, as a user runs them, against a scripted server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.json_text import assert_json_dumps_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
OSMOSIS = str(Path(sys.executable).parent / "osmosis")

CRASHY_AGENT = """
from osmosis_ai.rollout import RolloutAgentLoop

class Crashy(RolloutAgentLoop):
    name = "crashy"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        if "crash" in ctx.request.messages[-1]["content"]:
            raise ValueError("cannot handle this row")
        reply = await ctx.chat(ctx.request.messages)
        return ctx.complete([*ctx.request.messages, reply.message], reward=0.25)

agent = Crashy()
"""


def osmosis(*args: str, cwd: Path = EXAMPLES, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}
    return subprocess.run(
        [OSMOSIS, *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120, env=env
    )


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    rows = [("q-one: 12*(3+4)?", "84"), ("q-two: 1+1?", "2"), ("please crash", "0")]
    path.write_text(
        "".join(
            json.dumps({"system_prompt": "s", "user_prompt": u, "ground_truth": g}) + "\n" for u, g in rows
        )
    )
    return path


def test_batch_mode_reports_each_row_and_writes_results(scripted, dataset, tmp_path) -> None:
    server = scripted(
        {
            "default": {
                "content": "42",
                "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
            }
        }
    )
    (tmp_path / "crashy.py").write_text(CRASHY_AGENT)
    out = tmp_path / "test.json"
    result = osmosis(
        "test", "-m", "crashy:agent", "-d", str(dataset), "--model", "tiny", "--base-url", server.base_url, "-o", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1  # one row failed
    assert "osmosis-rollout-test v" in result.stdout
    assert "[1/3] Row 0: OK" in result.stdout or "Row 0: OK" in result.stdout
    assert "Row 2: FAILED" in result.stdout and "ValueError: cannot handle this row" in result.stdout
    data = assert_json_dumps_text(out)  # the established text: json.dumps(indent=2) of its values
    assert data["summary"]["total"] == 3 and data["summary"]["passed"] == 2 and data["summary"]["failed"] == 1
    assert data["summary"]["total_tokens"] == 20
    first = data["results"][0]
    assert set(first) == {
        "row_index",
        "success",
        "error",
        "duration_ms",
        "token_usage",
        "reward",
        "finish_reason",
    }
    assert first["token_usage"] == {
        "prompt_tokens": 7,
        "completion_tokens": 3,
        "total_tokens": 10,
        "num_llm_calls": 1,
    }
    assert first["reward"] == 0.25 and first["error"] is None
    body = server.requests()[0]
    assert body["model"] == "tiny" and body["messages"][1]["content"] == "q-one: 12*(3+4)?"
    # `osmosis report` on it: a clear refusal naming what the file is, not "0 rows" and an empty page.
    report = osmosis("report", str(out), "-o", str(tmp_path / "page.html"), cwd=tmp_path)
    assert report.returncode == 1 and "0 rows" not in report.stdout, report.stdout
    assert f"{out}: an `osmosis test` results file" in report.stderr and "Traceback" not in report.stderr
    assert not (tmp_path / "page.html").exists()


def test_row_needs_interactive_and_module_or_mcp(dataset) -> None:
    result = osmosis("test", "-m", "math_agent:agent_loop", "-d", str(dataset), "--row", "1")
    assert result.returncode == 2 and "--row can only be used with --interactive mode" in result.stderr
    # --data, the spelling the README keeps, is taken like -d (the same check is reached).
    result = osmosis("test", "-m", "math_agent:agent_loop", "--data", str(dataset), "--row", "1")
    assert result.returncode == 2 and "--row can only be used with --interactive mode" in result.stderr
    neither = osmosis("test", "-d", str(dataset))
    assert neither.returncode == 2 and "Either --module (-m) or --mcp is required." in neither.stderr
    both = osmosis("test", "-m", "a:b", "--mcp", "x", "-d", str(dataset))
    assert both.returncode == 2 and "--module and --mcp are mutually exclusive." in both.stderr


def test_interactive_mode_steps_through_tool_calls(scripted, dataset) -> None:
    server = scripted(
        {
            "by_prompt": {
                "q-one": [
                    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "12*(3+4)"}}]},
                    {"content": "The answer is 84"},
                ]
            }
        }
    )
    # Row 0: step once (Enter), list messages (m), continue (c); inspect the final messages (m); then quit.
    keys = "\n".join(["", "m", "c", "m", "q"]) + "\n"
    result = osmosis(
        "test", "-m", "math_agent:agent_loop", "-d", str(dataset), "--model", "tiny", "--base-url", server.base_url,
        "--interactive", "--row", "0", stdin=keys,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "(Interactive Mode)" in out
    assert "Initial Messages" in out and "Available Tools" in out and "calculator" in out
    assert "Turn 1: LLM Response" in out and "• calculator(" in out
    assert "Tool (call_0)" in out and "84" in out  # the tool's result is shown before the next call
    assert "Status: COMPLETED" in out and "Tokens: 120 (2 LLM calls)" in out
    assert "Interactive session ended." in out


def test_interactive_quit_aborts_the_row_and_bad_rows_are_explained(scripted, dataset) -> None:
    server = scripted({"default": {"content": "1"}})
    keys = "\n".join(["q", "7", "abc", "q"]) + "\n"
    result = osmosis(
        "test", "-m", "math_agent:agent_loop", "-d", str(dataset), "--model", "tiny", "--base-url", server.base_url,
        "-i", "--row", "1", stdin=keys,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Aborted by user" in result.stdout
    assert "Row 7 is out of range. Valid range: 0-2" in result.stdout
    assert "Please enter a row number" in result.stdout
