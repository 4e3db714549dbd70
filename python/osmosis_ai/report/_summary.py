"""The page's summary object: every number the report and view pages print, from one place.

:func:`page_summary` is the only function that turns a results file into the numbers of a page. It
returns them in the result model's layout (``models[].functions[]`` with run and row tallies, scored
statistics that are null when nothing was scored, pass@k / pass^k with intervals, durations,
warnings), so the pages render that object and nothing else.

Until the result model's reader is on main, the statistics come from
:func:`osmosis_ai.stats.summarize_results_by_model` and the run and row tallies from the page's own
pass over the records (:meth:`RowIndex.tallies`); switching to the model changes this module only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from osmosis_ai.report._outcomes import ROW_OUTCOMES

__all__ = ["page_ks", "page_summary"]

SCHEMA = "osmosis-page-summary/1"
# Above this many rows x statistics a percentile bootstrap costs seconds; the normal interval over that
# many rows is as good.
_BOOTSTRAP_WORK_LIMIT = 200_000
_MAX_KS = 20


def page_ks(n: int) -> list[int]:
    """Every k up to n, or 20 geometrically spaced ones (1 and n always in) above 20."""
    if n <= _MAX_KS:
        return list(range(1, max(n, 1) + 1))
    step = n ** (1 / (_MAX_KS - 1))
    return sorted({1, n, *(min(n, max(1, round(step**i))) for i in range(_MAX_KS))})


def _declared_n(config: Mapping[str, Any], header: Mapping[str, Any]) -> int | None:
    for value in (config.get("n_runs"), header.get("n_runs"), header.get("number"), config.get("number")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _run_tally(letters: Mapping[str, int], planned: int | None) -> dict[str, Any]:
    finished = sum(letters.values())
    errored_run, errored_function = letters["E"], letters["X"]
    return {
        "planned": planned,
        "finished": finished,
        "missing": None if planned is None else max(planned - finished, 0),
        "scored": letters["P"] + letters["N"],
        "passed": letters["P"],
        "not_passed": letters["N"],
        "unscored": letters["U"],
        "errored": errored_run + errored_function,
        "errored_run": errored_run,
        "errored_function": errored_function,
        "skipped": letters["S"],
    }


def _interval(iv: Any, level: float, method: str) -> dict[str, Any]:
    return {"estimate": iv.estimate, "low": iv.low, "high": iv.high, "level": level, "method": method}


def _function(
    name: str, s: Any, tally: Mapping[str, Any], planned: int | None, level: float, method: str
) -> dict[str, Any]:
    runs = _run_tally(tally["runs"], planned)
    scored = runs["scored"] > 0
    counting = runs["finished"] - runs["skipped"] - runs["errored_function"]
    rows = {key: tally["rows"].get(key, 0) for key in ROW_OUTCOMES}
    return {
        "name": name,
        "runs": runs,
        "rows": rows,
        "graded": runs["scored"],
        "passed": runs["passed"],
        "pass_rate": runs["passed"] / counting if counting else None,
        "pass_threshold": s.pass_threshold,
        "count": s.count,
        # Nothing scored is no mean (never 0).
        **{k: getattr(s, k) if scored else None for k in ("mean", "std", "min", "max", "variance")},
        "ks": list(s.pass_at_k),
        "pass_at_k": {str(k): v for k, v in s.pass_at_k.items()},
        "pass_hat_k": {str(k): v for k, v in s.pass_hat_k.items()},
        "intervals": {k: _interval(iv, level, method) for k, iv in s.intervals.items()} if scored else {},
        "mixed_fraction": next(iter(s.mixed_fraction.values()), None) if s.rows else None,
        "error_messages": list(s.error_messages),
    }


def _warnings(models: list[dict[str, Any]], n: int | None, skipped_tail: bool) -> list[dict[str, Any]]:
    out = []
    for model in models:
        tag = model["model_tag"]
        for f in model["functions"]:
            runs = f["runs"]
            if runs["missing"]:
                out.append(
                    {
                        "code": "incomplete",
                        "model_tag": tag,
                        "function": f["name"],
                        "count": runs["missing"],
                        "message": f"{runs['missing']:,} of {runs['planned']:,} planned runs of {f['name']} are "
                        f"missing ({f['rows']['incomplete']:,} rows have fewer than n={n}); "
                        "pass@k counts them as did not pass",
                    }
                )
            if runs["finished"] and not runs["scored"]:
                out.append(
                    {
                        "code": "nothing_scored",
                        "model_tag": tag,
                        "function": f["name"],
                        "count": 0,
                        "message": f"no run of {f['name']} was scored ({runs['errored']:,} errored, "
                        f"{runs['unscored']:,} unscored): its statistics are n/a",
                    }
                )
            if runs["errored_function"]:
                out.append(
                    {
                        "code": "function_errors",
                        "model_tag": tag,
                        "function": f["name"],
                        "count": runs["errored_function"],
                        "message": f"{f['name']} raised on {runs['errored_function']:,} runs: those runs are "
                        "in none of its statistics",
                    }
                )
        if model["failed_runs"]:
            out.append(
                {
                    "code": "run_errors",
                    "model_tag": tag,
                    "function": None,
                    "count": model["failed_runs"],
                    "message": f"{model['failed_runs']:,} of {model['total_runs']:,} runs errored "
                    "(agent, provider or timeout): no score",
                }
            )
    if skipped_tail:
        out.append(
            {
                "code": "cut_off_line",
                "model_tag": None,
                "function": None,
                "count": 1,
                "message": "the log's last line was cut off mid-write and is left out",
            }
        )
    return out


def page_summary(
    path: str | os.PathLike[str],
    header: Mapping[str, Any],
    tallies: Mapping[str, Mapping[str, Any]],
    *,
    level: float = 0.95,
    seed: int = 0,
    skipped_tail: bool = False,
) -> dict[str, Any]:
    """The numbers of one results file's page, in the result model's layout.

    Args:
        path: The results file.
        header: Its header (log header, or the ``-o`` JSON without its rows).
        tallies: The runs by outcome and rows by category per score key (:meth:`RowIndex.tallies`).
        level: Confidence level of the intervals.
        seed: Bootstrap seed.
        skipped_tail: The reader left out a cut-off last line (a warning says so).
    """
    from osmosis_ai.report._rows import score_key
    from osmosis_ai.stats import summarize_results_by_model

    name = os.fspath(path)
    declared = _declared_n(header.get("config") or {}, header)
    n = declared or max((t["most"] for t in tallies.values()), default=1)
    ks = page_ks(n)
    rows = max((sum(t["rows"].values()) for t in tallies.values()), default=0)
    method = "bootstrap" if rows * (2 * len(ks) + 1) <= _BOOTSTRAP_WORK_LIMIT else "normal"
    summary = summarize_results_by_model(name, ks=ks, n_runs=n, confidence=level, method=method, seed=seed)
    config = summary.config
    models = []
    for tag, m in summary.models.items():
        planned = n * m.rows if declared else None
        empty = {"runs": dict.fromkeys("PNEUXS", 0), "rows": {}, "most": 0}
        functions = [
            _function(fn, s, tallies.get(score_key(tag, fn), empty), planned, level, method)
            for fn, s in m.summaries.items()
        ]
        models.append(
            {
                "model_tag": tag,
                "total_rows": m.rows,
                "total_runs": m.runs,
                "failed_runs": m.failed_runs,
                "eval_error_runs": m.eval_error_runs,
                "total_tokens": m.tokens,
                "run_time_ms": m.duration_ms,
                "functions": functions,
            }
        )
    return {
        "schema": SCHEMA,
        "source": {"path": name, "layout": summary.layout, "kind": summary.kind},
        "config": config,
        "n_runs": declared,
        "pass_threshold": summary.pass_threshold,
        "failed_policy": summary.failed_policy,
        "level": level,
        "models": models,
        "durations": {
            # Wall time and CPU per invocation come with the result model; the runs' own durations
            # added up are not wall time (runs overlap) and are labelled as such.
            "total_duration_ms": None,
            "cpu_ms": None,
            "run_time_ms": sum(m["run_time_ms"] for m in models),
            "invocations": [],
        },
        "warnings": _warnings(models, n, skipped_tail),
    }
