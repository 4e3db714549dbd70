"""MCP tool folders (`--mcp DIR`): loading in isolation, schemas, the built-in agent loop, end to end CLI runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_repo import REWARD, make_repo, osmosis, write, write_rows
from osmosis_ai.errors import MCPLoadError, OsmosisError
from osmosis_ai.rollout.mcp import load_mcp_agent

# --- loading --------------------------------------------------------------------------------------------


def test_a_split_fastmcp_folder_loads_with_full_schemas_and_leaves_nothing_behind(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    path_before, modules_before = list(sys.path), set(sys.modules)
    agent = load_mcp_agent(repo / "mcp")
    assert agent.tool_names == ["add", "total", "twice", "explode", "sleepy"]
    assert sys.path == path_before
    leaked = {
        n for n in set(sys.modules) - modules_before if n.split(".")[0] in ("server", "tools", "helpers")
    }
    assert leaked == set()
    tools = {t["function"]["name"]: t["function"] for t in agent.get_tools(None)}  # type: ignore[arg-type]
    assert tools["add"]["description"] == "Adds two integers."
    assert tools["add"]["parameters"]["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}
    total = tools["total"]["parameters"]
    items = total["properties"]["items"]
    assert items["type"] == "array"
    assert items["items"]["type"] == "object"  # nested object kept (and any $ref inlined)
    assert items["items"]["properties"]["qty"] == {"type": "integer"}
    assert total["properties"]["scale"]["enum"] == [1, 10]  # integer enum kept
    assert "$ref" not in json.dumps(total)
    assert total["required"] == ["items"]


def test_refs_are_inlined_but_a_recursive_schema_is_passed_on_whole() -> None:
    from osmosis_ai.rollout.mcp import MCPTool, to_function_tool

    node = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
    recursive = {"type": "object", "$defs": {"Node": node}, "properties": {"root": {"$ref": "#/$defs/Node"}}}
    params = to_function_tool(MCPTool("tree", "", recursive))["function"]["parameters"]
    assert params == recursive
    flat = {"$defs": {"P": {"type": "integer", "enum": [1, 2]}}, "properties": {"p": {"$ref": "#/$defs/P"}}}
    tool = to_function_tool(MCPTool("pick", "", flat))["function"]
    assert tool["description"] == "Tool: pick"
    assert tool["parameters"] == {"type": "object", "properties": {"p": {"type": "integer", "enum": [1, 2]}}}


def test_two_folders_with_same_named_helpers_do_not_shadow_each_other(tmp_path: Path) -> None:
    import asyncio

    first = load_mcp_agent(make_repo(tmp_path / "one", helper_factor=2) / "mcp")
    second = load_mcp_agent(make_repo(tmp_path / "two", helper_factor=3) / "mcp")
    assert asyncio.run(first.host.call("twice", {"x": 5}, 10)) == 10
    assert asyncio.run(second.host.call("twice", {"x": 5}, 10)) == 15


def test_official_sdk_server_with_relative_imports_loads(tmp_path: Path) -> None:
    import asyncio

    folder = tmp_path / "sdk"
    write(folder / "main.py", "from .app import server\n")
    write(
        folder / "app.py",
        """
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("sdk")

        @server.tool()
        def shout(text: str) -> str:
            \"\"\"Upper-cases text.\"\"\"
            return text.upper()
        """,
    )
    agent = load_mcp_agent(folder)
    assert agent.tool_names == ["shout"]
    assert asyncio.run(agent.host.call("shout", {"text": "hi"}, 10)) == "HI"


def test_a_folder_written_for_sdk_1x_fastmcp_loads_unchanged(tmp_path: Path) -> None:
    import asyncio

    folder = tmp_path / "v1"
    write(
        folder / "main.py",
        """
        from mcp.server.fastmcp import Context, FastMCP

        mcp = FastMCP("v1 tools", "Instructions.", host="0.0.0.0", port=9000)

        @mcp.tool()
        def add(a: int, b: int) -> int:
            \"\"\"Adds.\"\"\"
            return a + b
        """,
    )
    agent = load_mcp_agent(folder)
    assert agent.tool_names == ["add"]
    assert asyncio.run(agent.host.call("add", {"a": 2, "b": 5}, 10)) == 7
    with pytest.raises(ImportError):  # mcp 2.x semantics again once the folder is loaded
        __import__("mcp.server.fastmcp")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, "No main.py in MCP tool folder"),
        ({"main.py": "x = 1\n"}, "No MCP server object found in"),
        (
            {"main.py": "from tools import broken\n", "tools/broken.py": "import not_a_module_xyz\n"},
            "Error importing",
        ),
        ({"main.py": "raise SystemExit(3)\n"}, "Error importing"),
    ],
)
def test_broken_folders_raise_an_error_naming_the_file(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    folder = tmp_path / "mcp"
    folder.mkdir()
    for name, text in files.items():
        write(folder / name, text)
    with pytest.raises(MCPLoadError) as info:
        load_mcp_agent(folder)
    assert isinstance(info.value, OsmosisError)
    assert expected in str(info.value)
    assert str(folder) in str(info.value)


def test_a_fastmcp_folder_without_fastmcp_installed_names_the_extra(tmp_path: Path, monkeypatch) -> None:
    repo = make_repo(tmp_path / "repo")
    monkeypatch.setitem(sys.modules, "fastmcp", None)  # what a missing package looks like to `import`
    with pytest.raises(MCPLoadError) as info:
        load_mcp_agent(repo / "mcp")
    assert str(repo / "mcp" / "main.py") in str(info.value)
    assert "pip install 'osmosis-ai[mcp]'" in str(info.value)


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(MCPLoadError, match="MCP tool folder not found"):
        load_mcp_agent(tmp_path / "nope")


# --- end to end through the CLI ---------------------------------------------------------------------------


def test_osmosis_test_mcp_runs_the_tools_and_feeds_results_back(scripted, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write_rows(repo / "test_data.jsonl", [("q-add: 2+3?", "5")])
    server = scripted(
        {
            "by_prompt": {
                "q-add": [
                    # Two calls in one reply run concurrently; their results keep the calls' order.
                    {
                        "tool_calls": [
                            {"name": "add", "arguments": {"a": 2, "b": 3}},
                            {"name": "total", "arguments": {"items": [{"name": "x", "qty": 4}], "scale": 10}},
                        ]
                    },
                    {"content": "5"},
                ]
            }
        }
    )
    result = osmosis(
        "test", "--mcp", "./mcp", "-d", "test_data.jsonl", "--model", "scripted", "--base-url", server.base_url,
        "-o", str(tmp_path / "out.json"),
        cwd=repo,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Loading MCP tools: ./mcp" in result.stdout
    assert "Discovered 5 tool(s): add, total, twice, explode, sleepy" in result.stdout
    first, second = server.requests()
    assert [t["function"]["name"] for t in first["tools"]] == ["add", "total", "twice", "explode", "sleepy"]
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_messages] == [
        ("call_0", "5"),
        ("call_1", '{"total": 40, "count": 1}'),
    ]
    out = json.loads((tmp_path / "out.json").read_text())
    run = out["results"][0]
    assert run["success"] and run["finish_reason"] == "stop"
    assert [(c["name"], c["arguments"], c["result"], c["error"]) for c in run["tool_calls"]] == [
        ("add", {"a": 2, "b": 3}, "5", None),
        ("total", {"items": [{"name": "x", "qty": 4}], "scale": 10}, '{"total": 40, "count": 1}', None),
    ]
    assert all(c["duration_ms"] >= 0 for c in run["tool_calls"])
    # When each call began, from the run's start: the two ran side by side, the first started first.
    began = [c["started_ms"] for c in run["tool_calls"]]
    assert all(isinstance(b, float) and b >= 0 for b in began) and began[0] <= began[1]
    assert began[1] < began[0] + run["tool_calls"][0]["duration_ms"]


def test_osmosis_test_mcp_interactive_shows_the_tool_results(scripted, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write_rows(repo / "test_data.jsonl", [("q-add: 2+3?", "5")])
    server = scripted(
        {
            "by_prompt": {
                "q-add": [{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, {"content": "5"}]
            }
        }
    )
    result = osmosis(
        "test", "--mcp", "./mcp", "-d", "test_data.jsonl", "--interactive", "--model", "scripted",
        "--base-url", server.base_url,
        cwd=repo, stdin="0\nc\n\nq\n",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "- add: Adds two integers. (a, b)" in result.stdout
    assert "Tool (call_0)\n  5" in result.stdout
    assert "Status: COMPLETED" in result.stdout


def test_osmosis_eval_mcp_scores_runs_and_logs_every_tool_call_including_failures(
    scripted, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    write_rows(
        repo / "test_data.jsonl",
        [("q-ok: 20+22?", "42"), ("q-bad: break things", "ok"), ("q-loop: forever", "never")],
    )
    failing_calls = [
        {"name": "explode", "arguments": {"reason": "on purpose"}},
        {"name": "sleepy", "arguments": {"seconds": 30}},
        {"name": "add", "arguments": {"a": "not a number"}},
        {"name": "no_such_tool", "arguments": {}},
        {"name": "add", "arguments": "not an object"},
    ]
    server = scripted(
        {
            "by_prompt": {
                "q-ok": [
                    {"tool_calls": [{"name": "add", "arguments": {"a": 20, "b": 22}}]},
                    {"content": "42"},
                ],
                "q-bad": [{"tool_calls": failing_calls}, {"content": "ok"}],
                "q-loop": [{"tool_calls": [{"name": "twice", "arguments": {"x": 1}}]}],
            }
        }
    )
    log = tmp_path / "log.jsonl"
    result = osmosis(
        "eval", "--mcp", "./mcp", "-d", "test_data.jsonl", "--eval-fn", REWARD, "--model", "scripted",
        "--base-url", server.base_url, "--no-preflight", "--max-turns", "3", "--log", str(log),
        "-o", str(tmp_path / "out.json"),
        cwd=repo, env_extra={"OSMOSIS_MCP_TOOL_TIMEOUT": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    runs = {r["row_index"]: r for r in map(json.loads, log.read_text().splitlines()) if "row_index" in r}
    assert runs[0]["success"] and runs[0]["scores"][REWARD] == 1.0
    assert runs[0]["tool_calls"][0]["name"] == "add" and runs[0]["tool_calls"][0]["result"] == "42"

    bad = runs[1]
    assert bad["success"] and bad["scores"][REWARD] == 1.0  # tool errors went back to the model, no crash
    errors = [c["error"] for c in bad["tool_calls"]]
    assert [c["name"] for c in bad["tool_calls"]] == ["explode", "sleepy", "add", "no_such_tool", "add"]
    assert all(c["result"] is None for c in bad["tool_calls"])
    assert "tool blew up: on purpose" in errors[0]
    assert "timed out after 1s" in errors[1]
    assert "a" in errors[2] and "integer" in errors[2].lower()
    assert "unknown tool 'no_such_tool'" in errors[3] and "Available: add, total" in errors[3]
    assert "Expected dict from JSON tool arguments" in errors[4]
    bad_request = next(
        r for r in server.requests() if any(m.get("tool_call_id") == "call_4" for m in r["messages"])
    )
    tool_replies = [m["content"] for m in bad_request["messages"] if m["role"] == "tool"]
    assert len(tool_replies) == 5 and all(text.startswith("Error: ") for text in tool_replies)

    looping = runs[2]
    assert looping["finish_reason"] == "max_turns"
    assert [c["result"] for c in looping["tool_calls"]] == ["2", "2", "2"]


def test_the_tool_timeout_flag_overrides_the_environment_and_needs_mcp(scripted, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write_rows(repo / "test_data.jsonl", [("q-slow", "1")])
    server = scripted(
        {
            "by_prompt": {
                "q-slow": [
                    {"tool_calls": [{"name": "sleepy", "arguments": {"seconds": 30}}]},
                    {"content": "1"},
                ]
            }
        }
    )
    log = tmp_path / "log.jsonl"
    result = osmosis(
        "eval", "--mcp", "./mcp", "--mcp-tool-timeout", "0.5", "-d", "test_data.jsonl", "--eval-fn", REWARD,
        "--model", "scripted", "--base-url", server.base_url, "--no-preflight", "--log", str(log),
        cwd=repo, env_extra={"OSMOSIS_MCP_TOOL_TIMEOUT": "30"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    run = next(r for r in map(json.loads, log.read_text().splitlines()) if "row_index" in r)
    assert run["tool_calls"][0]["error"].endswith("timed out after 0.5s")

    for flags in (["-m", "reward_fn.compute_reward:numbers_match_reward"], ["--mcp", "./mcp"]):
        value = "5" if "-m" in flags else "0"
        result = osmosis(
            "test", *flags, "--mcp-tool-timeout", value, "-d", "test_data.jsonl", "--model", "m",
            "--base-url", "http://127.0.0.1:9", cwd=repo,
        )  # fmt: skip
        assert result.returncode != 0 and "Traceback" not in result.stderr
        expected = "use it with --mcp" if "-m" in flags else "--mcp-tool-timeout must be > 0"
        assert expected in result.stderr, result.stderr


def test_cli_load_errors_are_one_line_errors_without_a_traceback(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "mcp" / "tools" / "math_tools.py", "import definitely_missing_module\n")
    write_rows(repo / "test_data.jsonl", [("q", "1")])
    result = osmosis(
        "test", "--mcp", "./mcp", "-d", "test_data.jsonl", "--model", "m", "--base-url", "http://127.0.0.1:9",
        cwd=repo,
    )  # fmt: skip
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "Error: Error importing" in result.stderr and "main.py" in result.stderr
    assert "definitely_missing_module" in result.stderr
