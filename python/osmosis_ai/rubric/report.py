"""Rubric results: output paths, the console report, and baseline comparison (the results JSON of both
commands is built in :mod:`osmosis_ai.rubric.document`)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from osmosis_ai.errors import RunError
from osmosis_ai.terminal_text import terminal_safe

__all__ = [
    "CACHE_ROOT_ENV",
    "RecordEcho",
    "baseline_comparison",
    "default_cache_root",
    "load_baseline",
    "overall_lines",
    "print_report",
    "report_lines",
    "resolve_output_path",
    "resolve_output_path_0_3",
]

CACHE_ROOT_ENV = "OSMOSIS_EVAL_RESULT_DIR"
COMPARED_KEYS = ("average", "variance", "stdev", "min", "max", "success_count", "failure_count", "total_runs")
COUNT_KEYS = {"success_count", "failure_count", "total_runs", "unscored_count"}
# Characters of report text handed to ``echo`` at once: a call per record cost more than its lines.
_ECHO_BATCH = 64 * 1024


def default_cache_root() -> Path:
    """``~/.cache/osmosis/eval_result`` (resolved at call time; ``OSMOSIS_EVAL_RESULT_DIR`` overrides)."""
    override = os.environ.get(CACHE_ROOT_ENV, "").strip()
    return Path(override) if override else Path.home() / ".cache" / "osmosis" / "eval_result"


def _rubric_folder(rubric_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", rubric_id).strip("_").lower() or "rubric"


def resolve_output_path(output: Path | None, rubric_id: str) -> tuple[Path, str | None]:
    """The results file and, when its name was generated, the identifier in it. Creates directories."""
    identifier = str(int(time.time()))
    if output is None:
        folder = default_cache_root() / _rubric_folder(rubric_id)
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"rubric_eval_result_{identifier}.json", identifier
    if str(output) == "-":  # standard output
        return output, None
    if output.suffix and not output.is_dir():
        output.parent.mkdir(parents=True, exist_ok=True)
        return output, None
    if output.exists() and not output.is_dir():
        raise RunError(
            f"Output path '{output}' exists and is a file; expected a directory (it has no suffix)."
        )
    if output.suffix and output.is_dir():
        raise RunError(f"Output path '{output}' is a directory.")
    output.mkdir(parents=True, exist_ok=True)
    return output / f"rubric_eval_result_{identifier}.json", identifier


def resolve_output_path_0_3(output: str | None) -> tuple[Path, str | None]:
    """``eval rubric -o``'s rule (0.3): a path ending in a separator, or an existing directory, gets
    ``rubric_eval_result.json`` inside it; any other path is the file. Without ``-o`` the file goes where
    ``eval-rubric`` puts it (a results file is always written). Creates the parent directories."""
    if output is None or output == "-":  # "-": standard output
        return resolve_output_path(None if output is None else Path(output), "rubric")
    path = Path(output).expanduser()
    if output.endswith(("/", os.sep)) or path.is_dir():
        path = path / "rubric_eval_result.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path, None


def load_baseline(path: Path) -> dict[str, float]:
    """The statistics of a previous results file (its ``overall_statistics``, or a top-level summary)."""
    if not path.exists():
        raise RunError(f"Baseline path '{path}' does not exist.")
    if path.is_dir():
        raise RunError(f"Baseline path '{path}' is a directory; expected a results JSON file.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunError(f"{path}:{exc.lineno}: baseline is not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise RunError(f"Baseline '{path}' must be a JSON object.")
    stats = data.get("overall_statistics")
    if not isinstance(stats, dict):
        if all(k in data for k in ("average", "variance", "stdev")):
            stats = data
        else:
            raise RunError(
                f"Baseline '{path}' has no 'overall_statistics' object (nor average/variance/stdev)."
            )
    numbers: dict[str, float] = {}
    for key, value in stats.items():
        if isinstance(value, bool):
            continue
        try:
            numbers[key] = float(value)
        except (TypeError, ValueError):
            continue
    if not numbers:
        raise RunError(f"Baseline '{path}' has no numeric statistics.")
    return numbers


def baseline_comparison(source: Path, baseline: dict[str, float], current: dict[str, Any]) -> dict[str, Any]:
    deltas = {k: float(current[k]) - v for k, v in baseline.items() if k in current}
    return {"source_path": str(source), "baseline_statistics": baseline, "delta_statistics": deltas}


def _indent(text: str, first: str, rest: str) -> str:
    """``text`` (a judge's or model's words, an error: untrusted) indented, each line terminal-safe."""
    text = str(text)
    if text.isprintable():  # one line, nothing to escape (every character terminal_safe escapes is not)
        return first + text
    lines = [terminal_safe(line) for line in text.splitlines()] or [""]
    return "\n".join([first + lines[0], *(rest + line for line in lines[1:])])


def _fmt(value: Any, places: int = 4) -> str:
    return "n/a" if value is None else f"{float(value):.{places}f}"


def _summary_lines(stats: dict[str, Any], indent: str) -> list[str]:
    has = stats["success_count"] > 0
    return [
        f"{indent}Summary:",
        f"{indent}  total: {stats['total_runs']}  successes: {stats['success_count']}  "
        f"failures: {stats['failure_count']} (unscored: {stats['unscored_count']})",
        f"{indent}  average: {_fmt(stats['average'] if has else None)}  variance: "
        f"{_fmt(stats['variance'] if has else None, 6)}  stdev: {_fmt(stats['stdev'] if has else None)}  "
        f"min: {_fmt(stats['min'] if has else None)}  max: {_fmt(stats['max'] if has else None)}",
    ]


def report_lines(payload: Mapping[str, Any]) -> Iterator[str]:
    """The per-record console report of a 0.2 payload, line by line (its ``records`` may be a stream)."""
    for row in payload["records"]:
        yield from _record_lines(row)
    yield from overall_lines(payload)


def _record_lines(row: Mapping[str, Any]) -> list[str]:
    lines = [f"[{terminal_safe(row['conversation_id'])}]"]
    for run in row["runs"]:
        lines.append(f"  Run {run['run_index']:02d} [{run['status'].upper()}]")
        if run["status"] == "success":
            score = _fmt(run["score"])
            if run.get("clamped"):
                score += f" (judge said {run['raw_score']}, clamped)"
            lines.append(f"    score: {score}")
            if run.get("preview"):
                lines.append(_indent(run["preview"], "    preview: ", "      "))
            lines.append(
                _indent(run.get("explanation") or "(no explanation provided)", "    explanation: ", "      ")
            )
        else:
            lines.append(_indent(run.get("error") or "unknown error", "    error: ", "      "))
        lines.append(f"    duration: {run['duration_seconds']:.2f}s")
        lines.append("")
    stats = row["statistics"]  # None where not shown (a report's rows: RubricEvalResult.report)
    if stats is not None and (stats["total_runs"] > 1 or stats["failure_count"]):
        lines += _summary_lines(stats, "  ")
        lines.append("")
    return lines


def overall_lines(payload: Mapping[str, Any]) -> list[str]:
    """The report's lines after its records: the overall statistics, warnings, the baseline comparison."""
    lines = ["Overall:", *_summary_lines(payload["overall_statistics"], "  ")[1:]]
    lines += [f"Warning: {terminal_safe(w['message'])}" for w in payload.get("warnings", ())]
    comparison = payload.get("baseline_comparison")
    if comparison:
        lines.append(f"Baseline comparison (source: {comparison['source_path']}):")
        base, current = comparison["baseline_statistics"], payload["overall_statistics"]
        b: float
        c: float
        for key in COMPARED_KEYS:
            if base.get(key) is None or current.get(key) is None:
                continue  # a side with no score has no statistics to compare
            if key in COUNT_KEYS:
                b, c = int(base[key]), int(current[key])
                lines.append(f"  {key:<12} baseline={b} current={c} delta={c - b:+d}")
            else:
                places = 6 if key == "variance" else 4
                b, c = float(base[key]), float(current[key])
                lines.append(
                    f"  {key:<12} baseline={b:.{places}f} current={c:.{places}f} delta={c - b:+.{places}f}"
                )
    return lines


class RecordEcho:
    """Hands the console report's records (0.2 rows) to ``echo`` a batch of records at a time, the text the
    same as a call per line; :meth:`flush` before anything else is echoed.

    Example:
        >>> shown = RecordEcho(print)  # doctest: +SKIP
        >>> for row in rows: shown(row)  # doctest: +SKIP
        >>> shown.flush()  # doctest: +SKIP
    """

    def __init__(self, echo: Callable[[str], Any]) -> None:
        self.echo = echo
        self._texts: list[str] = []
        self._size = 0

    def __call__(self, row: Mapping[str, Any]) -> None:
        self.add_text("\n".join(_record_lines(row)))

    def add_text(self, text: str) -> None:
        """Takes the report text of records laid out already (each record's lines joined by newlines, the
        records too: the core's writer of ``eval rubric -o`` makes it)."""
        self._texts.append(text)
        self._size += len(text)
        if self._size >= _ECHO_BATCH:
            self.flush()

    def flush(self) -> None:
        """Echoes the records not yet shown."""
        if self._texts:
            text = "\n".join(self._texts)
            self._texts, self._size = [], 0
            self.echo(text)


def print_report(payload: Mapping[str, Any], echo: Callable[[str], Any]) -> None:
    """Echoes :func:`report_lines`, records in batches (see :class:`RecordEcho`)."""
    shown = RecordEcho(echo)
    for row in payload["records"]:
        shown(row)
    shown.flush()
    for line in overall_lines(payload):
        echo(line)
