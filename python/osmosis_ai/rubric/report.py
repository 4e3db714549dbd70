"""Rubric results: output paths, the results JSON of ``eval-rubric`` (0.2's layout) and ``eval rubric``
(0.3's), both built from one payload so their numbers are the same, the console report, and baseline
comparison."""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from osmosis_ai._files import write_json_atomic
from osmosis_ai.errors import RunError
from osmosis_ai.rubric.engine import calculate_statistics
from osmosis_ai.rubric.records import RubricRecord
from osmosis_ai.rubric.session import RubricSession

__all__ = [
    "CACHE_ROOT_ENV",
    "baseline_comparison",
    "build_payload",
    "default_cache_root",
    "layout_0_3",
    "load_baseline",
    "print_report",
    "resolve_output_path",
    "resolve_output_path_0_3",
    "write_json",
]

CACHE_ROOT_ENV = "OSMOSIS_EVAL_RESULT_DIR"
COMPARED_KEYS = ("average", "variance", "stdev", "min", "max", "success_count", "failure_count", "total_runs")
COUNT_KEYS = {"success_count", "failure_count", "total_runs", "unscored_count"}


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


def _established(stats: Any, runs: Any) -> dict[str, Any]:
    """The established statistics keys from the result model: ``stats`` has mean / variance / std /
    min / max (a function, or one row's statistics), ``runs`` its run counts."""
    return {
        "average": stats.mean,
        "variance": stats.variance,
        "stdev": stats.std,
        "min": stats.min,
        "max": stats.max,
        "total_runs": runs.finished,
        "success_count": runs.scored,
        "failure_count": runs.finished - runs.scored,
        "unscored_count": runs.unscored,
    }


def _model_function(state: RubricSession, rubric_id: str) -> tuple[Any, list[Any]]:
    """The rubric's function in the log's result model (with each record's statistics), and the
    warnings; ``(None, [])`` without a log."""
    from osmosis_ai.results import read_results

    if state.log_path is None or not Path(state.log_path).is_file():
        return None, []
    result = read_results(state.log_path, failed="exclude", per_row=True)
    function = (
        next((f for f in result.model().functions if f.name == rubric_id), None) if result.models else None
    )
    return function, list(result.warnings)


def _record_rows(records: list[RubricRecord], state: RubricSession, function: Any) -> list[dict[str, Any]]:
    per_row = {r.row: r for r in (function.per_row or ())} if function is not None else {}
    rows = []
    for index, record in enumerate(records):
        # The established document numbers records and runs from 1; the log from 0.
        runs = [{**run, "run_index": int(run["run_index"]) + 1} for run in state.runs_of(index)]
        row = per_row.get(index)
        rows.append(
            {
                "id": record.record_id,
                "record_index": index + 1,
                "conversation_id": record.label,
                "input_record": record.data,
                "statistics": _established(row, row) if row is not None else _fallback_statistics(runs),
                "runs": runs,
            }
        )
    return rows


def _fallback_statistics(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Statistics of runs the log does not hold (a payload built without a log, or a record not yet
    judged: then there are no runs and every statistic is None)."""
    scores = [r["score"] for r in runs if r["status"] == "success" and r["score"] is not None]
    return calculate_statistics(scores, len(runs), sum(r["status"] == "unscored" for r in runs))


def build_payload(
    *,
    rubric_id: str,
    source_label: str,
    model_info: dict[str, Any],
    number: int,
    config_path: Path | None,
    data_path: Path,
    records: list[RubricRecord],
    state: RubricSession,
    identifier: str | None,
    concurrency: int,
    baseline: dict[str, Any] | None = None,
    rubric: str | None = None,
) -> dict[str, Any]:
    """The results document of both rubric commands: the established keys in their order, then ours."""
    function, warnings = _model_function(state, rubric_id)
    rows = _record_rows(records, state, function)
    all_runs = [run for row in rows for run in row["runs"]]
    overall = (
        _established(function, function.runs) if function is not None else _fallback_statistics(all_runs)
    )
    payload: dict[str, Any] = {
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
        "rubric_id": rubric_id,
        "rubric_source": source_label,
        "provider": model_info.get("provider") or "<unknown>",
        "model": model_info.get("model") or "<unspecified>",
        "number": number,
        "config_path": str(config_path) if config_path else None,
        "data_path": str(data_path),
        "overall_statistics": overall,
        "records": rows,
    }
    if identifier is not None:
        payload["output_identifier"] = identifier
    if baseline is not None:
        payload["baseline_comparison"] = baseline
    if rubric is not None:
        payload["rubric"] = rubric
    payload["judge_health"] = state.health.as_json()
    payload["concurrency"] = concurrency
    payload["planned_runs"] = state.total
    payload["completed_runs"] = len(all_runs)
    payload["interrupted"] = state.interrupted
    payload["warnings"] = [{"code": w.code, "message": w.message} for w in warnings]
    if state.session_error:
        payload["session_error"] = state.session_error
    return payload


# Our keys after 0.3's: what a reader needs to know the run was cut short or the judge struggled.
_EXTRA_KEYS = (
    "rubric_id", "output_identifier", "judge_health", "concurrency", "planned_runs", "completed_runs",
    "interrupted", "session_error", "warnings",
)  # fmt: skip


def _record_0_3(row: dict[str, Any]) -> dict[str, Any]:
    runs = row["runs"]
    scored = [r for r in runs if r["status"] == "success" and r["score"] is not None]
    return {
        "index": row["record_index"],
        "label": row["conversation_id"],
        "scores": [r["score"] for r in scored],
        "explanations": [r.get("explanation") or "" for r in scored],
        "errors": [
            r.get("error") or r.get("unscored_reason") or r["status"] for r in runs if r not in scored
        ],
        "statistics": row["statistics"],
        # Ours, after 0.3's keys: each run as the 0.2 layout keeps it (report, compare and
        # summarize_results read a rubric document's runs by record_index).
        "record_index": row["record_index"],
        "runs": runs,
    }


def layout_0_3(payload: dict[str, Any], *, model: str, rubric: str) -> dict[str, Any]:
    """The ``eval rubric -o`` document: 0.3's keys in 0.3's order, then ours, from a :func:`build_payload`
    payload (the statistics are the same objects, so both layouts always agree).

    0.3's layout is ``{generated_at, model, rubric, data_path, number, overall_statistics, records: [{index,
    label, scores, explanations, errors, statistics}]}``; statistics of a record without a score are null,
    never 0.0.

    Example:
        >>> doc = layout_0_3(payload, model="openai/gpt-4o-mini", rubric="Be kind.")  # doctest: +SKIP
        >>> list(doc)[:3]  # doctest: +SKIP
        ['generated_at', 'model', 'rubric']
    """
    document: dict[str, Any] = {
        "generated_at": payload["generated_at"],
        "model": model,
        "rubric": rubric,
        "data_path": payload["data_path"],
        "number": payload["number"],
        "overall_statistics": payload["overall_statistics"],
        "records": [_record_0_3(row) for row in payload["records"]],
    }
    document.update({key: payload[key] for key in _EXTRA_KEYS if key in payload})
    return document


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Writes by the ``-o`` rule of :mod:`osmosis_ai._files` (never half a file; ``-`` is standard output)."""
    write_json_atomic(path, payload, ensure_ascii=False)


def _indent(text: str, first: str, rest: str) -> str:
    lines = str(text).splitlines() or [""]
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


def report_lines(payload: dict[str, Any]) -> list[str]:
    """The per-record console report of a results document."""
    lines: list[str] = []
    for row in payload["records"]:
        lines.append(f"[{row['conversation_id']}]")
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
                    _indent(
                        run.get("explanation") or "(no explanation provided)", "    explanation: ", "      "
                    )
                )
            else:
                lines.append(_indent(run.get("error") or "unknown error", "    error: ", "      "))
            lines.append(f"    duration: {run['duration_seconds']:.2f}s")
            lines.append("")
        stats = row["statistics"]
        if stats["total_runs"] > 1 or stats["failure_count"]:
            lines += _summary_lines(stats, "  ")
            lines.append("")
    lines += ["Overall:", *_summary_lines(payload["overall_statistics"], "  ")[1:]]
    lines += [f"Warning: {w['message']}" for w in payload.get("warnings", ())]
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


def print_report(payload: dict[str, Any], echo: Any) -> None:
    for line in report_lines(payload):
        echo(line)
