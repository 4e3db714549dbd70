"""The names users call: the established signatures (section B of the sheet) and the known breaks, fixed."""

from __future__ import annotations

import asyncio
import inspect
import textwrap
from pathlib import Path
from typing import Any

import pytest


def params(func: Any) -> list[str]:
    return list(inspect.signature(func).parameters)


# --- rollout contract ---------------------------------------------------------------------------------------


def _calculator_agent() -> Any:
    from osmosis_ai.rollout import (
        OpenAIFunctionParametersSchema,
        OpenAIFunctionPropertySchema,
        OpenAIFunctionSchema,
        OpenAIFunctionToolSchema,
        RolloutAgentLoop,
    )

    tool = OpenAIFunctionToolSchema(
        type="function",
        function=OpenAIFunctionSchema(
            name="add",
            description="Adds two numbers",
            parameters=OpenAIFunctionParametersSchema(
                type="object",
                properties={
                    "a": OpenAIFunctionPropertySchema(type="number", description="first"),
                    "b": OpenAIFunctionPropertySchema(type="number"),
                },
                required=["a", "b"],
            ),
        ),
    )

    class Calculator(RolloutAgentLoop):
        name = "compat_calculator"

        def get_tools(self, request):
            return [tool] if request.metadata.get("_validation") else []

        async def run(self, ctx):
            return ctx.complete(list(ctx.request.messages))

    return Calculator()


def test_get_default_tools_asks_get_tools_with_a_placeholder_request() -> None:
    agent = _calculator_agent()
    tools = agent.get_default_tools()
    assert [t.function.name for t in tools] == ["add"]


def test_register_agent_loop_takes_loop() -> None:
    from osmosis_ai.rollout import (
        get_agent_loop,
        list_agent_loops,
        register_agent_loop,
        unregister_agent_loop,
    )

    assert params(register_agent_loop) == ["loop"]
    agent = _calculator_agent()
    register_agent_loop(loop=agent)
    try:
        assert get_agent_loop("compat_calculator") is agent
        assert "compat_calculator" in list_agent_loops()
    finally:
        assert unregister_agent_loop("compat_calculator")


def test_parse_tool_calls_takes_assistant_message() -> None:
    from osmosis_ai.rollout import parse_tool_calls

    assert params(parse_tool_calls) == ["assistant_message"]
    call = {"id": "1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    assert parse_tool_calls(assistant_message={"role": "assistant", "tool_calls": [call]}) == [call]


def test_rollout_dataclasses_have_the_established_fields() -> None:
    from dataclasses import fields

    from osmosis_ai.rollout import CompletionsResult, RolloutContext, RolloutMetrics, RolloutResult

    assert [f.name for f in fields(RolloutResult)] == [
        "status", "final_messages", "finish_reason", "error_message", "metrics", "reward",
    ]  # fmt: skip
    assert [f.name for f in fields(RolloutContext)][:7] == [
        "request", "tools", "llm", "_start_time", "_tool_latency_ms", "_num_tool_calls", "_debug_dir",
    ]  # fmt: skip
    assert [f.name for f in fields(CompletionsResult)] == [
        "message", "token_ids", "logprobs", "usage", "finish_reason",
    ]  # fmt: skip
    assert set(RolloutMetrics.model_fields) >= {
        "total_latency_ms", "llm_latency_ms", "tool_latency_ms", "num_llm_calls", "num_tool_calls",
        "prompt_tokens", "response_tokens", "max_context_tokens",
    }  # fmt: skip


def test_server_and_validation_signatures_accept_the_established_keywords() -> None:
    from osmosis_ai.rollout import create_app, serve_agent_loop, validate_agent_loop

    assert params(create_app)[:11] == [
        "agent_loop", "max_concurrent", "record_ttl_seconds", "settings", "credentials", "server_host",
        "server_port", "api_key", "debug_dir", "on_startup", "on_shutdown",
    ]  # fmt: skip
    assert set(params(serve_agent_loop)) >= {
        "agent_loop", "host", "port", "validate", "log_level", "reload", "settings", "skip_register",
        "api_key", "local_debug", "debug_dir",
    }  # fmt: skip
    assert params(validate_agent_loop) == ["agent_loop", "request"]
    result = validate_agent_loop(_calculator_agent())
    assert result.valid and result.tool_count == 1


def test_exceptions_take_the_established_arguments() -> None:
    from osmosis_ai import ModelNotFoundError, ProviderRequestError
    from osmosis_ai.rollout import (
        AgentLoopNotFoundError,
        AgentLoopValidationError,
        OsmosisServerError,
        ToolArgumentError,
        ToolExecutionError,
    )

    assert OsmosisServerError("bad", 502).status_code == 502
    error = ToolArgumentError("bad args", "call_1", "add")
    assert isinstance(error, ToolExecutionError) and (error.tool_call_id, error.tool_name) == (
        "call_1",
        "add",
    )
    assert "other" in str(AgentLoopNotFoundError("missing", ["other"]))
    assert AgentLoopValidationError("invalid", ["e1"]).errors == ["e1"]
    assert isinstance(ModelNotFoundError("openai", "m", "no such model"), ProviderRequestError)


# --- client, settings, testing helpers -----------------------------------------------------------------------


def test_llm_client_accepts_client_settings() -> None:
    from osmosis_ai.rollout import OsmosisLLMClient
    from osmosis_ai.rollout.config import RolloutClientSettings

    assert params(OsmosisLLMClient)[:7] == [
        "server_url", "rollout_id", "api_key", "timeout_seconds", "max_retries", "complete_rollout_retries",
        "settings",
    ]  # fmt: skip
    client = OsmosisLLMClient(
        "http://127.0.0.1:9", "r1", settings=RolloutClientSettings(max_retries=5, complete_rollout_retries=0)
    )
    assert (client.max_retries, client.complete_rollout_retries) == (5, 0)
    asyncio.run(client.close())


def test_settings_ignore_unknown_keys_and_read_dotenv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from osmosis_ai.rollout.config import RolloutClientSettings, RolloutServerSettings, RolloutSettings

    for name in ("OSMOSIS_ROLLOUT_CLIENT_MAX_RETRIES", "OSMOSIS_ROLLOUT_CLIENT_TIMEOUT_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        "OSMOSIS_ROLLOUT_CLIENT_MAX_RETRIES=7\nOSMOSIS_ROLLOUT_CLIENT_TIMEOUT_SECONDS=42\n"
    )
    settings = RolloutClientSettings(some_future_option=True)
    assert (settings.max_retries, settings.timeout_seconds) == (7, 42.0)
    assert not hasattr(settings, "some_future_option")
    assert RolloutSettings().client.max_retries == 7  # nested sections read the same file
    monkeypatch.setenv("OSMOSIS_ROLLOUT_CLIENT_MAX_RETRIES", "2")  # the environment wins over the file
    assert RolloutClientSettings().max_retries == 2
    assert RolloutClientSettings(max_retries=1).max_retries == 1  # code wins over both
    assert RolloutClientSettings(_env_file=None).timeout_seconds == 300.0
    other = tmp_path / "prod.env"
    other.write_text("OSMOSIS_ROLLOUT_SERVER_MAX_CONCURRENT_ROLLOUTS=3\n")
    assert RolloutServerSettings(_env_file=str(other)).max_concurrent_rollouts == 3


def test_completion_tracker_has_event_responses_and_wait() -> None:
    import threading

    from osmosis_ai.rollout.testing import RolloutCompletionTracker

    tracker = RolloutCompletionTracker()
    assert isinstance(tracker.event, threading.Event) and tracker.responses == []
    assert tracker.wait(timeout=0.01) is False
    threading.Timer(0.05, tracker.record, args=({"rollout_id": "r1", "status": "COMPLETED"},)).start()
    assert tracker.wait(timeout=5.0) is True
    assert tracker.responses == [{"rollout_id": "r1", "status": "COMPLETED"}]
    tracker.clear()
    assert tracker.responses == [] and not tracker.event.is_set()
    shared: list[dict[str, Any]] = []
    RolloutCompletionTracker(threading.Event(), shared).record({"rollout_id": "r2"})
    assert shared == [{"rollout_id": "r2"}]


def test_mcp_agent_loop_takes_a_loaded_server(tmp_path: Path) -> None:
    pytest.importorskip("fastmcp")
    from osmosis_ai.rollout.mcp import MCPAgentLoop, load_mcp_server

    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "main.py").write_text(
        textwrap.dedent(
            '''
            from fastmcp import FastMCP

            mcp = FastMCP("compat")

            @mcp.tool()
            def add(a: int, b: int) -> int:
                """Adds two integers."""
                return a + b
            '''
        )
    )
    server = load_mcp_server(str(tmp_path / "mcp"))
    agent = MCPAgentLoop(server, "compat_mcp")
    assert agent.name == "compat_mcp" and agent.tool_names == ["add"]
    assert asyncio.run(agent.host.call("add", {"a": 2, "b": 3}, 10.0)) == 5
    assert MCPAgentLoop(server).name == "mcp_agent"


def test_dataset_reader_reads_a_window(tmp_path: Path) -> None:
    from osmosis_ai.rollout.eval.common import DatasetReader

    data = tmp_path / "rows.jsonl"
    data.write_text(
        "".join(f'{{"system_prompt": "s", "user_prompt": "q{i}", "ground_truth": "{i}"}}\n' for i in range(5))
    )
    reader = DatasetReader(str(data))
    assert len(reader) == 5
    assert [row["user_prompt"] for row in reader.read(limit=2, offset=1)] == ["q1", "q2"]


def test_cli_error_takes_the_0_3_keywords() -> None:
    from osmosis_ai.cli.errors import CLIError

    error = CLIError("no such run", code="NOT_FOUND", details={"name": "x"}, request_id="req-1")
    assert (str(error), error.code, error.details, error.request_id) == (
        "no such run", "NOT_FOUND", {"name": "x"}, "req-1",
    )  # fmt: skip
    assert CLIError().code == "VALIDATION" and str(CLIError("plain")) == "plain"


def test_remaining_section_b_signatures() -> None:
    from osmosis_ai import osmosis_reward, osmosis_rubric
    from osmosis_ai.rollout import (
        OsmosisLLMClient,
        ValidationResult,
        create_tool_error_result,
        create_tool_result,
        execute_tool_calls,
        get_tool_call_info,
    )
    from osmosis_ai.rollout.testing import create_mock_trainer_app, patch_httpx_for_mock_trainer

    assert params(OsmosisLLMClient.chat_completions)[:7] == [
        "self", "messages", "temperature", "top_p", "max_tokens", "stop", "logprobs",
    ]  # fmt: skip
    assert params(OsmosisLLMClient.complete_rollout)[:7] == [
        "self", "status", "final_messages", "finish_reason", "error_message", "metrics", "reward",
    ]  # fmt: skip
    assert params(ValidationResult)[:5] == ["valid", "errors", "warnings", "agent_name", "tool_count"]
    assert callable(ValidationResult(valid=True).raise_if_invalid)
    assert params(create_mock_trainer_app) == ["tracker", "tool_call_generator"]
    assert params(patch_httpx_for_mock_trainer) == ["client", "monkeypatch"]
    assert params(create_tool_result) == ["tool_call_id", "content"]
    assert params(create_tool_error_result) == ["tool_call_id", "error_message"]
    assert params(execute_tool_calls) == ["tool_calls", "executor"]
    assert get_tool_call_info({"id": "c1", "function": {"name": "add", "arguments": '{"a": 1}'}}) == (
        "c1", "add", {"a": 1},
    )  # fmt: skip
    assert params(osmosis_reward) == params(osmosis_rubric) == ["func"]


def test_console_and_load_credentials_of_the_0_3_docs(tmp_path, monkeypatch) -> None:
    import io

    from osmosis_ai.cli.console import Console
    from osmosis_ai.platform.auth import load_credentials

    out = io.StringIO()
    console = Console(file=out, no_color=True, width=20)
    console.print("a", 1, style="green")
    console.error("broken")
    console.rule("x")
    assert out.getvalue().splitlines() == ["a 1", "Error: broken", " x ".center(20, "-")]
    assert "\x1b[" not in Console(file=io.StringIO(), force_terminal=False).file.getvalue()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.delenv("OSMOSIS_PLATFORM_URL", raising=False)
    monkeypatch.setenv("OSMOSIS_TOKEN", "tok-env")
    monkeypatch.delenv("OSMOSIS_TOKEN_PLATFORM_URL", raising=False)
    creds = load_credentials()
    assert creds is not None and creds.token == "tok-env" and creds.source == "environment"
    assert load_credentials(include_env=False) is None
