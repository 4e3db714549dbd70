"""How commands print: human text (default), ``--json`` envelopes, or ``--plain`` lines.

Commands hand this module plain data (a list page, a detail record, an operation's outcome, a local
command's result); it renders it for the chosen mode. JSON mode writes exactly one object to stdout on
success and JSON Lines (error and warning envelopes, all with ``schema_version: 1``) to stderr, so scripts
can parse both streams. Local commands (eval, test, the rubric commands, preview, check, validate, init)
keep their human text in JSON mode but send it to stderr (:func:`json_result`), and their result is the
detail envelope ``{"schema_version": 1, "data": ...}`` (:func:`emit_result`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, TextIO, TypeVar

import click

from osmosis_ai._version import __version__

__all__ = [
    "STATE",
    "confirm",
    "emit_detail",
    "emit_list",
    "emit_operation",
    "emit_result",
    "emit_sectioned",
    "error_envelope",
    "is_interactive",
    "json_result",
    "status",
    "stdout_output",
    "warn",
]

SCHEMA_VERSION = 1


@dataclass
class OutputState:
    """Root options of this invocation (reset by ``main`` for every run)."""

    mode: str = "rich"
    platform: str | None = None
    env_file: str | None = None
    # The real stdout while a local command's text is redirected to stderr (JSON mode only).
    result_stream: TextIO | None = None

    def reset(self) -> None:
        self.mode, self.platform, self.env_file = "rich", None, None
        self.result_stream = None


STATE = OutputState()


def _dumps(data: Any) -> str:
    def check(value: Any) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("non-finite number")
        if isinstance(value, dict):
            for item in value.values():
                check(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                check(item)

    check(data)
    return json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)


def is_interactive() -> bool:
    """Prompts are allowed: default output mode and a terminal on stdin."""
    return STATE.mode == "rich" and sys.stdin.isatty()


def status(message: str) -> None:
    """A progress line on stderr (silent in JSON mode)."""
    if STATE.mode != "json":
        click.echo(message, err=True)


def warn(code: str, message: str) -> None:
    """A warning on stderr: an envelope in JSON mode, ``warning: ...`` otherwise."""
    if STATE.mode == "json":
        envelope = {"schema_version": SCHEMA_VERSION, "cli_version": __version__}
        click.echo(_dumps({**envelope, "warning": {"code": code, "message": message}}), err=True)
    else:
        click.echo(f"warning: {message}", err=True)


def error_envelope(command: str, code: str, message: str, details: dict[str, Any] | None) -> str:
    """The one-line JSON error envelope (details that cannot be encoded are replaced by a note)."""
    envelope: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "cli_version": __version__,
        "error": {"code": code, "message": message, "details": details or {}},
    }
    try:
        return _dumps(envelope)
    except (TypeError, ValueError):
        envelope["error"]["details"] = {"details_omitted": "unencodable"}
        return _dumps(envelope)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("\t", " ").replace("\n", " ")


def emit_list(
    items: Sequence[dict[str, Any]],
    columns: Sequence[tuple[str, str]],
    *,
    total_count: int | None = None,
    has_more: bool = False,
    next_offset: int | None = None,
    extra: dict[str, Any] | None = None,
    empty: str = "Nothing found.",
    more_hint: str | None = None,
) -> None:
    """A list result. ``columns`` are ``(key, label)`` pairs shown in text modes."""
    if STATE.mode == "json":
        reserved = {"schema_version", "items", "total_count", "has_more", "next_offset"}
        body = {k: v for k, v in (extra or {}).items() if k not in reserved}
        envelope = {
            "schema_version": SCHEMA_VERSION,
            "items": list(items),
            "total_count": len(items) if total_count is None else total_count,
            "has_more": has_more,
            "next_offset": next_offset,
            **body,
        }
        click.echo(_dumps(envelope))
        return
    rows = [[_cell(item.get(key)) for key, _ in columns] for item in items]
    if STATE.mode == "plain":
        for row in rows:
            click.echo("\t".join(row))
        return
    if not rows:
        click.echo(empty)
        return
    header = [label for _, label in columns]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    click.echo("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for row in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    shown = f"{len(rows)} of {total_count}" if total_count is not None else str(len(rows))
    click.echo(f"\n{shown} shown." + (f" {more_hint}" if has_more and more_hint else ""))


def emit_sectioned(sections: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
    """JSON only: a sectioned list (``{name: {items, total_count, has_more, next_offset}}``)."""
    click.echo(_dumps({"schema_version": SCHEMA_VERSION, **sections, **(extra or {})}))


def emit_detail(data: dict[str, Any], lines: Iterable[tuple[str, Any]], sections: Iterable[str] = ()) -> None:
    """A detail result: ``{"data": ...}`` in JSON mode, ``Label: value`` lines otherwise."""
    if STATE.mode == "json":
        click.echo(_dumps({"schema_version": SCHEMA_VERSION, "data": data}))
        return
    pairs = [(label, value) for label, value in lines if value is not None]
    width = max((len(label) for label, _ in pairs), default=0) + 1
    for label, value in pairs:
        text = _cell(value)
        click.echo(f"{label}: {text}" if STATE.mode == "plain" else f"{(label + ':').ljust(width)} {text}")
    for section in sections:
        click.echo(section)


P = ParamSpec("P")
R = TypeVar("R")


def _output_to_stdout(kwargs: dict[str, Any]) -> bool:
    """``-o -``: the command's results file is standard output."""
    return any(
        str(kwargs.get(name)) == "-" for name in ("output", "output_path") if kwargs.get(name) is not None
    )


def _results_on_stdout(command: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Runs ``command`` with its text on stderr and its results (``-o -``, the JSON envelope) on stdout."""
    from osmosis_ai._files import results_to

    STATE.result_stream = sys.stdout
    try:
        with results_to(sys.stdout), contextlib.redirect_stdout(sys.stderr):
            return command(*args, **kwargs)
    finally:
        STATE.result_stream = None


def json_result(command: Callable[P, R]) -> Callable[P, R]:
    """For a local command's callback: in JSON mode, or with ``-o -``, its text goes to stderr, keeping
    stdout for the one envelope :func:`emit_result` writes or the results file. Apply it below
    ``@click.command``."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        to_stdout = _output_to_stdout(kwargs)
        if to_stdout and STATE.mode == "json":
            raise click.UsageError("-o - and --json both write to standard output: choose one.")
        if STATE.mode != "json" and not to_stdout:
            return command(*args, **kwargs)
        return _results_on_stdout(command, *args, **kwargs)

    return wrapper


def stdout_output(command: Callable[P, R]) -> Callable[P, R]:
    """For a command whose ``-o`` is a page or a file and whose ``--json`` is its own: with ``-o -`` its
    text goes to stderr and the file to stdout."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if not _output_to_stdout(kwargs):
            return command(*args, **kwargs)
        if STATE.mode == "json":
            raise click.UsageError("-o - and --json both write to standard output: choose one.")
        return _results_on_stdout(command, *args, **kwargs)

    return wrapper


def emit_result(data: dict[str, Any]) -> None:
    """A local command's result: the detail envelope on stdout in JSON mode; nothing otherwise (the
    command printed its text already)."""
    if STATE.mode != "json":
        return
    stream = STATE.result_stream or sys.stdout
    click.echo(_dumps({"schema_version": SCHEMA_VERSION, "data": _finite(data)}), file=stream)


def emit_result_streamed(
    head: Mapping[str, Any], key: str, items: Iterable[Any], tail: Callable[[], Mapping[str, Any]]
) -> None:
    """:func:`emit_result` of ``{**head, key: [*items], **tail()}`` (the same text), written a piece at a
    time: ``items`` may stream from a log; ``tail`` is asked for once they are written."""
    if STATE.mode != "json":
        return
    stream = STATE.result_stream or sys.stdout

    def members(values: Mapping[str, Any]) -> list[str]:
        return [f"{json.dumps(name)}: {_dumps(_finite(value))}" for name, value in values.items()]

    opening = ", ".join([*members(head), f"{json.dumps(key)}: ["])
    click.echo(f'{{"schema_version": {SCHEMA_VERSION}, "data": {{{opening}', file=stream, nl=False)
    for index, item in enumerate(items):
        click.echo((", " if index else "") + _dumps(_finite(item)), file=stream, nl=False)
    closing = members(tail())
    click.echo("]" + "".join(", " + member for member in closing) + "}}", file=stream)


def _finite(value: Any) -> Any:
    # Strict JSON has no NaN/Infinity; a result that holds one (a score nobody could compute) says null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def emit_operation(
    operation: str,
    *,
    status_: str = "success",
    message: str | None = None,
    resource: dict[str, Any] | None = None,
    next_steps: Sequence[tuple[str, dict[str, Any]]] = (),
    lines: Iterable[tuple[str, Any]] = (),
) -> None:
    """An operation's outcome. ``next_steps`` are ``(command text, structured step)`` pairs."""
    if STATE.mode == "json":
        envelope: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "status": status_,
            "operation": operation,
        }
        if resource is not None:
            envelope["resource"] = resource
        if message:
            envelope["message"] = message
        if next_steps:
            envelope["next_steps_structured"] = [step for _, step in next_steps]
        click.echo(_dumps(envelope))
        return
    click.echo(message or f"{operation}: {status_}")
    for label, value in lines:
        if value is not None:
            click.echo(f"{label}: {value}" if STATE.mode == "plain" else f"  {label}: {value}")
    if next_steps:
        if STATE.mode == "rich":
            click.echo("\nNext:")
        for text, _ in next_steps:
            click.echo(f"  {text}" if STATE.mode == "rich" else text)


def confirm(prompt: str, *, yes: bool, summary: dict[str, Any] | None = None, default: bool = False) -> bool:
    """``True`` to go on. ``--yes`` skips the question; without a terminal the command must be given ``--yes``.

    Raises:
        InteractiveRequiredError: Not interactive and no ``--yes``.
    """
    if yes:
        return True
    if not is_interactive():
        from osmosis_ai.platform.errors import InteractiveRequiredError

        if STATE.mode == "plain":
            click.echo(f"Confirmation required: {prompt}", err=True)
            for label, value in (summary or {}).items():
                click.echo(f"  {label}: {value}", err=True)
        raise InteractiveRequiredError(
            f"{prompt} Pass --yes to confirm when not interactive.",
            details={"prompt": prompt, "summary": summary or {}},
        )
    return click.confirm(prompt, default=default)


def help_without_subcommand(ctx: click.Context) -> None:
    """A group called alone prints its help and exits 0 (help is what was asked for), for every group."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(0)
