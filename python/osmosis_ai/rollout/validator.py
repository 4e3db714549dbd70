"""``validate_agent_loop``: the checks ``osmosis validate`` and ``osmosis serve`` run before serving.

Error codes are the established ones. Tool definitions are checked by the same rules a rollout applies
(:func:`osmosis_ai.rollout.tools.check_tool`), for pydantic tool objects and dicts alike.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.errors import OsmosisRolloutError
from osmosis_ai.rollout.requests import placeholder_request
from osmosis_ai.rollout.schemas import RolloutRequest
from osmosis_ai.rollout.tools import check_tool

__all__ = ["AgentLoopValidationError", "ValidationError", "ValidationResult", "validate_agent_loop"]


@dataclass
class ValidationError:
    """One finding: a stable ``code``, a message, and the field it concerns.

    Example:
        >>> str(ValidationError("EMPTY_NAME", "name must not be empty", "name"))
        '[EMPTY_NAME] name: name must not be empty'
    """

    code: str
    message: str
    field: str | None = None
    details: dict[str, Any] | None = None

    def __str__(self) -> str:
        where = f" {self.field}:" if self.field else ""
        return f"[{self.code}]{where} {self.message}"


class AgentLoopValidationError(OsmosisRolloutError, ValueError):
    """An agent loop failed validation; ``errors`` holds the findings."""

    def __init__(self, message: str, errors: list[ValidationError] | None = None) -> None:
        super().__init__(message)
        self.errors = list(errors or [])


@dataclass
class ValidationResult:
    """The outcome of :func:`validate_agent_loop`; truthy when valid."""

    valid: bool
    errors: list[ValidationError] = field(default_factory=list)
    warnings: list[ValidationError] = field(default_factory=list)
    agent_name: str | None = None
    tool_count: int = 0

    def __bool__(self) -> bool:
        return self.valid

    def raise_if_invalid(self) -> None:
        """Raises :class:`AgentLoopValidationError` listing every error, if there are any."""
        if self.valid:
            return
        lines = "\n".join(f"  - {error}" for error in self.errors)
        raise AgentLoopValidationError(
            f"Agent loop validation failed with {len(self.errors)} error(s):\n{lines}", self.errors
        )


def _check_name(agent_loop: Any, errors: list[ValidationError]) -> str | None:
    if not hasattr(agent_loop, "name") or agent_loop.name is None:
        errors.append(
            ValidationError("MISSING_NAME", "the agent loop needs a 'name' class attribute", "name")
        )
        return None
    name = agent_loop.name
    if not isinstance(name, str):
        errors.append(
            ValidationError("INVALID_NAME_TYPE", f"name must be a string, got {type(name).__name__}", "name")
        )
        return None
    if not name.strip():
        errors.append(ValidationError("EMPTY_NAME", "name must not be empty", "name"))
    return name


def _check_tools(agent_loop: Any, request: RolloutRequest, result: ValidationResult) -> None:
    try:
        tools = agent_loop.get_tools(request)
    except Exception as exc:
        result.errors.append(
            ValidationError(
                "GET_TOOLS_EXCEPTION",
                f"get_tools raised {type(exc).__name__}: {exc}",
                "get_tools",
                {"exception_type": type(exc).__name__, "exception_message": str(exc)},
            )
        )
        return
    if tools is None:
        result.errors.append(
            ValidationError(
                "GET_TOOLS_RETURNS_NONE", "get_tools returned None; return [] for no tools", "get_tools"
            )
        )
        return
    if not isinstance(tools, list):
        result.errors.append(
            ValidationError(
                "GET_TOOLS_INVALID_TYPE",
                f"get_tools must return a list, got {type(tools).__name__}",
                "get_tools",
            )
        )
        return
    result.tool_count = len(tools)
    for index, tool in enumerate(tools):
        for issue in check_tool(tool, index):
            finding = ValidationError(issue.code, issue.message, issue.field)
            (result.errors if issue.error else result.warnings).append(finding)


def _check_run(agent_loop: Any, errors: list[ValidationError]) -> None:
    run = getattr(agent_loop, "run", None)
    if run is None:
        errors.append(
            ValidationError("MISSING_RUN_METHOD", "the agent loop needs an 'async def run(self, ctx)'", "run")
        )
    elif not callable(run):
        errors.append(
            ValidationError("RUN_NOT_CALLABLE", f"run must be a method, got {type(run).__name__}", "run")
        )
    elif not inspect.iscoroutinefunction(run):
        errors.append(
            ValidationError("RUN_NOT_ASYNC", "run must be declared 'async def run(self, ctx)'", "run")
        )


def validate_agent_loop(agent_loop: Any, *, request: RolloutRequest | None = None) -> ValidationResult:
    """Checks an agent loop's name, tools (``get_tools`` is really called) and ``run`` method.

    Args:
        agent_loop: The agent loop instance.
        request: The request handed to ``get_tools``; a small mock request when omitted.

    Returns:
        The findings; ``valid`` is False when there is any error (warnings do not count).

    Example:
        >>> validate_agent_loop(my_agent).raise_if_invalid()  # doctest: +SKIP
    """
    result = ValidationResult(valid=True)
    result.agent_name = _check_name(agent_loop, result.errors)
    _check_tools(agent_loop, request or placeholder_request(), result)
    _check_run(agent_loop, result.errors)
    result.valid = not result.errors
    return result
