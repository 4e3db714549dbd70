"""The agent contract: base class, context, results, schemas, registry, tool and message helpers."""

from __future__ import annotations

import abc
import asyncio
import json
import re
import subprocess
import sys
from typing import Any

import pytest
from pydantic import ValidationError as PydanticValidationError

import osmosis_ai
import osmosis_ai.rollout as rollout
from osmosis_ai.errors import AgentLoopNotFoundError, ToolArgumentError, ToolValidationError
from osmosis_ai.rollout import (
    AgentLoopRegistry,
    CompletionsRequest,
    CompletionsResponse,
    CompletionsResult,
    InitResponse,
    LLMClientProtocol,
    OpenAIFunctionCallSchema,
    OpenAIFunctionParsedSchema,
    OpenAIFunctionToolSchema,
    RolloutAgentLoop,
    RolloutContext,
    RolloutMetrics,
    RolloutRequest,
    RolloutResponse,
    RolloutStatus,
    ToolResponse,
)

_ESTABLISHED_TEXT = """
RolloutAgentLoop RolloutContext RolloutResult CompletionsResult LLMClientProtocol RolloutMetrics
RolloutRequest RolloutResponse InitResponse RolloutStatus CompletionsRequest CompletionsResponse
CompletionsChoice CompletionUsage OpenAIFunctionToolSchema OpenAIFunctionSchema OpenAIFunctionParametersSchema
OpenAIFunctionPropertySchema OpenAIFunctionParsedSchema OpenAIFunctionCallSchema OpenAIFunctionToolCall
ToolResponse MessageDict SamplingParamsDict DEFAULT_MAX_METADATA_SIZE_BYTES get_max_metadata_size_bytes
set_max_metadata_size_bytes AgentLoopRegistry register_agent_loop unregister_agent_loop get_agent_loop
list_agent_loops validate_agent_loop ValidationResult ValidationError AgentLoopValidationError
OsmosisRolloutError OsmosisTransportError OsmosisServerError OsmosisValidationError OsmosisTimeoutError
AgentLoopNotFoundError ToolExecutionError ToolArgumentError create_tool_result create_tool_error_result
serialize_tool_result parse_tool_arguments get_tool_call_info execute_tool_calls parse_tool_calls
normalize_stop get_message_content get_message_role is_assistant_message is_tool_message is_user_message
count_messages_by_role
"""
ESTABLISHED_ROLLOUT_NAMES = _ESTABLISHED_TEXT.split()


def make_request(**overrides: Any) -> RolloutRequest:
    fields: dict[str, Any] = {
        "rollout_id": "r-1",
        "server_url": "http://127.0.0.1:9",
        "messages": [{"role": "user", "content": "hi"}],
        "completion_params": {},
    }
    fields.update(overrides)
    return RolloutRequest(**fields)


class CountingLLM:
    """An in-process LLM client: answers with a fixed message and counts like a real one."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []

    async def chat_completions(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompletionsResult:
        self.calls.append((messages, kwargs))
        return CompletionsResult(message={"role": "assistant", "content": "ok"}, usage={"prompt_tokens": 3})

    def get_metrics(self) -> RolloutMetrics:
        return RolloutMetrics(
            llm_latency_ms=5.0, num_llm_calls=len(self.calls), prompt_tokens=3, response_tokens=1
        )


class EchoAgent(RolloutAgentLoop):
    name = "echo"

    def get_tools(self, request: RolloutRequest) -> list[OpenAIFunctionToolSchema]:
        return []

    async def run(self, ctx: RolloutContext) -> Any:
        reply = await ctx.chat(ctx.request.messages, temperature=0.5)
        return ctx.complete([*ctx.request.messages, reply.message], reward=1.0)


# --- public names ------------------------------------------------------------------------------------------


def test_established_rollout_names_are_exported() -> None:
    missing = [name for name in ESTABLISHED_ROLLOUT_NAMES if name not in rollout.__all__]
    assert missing == []
    for name in rollout.__all__:
        assert getattr(rollout, name) is not None


def test_top_level_reexports_are_lazy_and_identical() -> None:
    code = (
        "import sys, osmosis_ai; assert 'osmosis_ai.rollout' not in sys.modules; "
        "cls = osmosis_ai.RolloutAgentLoop; "
        "print(sorted(m for m in ('fastapi', 'uvicorn', 'httpx') if m in sys.modules))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"
    assert osmosis_ai.RolloutAgentLoop is RolloutAgentLoop
    assert osmosis_ai.RolloutRequest is RolloutRequest
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = osmosis_ai.nope


# --- RolloutAgentLoop name rule (quirk #5 fixed) --------------------------------------------------------


def test_concrete_subclass_without_name_is_rejected_at_class_creation() -> None:
    with pytest.raises(TypeError, match="Nameless must define a 'name'"):

        class Nameless(RolloutAgentLoop):
            def get_tools(self, request: RolloutRequest) -> list[OpenAIFunctionToolSchema]:
                return []

            async def run(self, ctx: RolloutContext) -> Any:
                return None


def test_empty_name_is_rejected() -> None:
    with pytest.raises(TypeError, match="must define a 'name'"):

        class Empty(RolloutAgentLoop):
            name = ""

            def get_tools(self, request: RolloutRequest) -> list[OpenAIFunctionToolSchema]:
                return []

            async def run(self, ctx: RolloutContext) -> Any:
                return None


def test_abstract_intermediate_needs_no_name_but_its_concrete_child_does() -> None:
    class ToolfulBase(RolloutAgentLoop):
        def get_tools(self, request: RolloutRequest) -> list[OpenAIFunctionToolSchema]:
            return []

    class ExplicitAbstract(RolloutAgentLoop):
        @abc.abstractmethod
        def helper(self) -> None: ...

    class Concrete(ToolfulBase):
        name = "concrete"

        async def run(self, ctx: RolloutContext) -> Any:
            return None

    assert Concrete().name == "concrete"
    with pytest.raises(TypeError):
        ToolfulBase()  # still abstract: run is missing
    with pytest.raises(TypeError, match="Unnamed must define"):

        class Unnamed(ToolfulBase):
            async def run(self, ctx: RolloutContext) -> Any:
                return None

    assert ExplicitAbstract.__abstractmethods__


def test_name_is_inherited() -> None:
    class Child(EchoAgent):
        pass

    assert Child().name == "echo"


# --- context and results ------------------------------------------------------------------------------------


def test_context_chat_complete_and_metrics() -> None:
    llm = CountingLLM()
    assert isinstance(llm, LLMClientProtocol)
    ctx = RolloutContext(request=make_request(), tools=[], llm=llm, _start_time=1.0)
    result = asyncio.run(EchoAgent().run(ctx))
    assert llm.calls == [([{"role": "user", "content": "hi"}], {"temperature": 0.5})]
    assert result.status == "COMPLETED"
    assert result.finish_reason == "stop"
    assert result.reward == 1.0
    assert result.final_messages[-1] == {"role": "assistant", "content": "ok"}
    assert result.metrics is not None
    assert result.metrics.num_llm_calls == 1
    assert result.metrics.llm_latency_ms == 5.0
    assert result.metrics.prompt_tokens == 3
    assert result.metrics.total_latency_ms > 0


def test_complete_takes_the_package_clients_counters_as_fields() -> None:
    from osmosis_ai.eval.llm_client import ExternalLLMClient

    llm = ExternalLLMClient(transport=None)  # type: ignore[arg-type]
    llm._calls, llm._latency_ms, llm._prompt_tokens, llm._completion_tokens = 2, 7.5, 30, 4
    ctx = RolloutContext(request=make_request(), tools=[], llm=llm, _start_time=1.0)
    ctx.record_tool_call(1.5)
    metrics = ctx.complete([]).metrics
    assert metrics is not None
    counted = llm.get_metrics()
    assert (
        (metrics.num_llm_calls, metrics.llm_latency_ms)
        == (counted.num_llm_calls, counted.llm_latency_ms)
        == (2, 7.5)
    )
    assert (metrics.prompt_tokens, metrics.response_tokens, metrics.max_context_tokens) == (30, 4, 0)
    assert (metrics.num_tool_calls, metrics.tool_latency_ms) == (1, 1.5) and metrics.total_latency_ms > 0
    assert metrics.model_fields_set == set(type(metrics).model_fields)  # every field given, as 0.2's


def test_context_error_and_tool_counters() -> None:
    ctx = RolloutContext(request=make_request(), tools=[], llm=CountingLLM())
    ctx.record_tool_call(2.5)
    ctx.record_tool_call()
    result = ctx.error("tool exploded")
    assert (result.status, result.finish_reason, result.final_messages) == ("ERROR", "error", [])
    assert result.error_message == "tool exploded"
    assert result.metrics is not None
    assert (result.metrics.num_tool_calls, result.metrics.tool_latency_ms) == (2, 2.5)
    assert result.metrics.total_latency_ms == 0.0  # no start time set
    assert ctx.tool_call_log == []  # unnamed calls are only counted


def test_a_named_tool_call_is_logged_with_when_it_began() -> None:
    ctx = RolloutContext(request=make_request(), tools=[], llm=CountingLLM(), _start_time=100.0)
    ctx.record_tool_call(4.0, name="add", arguments={"a": 1}, result="2", started=100.25)
    assert ctx.tool_call_log == [
        {
            "name": "add",
            "arguments": {"a": 1},
            "result": "2",
            "error": None,
            "duration_ms": 4.0,
            "started_ms": 250.0,
        }
    ]
    unstarted = RolloutContext(request=make_request(), tools=[], llm=CountingLLM())
    unstarted.record_tool_call(1.0, name="add")
    assert unstarted.tool_call_log[0]["started_ms"] is None  # no start time: not known


def test_log_event_writes_jsonl_only_with_debug_dir_and_keeps_ids_inside(tmp_path: Any) -> None:
    quiet = RolloutContext(request=make_request(), tools=[], llm=CountingLLM())
    quiet.log_event("turn", n=1)
    assert not quiet.debug_enabled
    ctx = RolloutContext(
        request=make_request(rollout_id="../../escape/id"),
        tools=[],
        llm=CountingLLM(),
        _debug_dir=str(tmp_path),
    )
    assert ctx.debug_enabled
    ctx.log_event("turn", n=1, obj=object())
    ctx.log_event("done")
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].parent == tmp_path
    lines = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert lines[0]["event"] == "turn" and lines[0]["rollout_id"] == "../../escape/id" and lines[0]["n"] == 1
    assert lines[0]["obj"].startswith("<object")
    assert lines[1]["event"] == "done"


def test_completions_result_properties() -> None:
    plain = CompletionsResult(message={"role": "assistant", "content": "x", "tool_calls": None})
    assert not plain.has_tool_calls and plain.tool_calls == [] and plain.content == "x"
    call = {"id": "c", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    tooly = CompletionsResult(message={"role": "assistant", "content": None, "tool_calls": [call]})
    assert tooly.has_tool_calls and tooly.tool_calls == [call] and tooly.content is None


def test_completions_result_is_the_dataclass_it_declares() -> None:
    """Its own __init__ (fields set in one step) keeps what the generated one gave: the signature, a fresh
    default per instance, positional or keyword arguments, equality, repr and frozen fields."""
    import dataclasses
    import inspect

    assert str(inspect.signature(CompletionsResult)) == (
        "(message: 'dict[str, Any]', token_ids: 'list[Any]' = <factory>, logprobs: 'list[Any]' = <factory>, "
        "usage: 'dict[str, Any]' = <factory>, finish_reason: 'str' = 'stop') -> 'None'"
    )
    first, second = CompletionsResult({"role": "assistant"}), CompletionsResult({"role": "assistant"})
    assert first == second and first.token_ids is not second.token_ids and first.usage is not second.usage
    assert (first.token_ids, first.logprobs, first.usage, first.finish_reason) == ([], [], {}, "stop")
    given = CompletionsResult({"role": "assistant"}, [1], [0.5], {"prompt_tokens": 3}, "length")
    assert given == CompletionsResult(
        message={"role": "assistant"},
        token_ids=[1],
        logprobs=[0.5],
        usage={"prompt_tokens": 3},
        finish_reason="length",
    )
    assert dataclasses.asdict(given) == {
        "message": {"role": "assistant"}, "token_ids": [1], "logprobs": [0.5],
        "usage": {"prompt_tokens": 3}, "finish_reason": "length",
    }  # fmt: skip
    assert repr(first) == (
        "CompletionsResult(message={'role': 'assistant'}, token_ids=[], logprobs=[], usage={}, finish_reason='stop')"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.finish_reason = "length"  # type: ignore[misc]


def test_context_metrics_are_validated_by_the_model() -> None:
    """ctx.complete's metrics go through RolloutMetrics' validation: numbers coerced as the model does,
    anything else refused, every field set."""
    ctx = RolloutContext(request=make_request(), tools=[], llm=CountingLLM(), _start_time=0.0)
    ctx.record_tool_call(2)  # an int latency: a float in the metrics, as RolloutMetrics(...) made it
    metrics = ctx.complete([]).metrics
    assert metrics == RolloutMetrics(
        llm_latency_ms=5.0,
        num_llm_calls=0,
        prompt_tokens=3,
        response_tokens=1,
        tool_latency_ms=2.0,
        num_tool_calls=1,
    )
    assert type(metrics.tool_latency_ms) is float and metrics.model_fields_set == set(
        RolloutMetrics.model_fields
    )
    ctx._num_tool_calls = "many"  # type: ignore[assignment]
    with pytest.raises(PydanticValidationError, match="RolloutMetrics"):
        ctx.complete([])


class _ClaimsToolCalls(CountingLLM):
    """A client whose metric_fields() sets a field the context counts itself."""

    def metric_fields(self) -> dict[str, Any]:
        return {"llm_latency_ms": 1.0, "num_tool_calls": 7}


def test_a_clients_metric_the_context_counts_is_refused_not_taken() -> None:
    ctx = RolloutContext(request=make_request(), tools=[], llm=_ClaimsToolCalls(), _start_time=0.0)
    ctx.record_tool_call(2)
    with pytest.raises(TypeError, match="multiple values for keyword argument 'num_tool_calls'"):
        ctx.complete([])


# --- schemas ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"rollout_id": ""}, "rollout_id"),
        ({"rollout_id": "   "}, "whitespace"),
        ({"rollout_id": "x" * 257}, "at most 256"),
        ({"server_url": "ftp://host"}, "http:// or https://"),
        ({"server_url": "http://"}, "with a host"),
        ({"metadata": {"f": object()}}, "JSON-serialisable"),
    ],
)
def test_rollout_request_rejects(overrides: dict[str, Any], fragment: str) -> None:
    with pytest.raises(PydanticValidationError, match=fragment):
        make_request(**overrides)


def test_rollout_request_defaults_and_key_hidden_from_repr() -> None:
    request = make_request(api_key="sk-secret", rollout_id="x" * 256)
    assert (request.max_turns, request.max_tokens_total, request.metadata) == (10, 8192, {})
    assert request.idempotency_key is None and request.tool_server_url is None
    assert "sk-secret" not in repr(request)


def test_metadata_limit_is_exact_and_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    from osmosis_ai.rollout import schemas

    monkeypatch.setattr(schemas, "_metadata_limit_override", None)
    assert rollout.get_max_metadata_size_bytes() == rollout.DEFAULT_MAX_METADATA_SIZE_BYTES == 1024 * 1024
    rollout.set_max_metadata_size_bytes(20)
    assert rollout.get_max_metadata_size_bytes() == 20
    make_request(metadata={"a": "x" * 12})  # {"a":"xxxxxxxxxxxx"} is exactly 20 bytes
    with pytest.raises(
        PydanticValidationError, match="metadata size exceeds maximum of 20 bytes: 21 bytes as JSON"
    ):
        make_request(metadata={"a": "x" * 13})
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="must be positive"):  # 0.2.17's words
            rollout.set_max_metadata_size_bytes(bad)  # type: ignore[arg-type]
    monkeypatch.setattr(schemas, "_metadata_limit_override", None)
    monkeypatch.setenv("OSMOSIS_ROLLOUT_MAX_METADATA_SIZE_BYTES", "30")
    assert rollout.get_max_metadata_size_bytes() == 30
    with pytest.raises(PydanticValidationError, match="maximum of 30 bytes: 31 bytes"):
        make_request(metadata={"a": "x" * 23})  # read again for every request: the variable as it is now
    monkeypatch.delenv("OSMOSIS_ROLLOUT_MAX_METADATA_SIZE_BYTES")
    make_request(metadata={"a": "x" * 23})
    assert rollout.get_max_metadata_size_bytes() == rollout.DEFAULT_MAX_METADATA_SIZE_BYTES
    monkeypatch.setenv("OSMOSIS_ROLLOUT_MAX_METADATA_SIZE_BYTES", " 30 ")
    assert rollout.get_max_metadata_size_bytes() == 30
    monkeypatch.setenv("OSMOSIS_ROLLOUT_MAX_METADATA_SIZE_BYTES", "lots")
    with pytest.raises(
        ValueError, match="OSMOSIS_ROLLOUT_MAX_METADATA_SIZE_BYTES must be a positive integer"
    ):
        rollout.get_max_metadata_size_bytes()


def test_metadata_size_counts_utf8_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    from osmosis_ai.rollout import schemas

    monkeypatch.setattr(schemas, "_metadata_limit_override", 14)
    make_request(metadata={"a": "ééé"})  # {"a":"ééé"} = 8 ASCII bytes + 3 two-byte letters
    with pytest.raises(PydanticValidationError, match="16 bytes"):
        make_request(metadata={"a": "éééé"})


def test_tool_schema_keeps_json_schema_extras_and_dumps_for_llm_apis() -> None:
    tool = OpenAIFunctionToolSchema(
        type="function",
        function={
            "name": "sum_list",
            "description": "Sums numbers.",
            "parameters": {
                "type": "object",
                "properties": {"xs": {"type": "array", "items": {"type": "number"}}},
                "required": ["xs"],
            },
        },
    )
    dumped = tool.model_dump(exclude_none=True)
    assert dumped["function"]["parameters"]["properties"]["xs"] == {
        "type": "array",
        "items": {"type": "number"},
    }
    assert dumped["function"]["strict"] is False
    bare = OpenAIFunctionToolSchema(function={"name": "noop", "description": "Nothing."})
    assert bare.function.parameters.model_dump() == {"type": "object", "properties": {}, "required": []}


def test_parsed_tool_call_decoding() -> None:
    good, bad = OpenAIFunctionCallSchema.from_openai_function_parsed_schema(
        OpenAIFunctionParsedSchema(name="add", arguments='{"a": 1}')
    )
    assert (good.arguments, bad) == ({"a": 1}, False)
    for raw in ("not json", "[1, 2]"):
        call, failed = OpenAIFunctionCallSchema.from_openai_function_parsed_schema(
            OpenAIFunctionParsedSchema(name="add", arguments=raw)
        )
        assert (call.arguments, failed) == ({}, True)


def test_tool_response() -> None:
    assert ToolResponse().is_empty()
    assert ToolResponse(text="hi").is_text_only()
    assert not ToolResponse(text="hi", image=["png"]).is_text_only()
    with pytest.raises(PydanticValidationError):
        ToolResponse(image="not-a-list")


def test_response_and_completions_schemas() -> None:
    response = RolloutResponse(rollout_id="r", status="COMPLETED")
    assert response.status is RolloutStatus.COMPLETED
    assert json.loads(response.model_dump_json(exclude_none=True)) == {
        "rollout_id": "r",
        "status": "COMPLETED",
        "final_messages": [],
        "extra_fields": {},
    }
    with pytest.raises(PydanticValidationError):
        RolloutResponse(rollout_id="r", status="DONE")
    with pytest.raises(ValueError):
        RolloutStatus("DONE")
    request = CompletionsRequest(messages=[], rollout_id="r", tools=[{"x": 1}])
    assert "tools" not in request.model_dump()
    assert (request.model, request.max_tokens, request.logprobs) == ("default", 512, True)
    body = CompletionsResponse(
        id="c", created=1, choices=[{"message": {"role": "assistant", "content": "a"}}]
    )
    assert body.choices[0].finish_reason == "stop" and body.token_ids == [] and body.usage is None
    init = InitResponse(
        rollout_id="r", tools=[{"type": "function", "function": {"name": "a", "description": "b"}}]
    )
    assert init.model_dump(exclude_none=True)["tools"][0]["function"]["name"] == "a"


# --- registry ---------------------------------------------------------------------------------------------


def test_registry_roundtrip_and_errors() -> None:
    registry = AgentLoopRegistry()
    agent = EchoAgent()
    registry.register(agent)
    with pytest.raises(ValueError, match="'echo' is already registered"):
        registry.register(EchoAgent())
    with pytest.raises(TypeError, match="RolloutAgentLoop instance"):
        registry.register(object())  # type: ignore[arg-type]
    assert registry.get("echo") is agent and registry.get("nope") is None
    assert registry.list_names() == ["echo"]
    assert registry.unregister("echo") is True and registry.unregister("echo") is False
    registry.register(agent)
    registry.clear()
    assert registry.list_names() == []


def test_global_registry_functions() -> None:
    agent = EchoAgent()
    rollout.register_agent_loop(agent)
    try:
        assert rollout.get_agent_loop("echo") is agent
        assert "echo" in rollout.list_agent_loops()
        with pytest.raises(
            AgentLoopNotFoundError, match=re.escape("'missing' not found. Available: ['echo']")
        ):
            rollout.get_agent_loop("missing")
    finally:
        assert rollout.unregister_agent_loop("echo")
    assert "echo" not in rollout.list_agent_loops()


# --- tool helpers ----------------------------------------------------------------------------------------


def test_tool_result_helpers() -> None:
    assert rollout.create_tool_result("c1", "8") == {"role": "tool", "content": "8", "tool_call_id": "c1"}
    assert rollout.create_tool_result("c1", {"a": 1})["content"] == '{"a": 1}'
    assert rollout.create_tool_error_result("c1", "boom")["content"] == "Error: boom"
    assert [rollout.serialize_tool_result(x) for x in (True, 3, 2.5, "s", [1], None)] == [
        "true",
        "3",
        "2.5",
        "s",
        "[1]",
        "null",
    ]


def test_parse_tool_arguments() -> None:
    assert rollout.parse_tool_arguments('{"a": 5, "b": 3}') == {"a": 5, "b": 3}
    assert rollout.parse_tool_arguments({"a": 1}) == {"a": 1}
    assert rollout.parse_tool_arguments("") == {}
    # The messages keep 0.2.17's words, which users' tests match.
    with pytest.raises(ToolArgumentError, match="Invalid JSON"):
        rollout.parse_tool_arguments("{oops")
    with pytest.raises(ToolArgumentError, match="Expected dict from JSON tool arguments, got list"):
        rollout.parse_tool_arguments("[1]")
    with pytest.raises(ToolArgumentError, match="Expected str or dict arguments, got int"):
        rollout.parse_tool_arguments(5)  # type: ignore[arg-type]


def test_get_tool_call_info() -> None:
    call = {"id": "c9", "type": "function", "function": {"name": "add", "arguments": '{"a": 2}'}}
    assert rollout.get_tool_call_info(call) == ("c9", "add", {"a": 2})
    assert rollout.get_tool_call_info({"function": {}}) == ("unknown", "", {})
    with pytest.raises(ToolArgumentError) as caught:
        rollout.get_tool_call_info({"id": "c1", "function": {"name": "add", "arguments": "{bad"}})
    assert (caught.value.tool_call_id, caught.value.tool_name) == ("c1", "add")


def test_execute_tool_calls_keeps_order_while_running_concurrently() -> None:
    started: list[str] = []

    async def executor(call: dict[str, Any]) -> dict[str, Any]:
        started.append(call["id"])
        await asyncio.sleep(0.02 if call["id"] == "a" else 0)
        return rollout.create_tool_result(call["id"], call["id"].upper())

    results = asyncio.run(rollout.execute_tool_calls([{"id": "a"}, {"id": "b"}], executor))
    assert [r["content"] for r in results] == ["A", "B"]
    assert started == ["a", "b"]
    assert asyncio.run(rollout.execute_tool_calls([], executor)) == []


def test_validate_tools_accepts_objects_and_dicts_alike() -> None:
    as_dict = {"type": "function", "function": {"name": "add", "description": "Adds.", "parameters": {}}}
    as_dict["function"]["parameters"] = {"type": "object", "properties": {}}
    as_object = OpenAIFunctionToolSchema.model_validate(as_dict)
    rollout.validate_tools([as_dict, as_object])
    rollout.validate_tools([])
    for bad, fragment in [
        ({"type": "function", "function": {"name": "1bad", "description": "x"}}, "tools[0].function.name"),
        ({"type": "function"}, "needs a 'function'"),
        ({"function": {"name": "ok", "description": "x"}}, "needs 'type'"),
        ("not a tool", "expected a dict or a tool object"),
        (OpenAIFunctionToolSchema(function={"name": "bad name", "description": "x"}), "letters, digits"),
    ]:
        with pytest.raises(ToolValidationError, match=re.escape(fragment)):
            rollout.validate_tools([bad])
    with pytest.raises(ToolValidationError, match="must return a list"):
        rollout.validate_tools(None)  # type: ignore[arg-type]


# --- message helpers -------------------------------------------------------------------------------------


def test_message_helpers_tolerate_null_and_missing_fields() -> None:
    assert rollout.parse_tool_calls({"role": "assistant", "tool_calls": None}) == []
    assert rollout.parse_tool_calls({"role": "assistant"}) == []
    assert rollout.parse_tool_calls({"tool_calls": [{"id": "x"}]}) == [{"id": "x"}]
    assert rollout.normalize_stop(None) is None
    assert rollout.normalize_stop("x") == ["x"]
    assert rollout.normalize_stop(["a", 2]) == ["a", "2"]
    assert rollout.normalize_stop(5) is None
    assert rollout.get_message_content({"content": [{"type": "text"}]}) == ""
    assert rollout.get_message_content({"content": "hi"}) == "hi"
    assert rollout.get_message_role({"role": None}) == "unknown"
    messages = [{"role": "user"}, {"role": "assistant"}, {"role": "tool"}, {"role": "assistant"}, {}]
    assert rollout.count_messages_by_role(messages) == {"user": 1, "assistant": 2, "tool": 1, "unknown": 1}
    assert [
        (rollout.is_user_message(m), rollout.is_assistant_message(m), rollout.is_tool_message(m))
        for m in messages[:3]
    ] == [(True, False, False), (False, True, False), (False, False, True)]


# --- dataset row to request (quirks #18, #19 fixed) -----------------------------------------------------


def test_dataset_row_to_request_keeps_sdk_keys_and_shadowed_columns(caplog: pytest.LogCaptureFixture) -> None:
    row = {
        "ground_truth": "4",
        "user_prompt": "2+2?",
        "system_prompt": "Be brief.",
        "row_index": "dataset's own",
        "run_index": 99,
        "topic": "math",
    }
    request = rollout.dataset_row_to_request(
        row, 7, rollout_id="eval-7-run-1", max_turns=3, overrides={"execution_mode": "eval", "run_index": 1}
    )
    assert request.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "2+2?"},
    ]
    assert request.max_tokens_total == 8192 and request.max_turns == 3
    assert request.metadata == {
        "topic": "math",
        "ground_truth": "4",
        "row_index": 7,
        "execution_mode": "eval",
        "run_index": 1,
        "shadowed_columns": {"row_index": "dataset's own", "run_index": 99},
    }
    assert "collide with SDK metadata keys" in caplog.text


def test_a_row_of_the_required_columns_alone_has_the_sdk_keys_as_metadata() -> None:
    """The shortcut for such a row (its keys compared at once) builds what walking its columns builds: the
    same metadata in the same order, for a dict or any other mapping, in any column order."""
    from types import MappingProxyType

    overrides = {"execution_mode": "eval", "run_index": 2}
    required = {"user_prompt": "2+2?", "ground_truth": "4", "system_prompt": "Be brief."}
    for row in (required, dict(reversed(required.items())), MappingProxyType(required)):
        request = rollout.dataset_row_to_request(row, 3, rollout_id="eval-3-run-2", overrides=overrides)
        assert list(request.metadata.items()) == [
            ("ground_truth", "4"), ("row_index", 3), ("execution_mode", "eval"), ("run_index", 2)
        ]  # fmt: skip
    extra = rollout.dataset_row_to_request({**required, "topic": "t"}, 3, rollout_id="r", overrides=overrides)
    assert list(extra.metadata) == ["topic", "ground_truth", "row_index", "execution_mode", "run_index"]
    assert rollout.dataset_row_to_request(required, 0, rollout_id="r").metadata == {
        "ground_truth": "4",
        "row_index": 0,
    }
    with pytest.raises(PydanticValidationError, match="RolloutRequest\nrollout_id"):  # the model's own rules
        rollout.dataset_row_to_request(required, 0, rollout_id=" ")
