"""`osmosis test --interactive`: run one row at a time and pause after every LLM call.

At each pause: Enter or ``n`` takes the next step, ``c`` runs the row to the end, ``m`` lists the messages so
far, ``t`` the tools, ``q`` aborts the row, ``?`` shows this list. Between rows a row number is asked for;
``q``, end of input or Ctrl+C ends the session.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import click

from osmosis_ai.eval.llm_client import ExternalLLMClient
from osmosis_ai.eval.options import TestOptions
from osmosis_ai.rollout.agent_loop import CompletionsResult, RolloutContext
from osmosis_ai.rollout.requests import dataset_row_to_request
from osmosis_ai.rollout.tools import validate_tools

__all__ = ["InteractiveSession"]

STEP_HELP = (
    "Commands: Enter/n = next step, c = continue to the end, m = messages, t = tools, q = quit row, ? = help"
)
_QUIT = {"q", "quit", "exit"}


def _rule(title: str) -> None:
    click.echo(f"\n{'=' * 20} {title} {'=' * 20}")


def _label(message: dict[str, Any]) -> str:
    role = message.get("role", "?")
    if role == "tool":
        return f"Tool ({message.get('name') or message.get('tool_call_id', '?')})"
    return f"[{str(role).capitalize()}]"


def _show_message(message: dict[str, Any], index: int | None = None) -> None:
    prefix = f"{index}. " if index is not None else ""
    click.echo(f"{prefix}{_label(message)}")
    content = message.get("content")
    if content:
        click.echo(f"  {content}")
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        try:
            args = json.dumps(json.loads(function.get("arguments") or "{}"), indent=2)
        except (TypeError, ValueError):
            args = str(function.get("arguments"))
        click.echo(f"  • {function.get('name', '?')}({args})")


def _show_tools(tools: list[Any]) -> None:
    for tool in tools:
        data = tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else dict(tool)
        function = data.get("function", {})
        params = ", ".join((function.get("parameters") or {}).get("properties", {}))
        click.echo(f"  - {function.get('name')}: {function.get('description', '')} ({params})")


async def _ask(prompt: str) -> str:
    try:
        return (await asyncio.to_thread(input, prompt)).strip()
    except (EOFError, KeyboardInterrupt):
        return "q"


class _SteppingClient(ExternalLLMClient):
    """An LLM client that shows each reply and waits for the user before the agent goes on."""

    def __init__(self, transport: Any, tools: list[Any]) -> None:
        super().__init__(transport)
        self.turn = 0
        self.running_free = False
        self._shown = 0
        self._tools_for_display = tools

    async def chat_completions(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompletionsResult:
        for message in messages[self._shown :]:
            if message.get("role") == "tool":
                _show_message(message)
        reply = await super().chat_completions(messages, **kwargs)
        self._shown = len(messages) + 1
        self.turn += 1
        if not self.running_free:
            _rule(f"Turn {self.turn}: LLM Response")
            _show_message(reply.message)
            if reply.finish_reason != "tool_calls":
                click.echo(f"Finish reason: {reply.finish_reason}")
            await self._pause([*messages, reply.message])
        return reply

    async def _pause(self, messages: list[dict[str, Any]]) -> None:
        while True:
            answer = (await _ask("[n]ext, [c]ontinue, [m]essages, [t]ools, [q]uit > ")).lower()
            if answer in ("", "n", "next"):
                return
            if answer in ("c", "continue"):
                self.running_free = True
                return
            if answer in ("m", "messages"):
                for i, message in enumerate(messages):
                    _show_message(message, i)
            elif answer in ("t", "tools"):
                _show_tools(self._tools_for_display)
            elif answer in _QUIT:
                raise InterruptedError("Aborted by user")
            else:
                click.echo(STEP_HELP)


class InteractiveSession:
    """Runs rows chosen by the user, one LLM call at a time."""

    def __init__(
        self,
        agent: Any,
        transport: Any,
        rows: list[tuple[int, dict[str, Any]]],
        options: TestOptions,
        start_row: int | None = None,
    ) -> None:
        self.agent = agent
        self.transport = transport
        self.rows = dict(rows)
        self.first, self.last = rows[0][0], rows[-1][0]
        self.options = options
        self.start_row = start_row

    async def run(self) -> int:
        start = self.start_row
        if start is not None:
            if start in self.rows:
                await self.run_row(start)
            else:
                click.echo(f"Invalid row index {start}. Valid range: {self.first}-{self.last}")
        while True:
            click.echo(f"\nSelect a row to test [{self.first}-{self.last}] or 'q' to quit:")
            answer = await _ask("> ")
            if answer.lower() in _QUIT:
                click.echo("Interactive session ended.")
                return 0
            try:
                index = int(answer)
            except ValueError:
                click.echo(f"Please enter a row number between {self.first} and {self.last}, or 'q'.")
                continue
            if index not in self.rows:
                click.echo(f"Row {index} is out of range. Valid range: {self.first}-{self.last}")
                continue
            await self.run_row(index)

    async def run_row(self, index: int) -> None:
        request = dataset_row_to_request(
            self.rows[index],
            index,
            rollout_id=f"test-{index}",
            max_turns=self.options.max_turns,
            completion_params=self.options.completion_params(),
            overrides={"execution_mode": "test", "test_mode": True},
        )
        _rule(f"Row {index}: Initial Messages")
        for message in request.messages:
            _show_message(message)
        tools = self.agent.get_tools(request) or []
        validate_tools(tools)
        if tools:
            _rule("Available Tools")
            _show_tools(tools)
        client = _SteppingClient(self.transport, list(tools))
        client.set_tools(tools)
        started = time.monotonic()
        ctx = RolloutContext(request=request, tools=list(tools), llm=client, _start_time=started)
        try:
            result = await self.agent.run(ctx)
        except InterruptedError:
            click.echo("\nAborted by user")
            return
        except Exception as exc:
            _rule("Result")
            click.echo(f"Status: {click.style('ERROR', fg='red')}")
            click.echo(f"Error: {type(exc).__name__}: {exc}")
            return
        metrics = client.get_metrics()
        _rule("Result")
        color = "green" if result.status == "COMPLETED" else "red"
        click.echo(f"Status: {click.style(result.status, fg=color)}")
        if result.error_message:
            click.echo(f"Error: {result.error_message}")
        click.echo(f"Reward: {result.reward}")
        click.echo(f"Finish reason: {result.finish_reason}")
        click.echo(f"Duration: {time.monotonic() - started:.2f}s")
        click.echo(
            f"Tokens: {metrics.prompt_tokens + metrics.response_tokens} ({metrics.num_llm_calls} LLM calls)"
        )
        if (await _ask("Press 'm' to inspect the final messages, or Enter to continue > ")).lower() in (
            "m",
            "messages",
        ):
            for i, message in enumerate(result.final_messages):
                _show_message(message, i)
