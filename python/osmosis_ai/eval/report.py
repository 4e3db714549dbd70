"""Terminal output of `osmosis eval`: per-run progress lines and the final results table.

The layout follows the established plain-text report (names padded to at least 20, numbers ``%6.3f``, pass@k as
percentages, columns joined by `` | ``) so scripts that scrape it keep working.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_ai.terminal_text import one_line, terminal_safe

__all__ = [
    "format_duration",
    "format_progress_line",
    "format_results_table",
    "format_tokens",
    "format_warnings",
]


def format_duration(ms: float) -> str:
    """``123ms`` under a second, ``1.2s`` under a minute, else ``1m3.4s``.

    Example:
        >>> format_duration(63400)
        '1m3.4s'
    """
    if ms < 1000:
        return f"{ms:.0f}ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.1f}s"


def format_tokens(count: int) -> str:
    """Thousands separated by commas: ``1,234``."""
    return f"{count:,}"


def format_progress_line(done: int, total: int, record: Mapping[str, Any]) -> str:
    """``[3/10] OK (1.2s, 345 tokens) [fn=1.000]`` or ``[4/10] FAILED (...) - <error>``."""
    status = "OK" if record.get("success") else "FAILED"
    tokens = int(record.get("tokens") or 0)
    line = f"[{done}/{total}] {status} ({format_duration(float(record.get('duration_ms') or 0))}, {tokens} tokens)"
    scores = record.get("scores") or {}
    if record.get("success") and scores:
        line += " [" + ", ".join(f"{name}={value:.3f}" for name, value in scores.items()) + "]"
    problems = [record.get("error")] if record.get("error") else []
    problems += [f"{name}: {msg}" for name, msg in (record.get("eval_errors") or {}).items()]
    if problems:
        line += " - " + one_line("; ".join(str(p) for p in problems), 50)
    return line


def _pass_ks(summaries: Mapping[str, Mapping[str, Any]]) -> list[int]:
    ks: set[int] = set()
    for summary in summaries.values():
        ks.update(int(key[8:]) for key in summary if key.startswith("pass_at_") and key[8:].isdigit())
    return sorted(ks)


def _percent(value: Any) -> str:
    return "    n/a" if value is None else f"{100 * float(value):6.1f}%"


def _cell(value: Any) -> str:
    return "   n/a" if value is None else f"{float(value):6.3f}"


def format_results_table(
    summaries: Mapping[str, Mapping[str, Any]], errors: Mapping[str, Mapping[str, Any]] | None = None
) -> list[str]:
    """The score table: one line per eval function, pass@k columns only when they were computed; a
    number that does not exist (nothing scored) is ``n/a``, never 0.

    With ``errors`` (``{name: {"count", "messages", ...}}`` of the functions that raised) an ``Errors``
    column is added and each function's first message is shown under the table (the result model's
    warning says what the errors do to the statistics).
    """
    if not summaries:
        return ["  No eval results."]
    errors = errors or {}
    ks = _pass_ks(summaries)
    width = max(20, *(len(name) for name in summaries))
    header = ["Eval Function".ljust(width), "  Mean", "   Min", "   Max", "   Std"] + [
        f"pass@{k}".rjust(7) for k in ks
    ]
    if errors:
        header.append("Errors")
    lines = [" | ".join(header), "-" * len(" | ".join(header))]
    for name, summary in summaries.items():
        cells = [name.ljust(width)] + [_cell(summary.get(key)) for key in ("mean", "min", "max", "std")]
        for k in ks:
            value = summary.get(f"pass_at_{k}")
            cells.append(_percent(value))
        if errors:
            cells.append(f"{int(errors.get(name, {}).get('count', 0)):6d}")
        lines.append(" | ".join(cells))
    for name, summary in summaries.items():
        observed = summary.get("pass_at_k_observed")
        if observed:
            shown = ", ".join(f"pass@{k} {_percent(v).strip()}" for k, v in observed.items())
            lines.append(f"  {name} over the runs present only: {shown}")
    for name, info in errors.items():
        messages = info.get("messages") or []
        if messages:
            lines.append(f"  {name} raised: {one_line(messages[0], 100)}")
    return lines


def format_warnings(warnings: Sequence[Any]) -> list[str]:
    """One ``Warning: <message>`` line per warning of the result model (worded once, in the core)."""
    return [f"Warning: {terminal_safe(w.message)}" for w in warnings]
