"""Loading an agent from `module:attribute` and validating it (the established error codes)."""

from __future__ import annotations

import itertools
import pathlib
import re
import sys
from typing import Any

import pytest

from osmosis_ai.rollout import (
    AgentLoopValidationError,
    OpenAIFunctionToolSchema,
    RolloutAgentLoop,
    RolloutRequest,
    ValidationError,
    validate_agent_loop,
)
from osmosis_ai.rollout.loader import AgentLoopLoadError, load_agent_loop

_counter = itertools.count()

AGENT_SOURCE = """
from osmosis_ai.rollout import RolloutAgentLoop

class Agent(RolloutAgentLoop):
    name = "file_agent"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        return ctx.complete(ctx.request.messages)

agent_loop = Agent()
not_an_agent = 42

class NotAgent:
    pass

class NeedsArgs(Agent):
    def __init__(self, x):
        self.x = x
"""


@pytest.fixture
def agent_module(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Writes the agent source into a uniquely named module in a temporary cwd; returns its name."""
    name = f"rollout_agent_fixture_{next(_counter)}"
    (tmp_path / f"{name}.py").write_text(AGENT_SOURCE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield name
    sys.modules.pop(name, None)


# --- loader ------------------------------------------------------------------------------------------------


def test_loads_instance_and_class_from_cwd(agent_module: str) -> None:
    instance = load_agent_loop(f"{agent_module}:agent_loop")
    assert isinstance(instance, RolloutAgentLoop) and instance.name == "file_agent"
    built = load_agent_loop(f"{agent_module}:Agent")
    assert type(built).__name__ == "Agent" and built is not instance


@pytest.mark.parametrize(
    ("attribute", "fragment"),
    [
        (
            "missing",
            "has no attribute 'missing'. Public attributes: Agent, NeedsArgs, NotAgent, RolloutAgentLoop",
        ),
        ("not_an_agent", "must be a RolloutAgentLoop instance or subclass, got int"),
        ("NotAgent", "is the class NotAgent, which does not subclass RolloutAgentLoop"),
        ("NeedsArgs", "Cannot instantiate NeedsArgs"),
    ],
)
def test_loader_errors_say_what_was_expected(agent_module: str, attribute: str, fragment: str) -> None:
    with pytest.raises(AgentLoopLoadError, match=fragment):
        load_agent_loop(f"{agent_module}:{attribute}")


@pytest.mark.parametrize("path", ["no_colon", ":attr", "module:", ""])
def test_loader_rejects_malformed_paths(path: str) -> None:
    with pytest.raises(AgentLoopLoadError, match=re.escape("Expected format: 'module.path:attribute_name'")):
        load_agent_loop(path)


def test_loader_reports_import_failures(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken_agent_mod.py").write_text("raise RuntimeError('boom at import')\n")
    try:
        with pytest.raises(
            AgentLoopLoadError, match="Cannot import module 'broken_agent_mod': RuntimeError: boom"
        ):
            load_agent_loop("broken_agent_mod:agent")
        with pytest.raises(AgentLoopLoadError, match="Cannot import module 'no_such_module_xyz'"):
            load_agent_loop("no_such_module_xyz:agent")
    finally:
        sys.modules.pop("broken_agent_mod", None)


# --- validator ---------------------------------------------------------------------------------------------


def agent_with(tools: Any = (), *, name: Any = "v_agent", run: Any = None, raises: bool = False) -> Any:
    """Builds an agent-like object for the validator (not necessarily a valid subclass)."""

    class Probe:
        pass

    probe = Probe()
    if name is not _MISSING:
        probe.name = name

    def get_tools(request: RolloutRequest) -> Any:
        probe.seen_request = request
        if raises:
            raise RuntimeError("tool server down")
        return list(tools) if isinstance(tools, tuple) else tools

    probe.get_tools = get_tools

    async def default_run(ctx: Any) -> None:
        return None

    if run is not _MISSING:
        probe.run = default_run if run is None else run
    return probe


_MISSING = object()


def codes(findings: list[ValidationError]) -> list[str]:
    return [finding.code for finding in findings]


def test_valid_agent_with_mixed_tools() -> None:
    class Good(RolloutAgentLoop):
        name = "good"

        def get_tools(self, request: RolloutRequest) -> list[OpenAIFunctionToolSchema]:
            return [
                OpenAIFunctionToolSchema(function={"name": "add", "description": "Adds."}),
                {"type": "function", "function": {"name": "mul", "description": "Multiplies."}},
            ]

        async def run(self, ctx: Any) -> Any:
            return None

    result = validate_agent_loop(Good())
    assert result and result.valid
    assert (result.agent_name, result.tool_count, result.errors, result.warnings) == ("good", 2, [], [])
    result.raise_if_invalid()


def test_mock_request_is_the_established_one() -> None:
    probe = agent_with()
    validate_agent_loop(probe)
    request = probe.seen_request
    assert request.rollout_id == "validation-test-rollout"
    assert request.server_url == "http://localhost:8080"
    assert request.messages == [{"role": "user", "content": "Hello"}]
    assert request.metadata == {"_validation": True}


@pytest.mark.parametrize(
    ("name", "code"),
    [(_MISSING, "MISSING_NAME"), (None, "MISSING_NAME"), (5, "INVALID_NAME_TYPE"), ("  ", "EMPTY_NAME")],
)
def test_name_checks(name: Any, code: str) -> None:
    result = validate_agent_loop(agent_with(name=name))
    assert not result and codes(result.errors) == [code]
    assert result.errors[0].field == "name"


def test_get_tools_checks() -> None:
    raised = validate_agent_loop(agent_with(raises=True))
    assert codes(raised.errors) == ["GET_TOOLS_EXCEPTION"]
    assert raised.errors[0].details == {
        "exception_type": "RuntimeError",
        "exception_message": "tool server down",
    }
    assert codes(validate_agent_loop(agent_with(None)).errors) == ["GET_TOOLS_RETURNS_NONE"]
    assert codes(validate_agent_loop(agent_with({"a": 1})).errors) == ["GET_TOOLS_INVALID_TYPE"]


@pytest.mark.parametrize(
    ("tool", "errors", "warnings"),
    [
        ({"function": {"name": "a", "description": "d"}}, ["MISSING_TOOL_TYPE"], []),
        ({"type": "retrieval", "function": {"name": "a", "description": "d"}}, [], ["UNKNOWN_TOOL_TYPE"]),
        ({"type": "function"}, ["MISSING_FUNCTION"], []),
        ({"type": "function", "function": "a"}, ["INVALID_FUNCTION_TYPE"], []),
        ({"type": "function", "function": {"description": "d"}}, ["MISSING_FUNCTION_NAME"], []),
        ({"type": "function", "function": {"name": "9a", "description": "d"}}, ["INVALID_FUNCTION_NAME"], []),
        ({"type": "function", "function": {"name": "a"}}, [], ["MISSING_FUNCTION_DESCRIPTION"]),
        (
            {"type": "function", "function": {"name": "a", "description": "d", "parameters": []}},
            ["INVALID_PARAMETERS_TYPE"],
            [],
        ),
        (
            {
                "type": "function",
                "function": {"name": "a", "description": "d", "parameters": {"type": "array"}},
            },
            [],
            ["PARAMETERS_TYPE_NOT_OBJECT"],
        ),
        ("add", ["INVALID_TOOL_TYPE"], []),
    ],
)
def test_tool_checks(tool: Any, errors: list[str], warnings: list[str]) -> None:
    result = validate_agent_loop(agent_with([tool]))
    assert codes(result.errors) == errors
    assert codes(result.warnings) == warnings
    assert result.valid is (not errors)
    assert all(f.field and f.field.startswith("tools[0]") for f in result.errors + result.warnings)


def test_run_checks() -> None:
    def sync_run(ctx: Any) -> None:
        return None

    assert codes(validate_agent_loop(agent_with(run=_MISSING)).errors) == ["MISSING_RUN_METHOD"]
    assert codes(validate_agent_loop(agent_with(run=3)).errors) == ["RUN_NOT_CALLABLE"]
    assert codes(validate_agent_loop(agent_with(run=sync_run)).errors) == ["RUN_NOT_ASYNC"]


def test_raise_if_invalid_lists_every_error() -> None:
    result = validate_agent_loop(agent_with([{"type": "function"}], name="", run=3))
    assert codes(result.errors) == ["EMPTY_NAME", "MISSING_FUNCTION", "RUN_NOT_CALLABLE"]
    with pytest.raises(AgentLoopValidationError) as caught:
        result.raise_if_invalid()
    message = str(caught.value)
    assert message.startswith("Agent loop validation failed with 3 error(s):")
    assert "  - [MISSING_FUNCTION] tools[0].function: a tool needs a 'function' object" in message
    assert codes(caught.value.errors) == codes(result.errors)


def test_validation_error_rendering() -> None:
    assert str(ValidationError("X", "msg")) == "[X] msg"
    assert str(ValidationError("X", "msg", "f")) == "[X] f: msg"


def test_a_dict_tool_agent_that_validates_also_passes_runtime_tool_checks() -> None:
    # Quirk #20: the established runners crashed on dict tools that `validate` accepted.
    from osmosis_ai.rollout import validate_tools

    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    result = validate_agent_loop(agent_with(tools))
    assert result.valid and codes(result.warnings) == ["MISSING_FUNCTION_DESCRIPTION"]
    validate_tools(tools)
