"""The interactive test console (``osmosis test --interactive``): one row at a time, a pause after every LLM call.

At each pause: Enter or ``n`` takes the next step, ``c`` runs the row to the end, ``m`` lists the messages so
far, ``t`` the tools, ``q`` aborts the row, ``?`` shows this list. Between rows a row number is asked for;
``q``, end of input or Ctrl+C ends the session.

What the session shows and asks goes through a :class:`StepConsole`: the CLI passes one that writes with
click (colour on a terminal); library users get :class:`TerminalConsole` (``print`` and ``input``).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Protocol

from osmosis_ai.eval.llm_client import ExternalLLMClient
from osmosis_ai.eval.options import TestOptions
from osmosis_ai.rollout.agent_loop import CompletionsResult, RolloutContext, checked_result
from osmosis_ai.rollout.requests import dataset_row_to_request
from osmosis_ai.rollout.tools import validate_tools
from osmosis_ai.terminal_text import terminal_safe

__all__ = ["InteractiveSession", "StepConsole", "TerminalConsole"]

STEP_HELP = (
    "Commands: Enter/n = next step, c = continue to the end, m = messages, t = tools, q = quit row, ? = help"
)
_QUIT = {"q", "quit", "exit"}


class StepConsole(Protocol):
    """Where the session writes and how it colours a word (``fg`` is a colour name: green, red)."""

    def echo(self, text: str = "") -> None:
        """Writes one line."""
        ...

    def style(self, text: str, fg: str) -> str:
        """``text`` coloured ``fg`` where the output allows it."""
        ...


class TerminalConsole:
    """The console of library users: ``print`` to stdout, no colour."""

    def echo(self, text: str = "") -> None:
        """Writes one line to stdout."""
        print(text)

    def style(self, text: str, fg: str) -> str:
        """``text`` unchanged."""
        return text


def _rule(console: StepConsole, title: str) -> None:
    console.echo(f"\n{'=' * 20} {title} {'=' * 20}")


def _label(message: dict[str, Any]) -> str:
    role = message.get("role", "?")
    if role == "tool":
        return f"Tool ({message.get('name') or message.get('tool_call_id', '?')})"
    return f"[{str(role).capitalize()}]"


def _show_message(console: StepConsole, message: dict[str, Any], index: int | None = None) -> None:
    # Every text of a message (the model's, the dataset's, a tool's) is untrusted on a terminal.
    prefix = f"{index}. " if index is not None else ""
    console.echo(terminal_safe(f"{prefix}{_label(message)}"))
    content = message.get("content")
    if content:
        console.echo(terminal_safe(f"  {content}"))
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        try:
            args = json.dumps(json.loads(function.get("arguments") or "{}"), indent=2)
        except (TypeError, ValueError):
            args = str(function.get("arguments"))
        console.echo(terminal_safe(f"  • {function.get('name', '?')}({args})"))


def _show_tools(console: StepConsole, tools: list[Any]) -> None:
    for tool in tools:
        data = tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else dict(tool)
        function = data.get("function", {})
        params = ", ".join((function.get("parameters") or {}).get("properties", {}))
        console.echo(
            terminal_safe(f"  - {function.get('name')}: {function.get('description', '')} ({params})")
        )


async def _ask(prompt: str) -> str:
    try:
        return (await asyncio.to_thread(input, prompt)).strip()
    except (EOFError, KeyboardInterrupt):
        return "q"


class _SteppingClient(ExternalLLMClient):
    """An LLM client that shows each reply and waits for the user before the agent goes on."""

    def __init__(self, transport: Any, tools: list[Any], console: StepConsole) -> None:
        super().__init__(transport)
        self.console = console
        self.turn = 0
        self.running_free = False
        self._shown = 0
        self._tools_for_display = tools

    async def chat_completions(self, messages: list[dict[str, Any]], **kwargs: Any) -> CompletionsResult:
        for message in messages[self._shown :]:
            if message.get("role") == "tool":
                _show_message(self.console, message)
        reply = await super().chat_completions(messages, **kwargs)
        self._shown = len(messages) + 1
        self.turn += 1
        if not self.running_free:
            _rule(self.console, f"Turn {self.turn}: LLM Response")
            _show_message(self.console, reply.message)
            if reply.finish_reason != "tool_calls":
                self.console.echo(f"Finish reason: {reply.finish_reason}")
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
                    _show_message(self.console, message, i)
            elif answer in ("t", "tools"):
                _show_tools(self.console, self._tools_for_display)
            elif answer in _QUIT:
                raise InterruptedError("Aborted by user")
            else:
                self.console.echo(STEP_HELP)


class InteractiveSession:
    """Runs rows chosen by the user, one LLM call at a time (``console``: where it writes; default stdout).

    Example:
        >>> code = await InteractiveSession(agent, transport, rows, TestOptions(...)).run()  # doctest: +SKIP
    """

    def __init__(
        self,
        agent: Any,
        transport: Any,
        rows: list[tuple[int, dict[str, Any]]],
        options: TestOptions,
        start_row: int | None = None,
        console: StepConsole | None = None,
    ) -> None:
        self.console: StepConsole = console or TerminalConsole()
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
                self.console.echo(f"Invalid row index {start}. Valid range: {self.first}-{self.last}")
        while True:
            self.console.echo(f"\nSelect a row to test [{self.first}-{self.last}] or 'q' to quit:")
            answer = await _ask("> ")
            if answer.lower() in _QUIT:
                self.console.echo("Interactive session ended.")
                return 0
            try:
                index = int(answer)
            except ValueError:
                self.console.echo(f"Please enter a row number between {self.first} and {self.last}, or 'q'.")
                continue
            if index not in self.rows:
                self.console.echo(f"Row {index} is out of range. Valid range: {self.first}-{self.last}")
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
        _rule(self.console, f"Row {index}: Initial Messages")
        for message in request.messages:
            _show_message(self.console, message)
        tools = self.agent.get_tools(request) or []
        validate_tools(tools)
        if tools:
            _rule(self.console, "Available Tools")
            _show_tools(self.console, tools)
        client = _SteppingClient(self.transport, list(tools), self.console)
        client.set_tools(tools)
        started = time.monotonic()
        ctx = RolloutContext(request=request, tools=list(tools), llm=client, _start_time=started)
        try:
            result = checked_result(await self.agent.run(ctx))
        except InterruptedError:
            self.console.echo("\nAborted by user")
            return
        except Exception as exc:
            _rule(self.console, "Result")
            self.console.echo(f"Status: {self.console.style('ERROR', fg='red')}")
            self.console.echo(terminal_safe(f"Error: {type(exc).__name__}: {exc}"))
            return
        metrics = client.get_metrics()
        _rule(self.console, "Result")
        color = "green" if result.status == "COMPLETED" else "red"
        self.console.echo(f"Status: {self.console.style(result.status, fg=color)}")
        if result.error_message:
            self.console.echo(terminal_safe(f"Error: {result.error_message}"))
        self.console.echo(f"Reward: {result.reward}")
        self.console.echo(f"Finish reason: {result.finish_reason}")
        self.console.echo(f"Duration: {time.monotonic() - started:.2f}s")
        self.console.echo(
            f"Tokens: {metrics.prompt_tokens + metrics.response_tokens} ({metrics.num_llm_calls} LLM calls)"
        )
        if (await _ask("Press 'm' to inspect the final messages, or Enter to continue > ")).lower() in (
            "m",
            "messages",
        ):
            for i, message in enumerate(result.final_messages):
                _show_message(self.console, message, i)
