"""What a page shows about one results file, as plain data (no HTML here): one streamed pass over its
records (:func:`scan_file`), then the summary, the page's meta data and its plots (:func:`describe`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from osmosis_ai.report import _charts as charts
from osmosis_ai.report import _figures as figures
from osmosis_ai.report._dataset import DatasetRows, load_dataset_rows
from osmosis_ai.report._rows import RowIndex
from osmosis_ai.report._source import LogSource, open_source
from osmosis_ai.report._summary import page_summary

__all__ = ["RunReport", "Scan", "curve_points", "describe", "scan_file"]

_FIELD_COLUMNS = 12


@dataclass(frozen=True)
class RunReport:
    """One results file, summarised for a page (every field is JSON-ready).

    Attributes:
        path: The file.
        summary: Every number of the page, in the result model's layout (``models[].functions[]``:
            run and row tallies, mean / std / min / max or null, pass@k / pass^k, intervals; durations;
            warnings).
        meta: What else the page shows: the log header's dataset and dates, per-group statistics,
            latency percentiles, judge panels, notes.
        rows_total: Rows in the file.
        runs_total: Run records in the file.
        runs_left_out: Runs the page does not hold (over its data limit); ``osmosis view`` shows them.
        rows_left_out: Rows with at least one run left out.
    """

    path: str
    summary: dict[str, Any]
    meta: dict[str, Any]
    rows_total: int
    runs_total: int
    runs_left_out: int = 0
    rows_left_out: int = 0

    @property
    def row_counts(self) -> dict[str, int]:
        """Rows by outcome (passed every attempt / some / none, errored, incomplete) of the first score."""
        functions = self.summary["models"][0]["functions"] if self.summary["models"] else []
        return dict(functions[0]["rows"]) if functions else {}

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass
class Scan:
    """One pass over a results file: its source, row index and dataset rows."""

    source: LogSource
    index: RowIndex
    dataset: DatasetRows
    runs_total: int


def _config_of(header: dict[str, Any]) -> dict[str, Any]:
    """The header's ``config`` section ({} when it has none or it is not an object)."""
    config = header.get("config")
    return config if isinstance(config, dict) else {}


def _dataset_of(header: dict[str, Any]) -> dict[str, Any] | None:
    """The dataset a file names: a log header's ``dataset``, a rubric ``-o`` JSON's ``data_path``."""
    dataset = header.get("dataset")
    if isinstance(dataset, dict):
        return dataset
    path = header.get("data_path")
    return {"path": path} if isinstance(path, str) and path else None


def models_of(header: dict[str, Any]) -> list[str]:
    """The models a results file ran: the agent's (and a baseline), or a rubric's judge as
    ``provider/model (judge)`` from a rubric log's ``config.model_info`` or a rubric ``-o`` JSON's top level."""
    config = _config_of(header)
    models = [m for m in (config.get("model"), config.get("baseline_model")) if isinstance(m, str) and m]
    info = config.get("model_info")
    judge = info if isinstance(info, dict) else header if "rubric_id" in header else {}
    name = judge.get("model") if isinstance(judge.get("model"), str) else config.get("judge_model")
    if isinstance(name, str) and name and name not in models:
        provider = judge.get("provider")
        models.append(
            f"{provider}/{name} (judge)" if isinstance(provider, str) and provider else f"{name} (judge)"
        )
    return models


def _declared_n(header: dict[str, Any]) -> int | None:
    config = _config_of(header)
    for value in (config.get("n_runs"), header.get("number"), config.get("number")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _names(source: LogSource) -> list[str]:
    header = source.header
    config = _config_of(header)
    names = [n for n in config.get("eval_fns") or [] if isinstance(n, str)]
    rubric = header.get("rubric_id") or config.get("rubric_id")
    if source.layout == "rubric-json":
        names = [rubric or "score"]
    elif isinstance(rubric, str) and rubric not in names:
        names.append(rubric)
    return names


def _threshold(header: dict[str, Any]) -> float:
    config = _config_of(header)
    for value in (config.get("pass_threshold"), header.get("pass_threshold")):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return 1.0


def scan_file(
    path: str | os.PathLike[str],
    *,
    sink: Callable[[int, dict[str, str], dict[str, Any]], bool] | None = None,
    keep_positions: bool = False,
    dataset: str | os.PathLike[str] | None = None,
) -> Scan:
    """Reads a results file once, streaming: the row index, and each run handed to ``sink``.

    Args:
        path: The results file.
        sink: Receives ``(row_index, outcome per score key, record)`` of every run; False when it takes
            no more.
        keep_positions: Remember where each run is in the file (to read it again on demand).
        dataset: The dataset file to read ground truths and fields from (default: the log header's).
    """
    source = open_source(path)
    threshold = _threshold(source.header)
    config = _config_of(source.header)
    judged = source.layout == "rubric-json" or "rubric" in (source.header.get("kind"), config.get("kind"))
    index = RowIndex(_names(source), threshold, _declared_n(source.header), sink, keep_positions, judged)
    runs = 0
    for record in source.records():
        index.add(record)
        runs += 1
    rows = load_dataset_rows(source.header, index.row_keys(), index.indices(), dataset, source.path)
    return Scan(source, index, rows, runs)


def curve_points(function: dict[str, Any]) -> list[dict[str, Any]]:
    """pass@k and pass^k of a function result against k, with its intervals (for a pass curve)."""
    points = []
    for statistic, key, prefix in (("pass@k", "pass_at_k", "pass_at"), ("pass^k", "pass_hat_k", "pass_hat")):
        for k, value in function[key].items():
            points.append(
                {**_point(statistic, value, function["intervals"].get(f"{prefix}_{k}")), "k": int(k)}
            )
    return points


def _point(statistic: str, value: float, interval: dict[str, Any] | None) -> dict[str, Any]:
    """A plotted value with its interval (drawn as the value alone when the data give no bounds)."""
    low, high = (interval or {}).get("low"), (interval or {}).get("high")
    return {
        "statistic": statistic,
        "value": value,
        "low": value if low is None else low,
        "high": value if high is None else high,
    }


def _group_points(groups: list[dict[str, Any]], name: str, last: str) -> list[dict[str, Any]]:
    points = []
    for group in groups:
        stats = group["stats"].get(name) or {}
        if stats.get("mean") is not None:
            points.append(
                {"group": group["value"], **_point("mean", stats["mean"], stats.get("mean_interval"))}
            )
        for k in ("1", last):
            entry = (stats.get("pass_at_k") or {}).get(k)
            if entry and entry.get("value") is not None:
                points.append(
                    {"group": group["value"], **_point(f"pass@{k}", entry["value"], entry.get("interval"))}
                )
    return points


def _specs(
    index: int, summary: dict[str, Any], meta: dict[str, Any], scan: Scan
) -> list[tuple[str, dict[str, Any]]]:
    specs: list[tuple[str, dict[str, Any]]] = []
    primary = summary["models"][0]["functions"] if summary["models"] else []
    for f in primary:
        if f["pass_at_k"]:
            specs.append(
                (
                    f"p{index}:pass-curve:{f['name']}",
                    charts.pass_curve(curve_points(f), f"pass@k and pass^k: {f['name']}"),
                )
            )
    for name, values in scan.index.score_values.items():
        bins = figures.histogram(values)
        if bins:
            specs.append((f"p{index}:score:{name}", charts.bar_histogram(bins, f"scores: {name}", "score")))
    latency = meta["latency"]
    if latency["bins"]:
        specs.append((f"p{index}:latency", charts.latency_chart(latency["bins"], latency["percentiles"])))
    tokens = figures.histogram(scan.index.tokens)
    if tokens:
        specs.append((f"p{index}:tokens", charts.bar_histogram(tokens, "tokens per run", "tokens per run")))
    if summary["durations"]["invocations"]:
        specs.append((f"p{index}:invocations", charts.invocations_chart(summary["durations"]["invocations"])))
    if meta["judge"]:
        specs.append((f"j{index}:health", charts.counts_chart(meta["judge"]["health"], "judge health")))
    if primary:
        last = str(primary[0]["ks"][-1]) if primary[0]["ks"] else "1"
        for field, groups in meta["groups"].items():
            points = _group_points(groups, primary[0]["name"], last)
            if points:
                title = f"{primary[0]['name']} by {field}"
                specs.append((f"g{index}:{field}", charts.group_chart(points, title, "score / rate")))
    return specs


def describe(
    scan: Scan, *, index: int = 0, level: float = 0.95
) -> tuple[dict[str, Any], dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """(summary, page meta, plot specs) of a scanned file; plot names carry the file's ``index``."""
    source, rows = scan.source, scan.index
    summary = page_summary(source.path, level=level, skipped_tail=source.skipped_tail)
    header = source.header
    notes = [scan.dataset.note] if scan.dataset.note else []
    if source.lenient_lines:
        notes.append(
            f"{source.lenient_lines} lines held invalid UTF-8 or lone surrogates; those characters show as \ufffd"
        )
    groups = figures.groups(rows, scan.dataset.rows, summary)
    fields = list(groups) + sorted(
        {f for r in scan.dataset.rows.values() for f in r.get("fields", {})} - set(groups)
    )
    primary = summary["models"][0]["functions"] if summary["models"] else []
    meta = {
        "file": os.path.basename(source.path),
        "path": source.path,
        "dataset": _dataset_of(header),
        "models": models_of(header),
        "dataset_read": scan.dataset.path if scan.dataset.rows else None,
        "created_at": header.get("created_at"),
        "osmosis_version": header.get("osmosis_version"),
        "score_keys": [key for _, _, key in rows.keys],
        "fields": fields[:_FIELD_COLUMNS],
        "groups": groups,
        "latency": figures.latency(rows.latency_ms),
        "judge": figures.judge_panels(
            rows,
            header,
            summary["source"]["kind"],
            primary[0]["name"] if primary else None,
            scan.dataset.rows,
        ),
        "notes": notes,
    }
    return summary, meta, _specs(index, summary, meta, scan)
