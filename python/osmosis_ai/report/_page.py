"""The report page: one self-contained HTML file (inline SVG plots, inline style and script)."""

from __future__ import annotations

import html
import json
from typing import Any

from osmosis_ai.report import _charts as charts
from osmosis_ai.report._assets import SCRIPT, STYLE
from osmosis_ai.report._run import RunReport

__all__ = ["document", "embedded_json", "figures", "kv_table", "render_run_page", "rows_section"]

ROW_COLUMNS = ["row_index", "status", "pass_rate", "c", "n", "mean_score", "row_key"]


def embedded_json(element_id: str, data: Any) -> str:
    """Data for the script; ``</`` is escaped so no text can close the script element."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def document(title: str, body: str) -> str:
    """A complete page; it loads nothing from anywhere."""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>{body}"
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def kv_table(pairs: list[tuple[str, Any]]) -> str:
    """A two-column table of the pairs whose value is known."""
    cells = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(_text(v))}</td></tr>"
        for k, v in pairs
        if v not in (None, "", [])
    )
    return f"<table class='kv'>{cells}</table>"


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, default=str)
    return str(value)


def figures(specs: list[tuple[str, dict[str, Any]]]) -> str:
    """Each ``(name, spec)`` rendered to an inline SVG inside a figure the tests can find by name."""
    svgs = charts.to_svg([spec for _, spec in specs])
    return (
        "<div class='plots'>"
        + "".join(
            f"<figure class='plot' data-plot='{html.escape(name)}'>{svg}</figure>"
            for (name, _), svg in zip(specs, svgs, strict=True)
        )
        + "</div>"
    )


def rows_section(
    section_id: str,
    rows: list[dict[str, Any]],
    total: int,
    title: str,
    *,
    columns: list[str] = ROW_COLUMNS,
    statuses: tuple[str, ...] = ("passed", "failed", "errored"),
) -> str:
    """The searchable, sortable row table; clicking a row shows its runs."""
    note = ""
    if len(rows) < total:
        note = (
            f"<p class='note'>This page embeds {len(rows)} of {total} rows (errored and failed rows first); the plots "
            "and statistics above cover every row.</p>"
        )
    head = "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in columns)
    listed = [{k: r.get(k) for k in (*columns, "runs")} for r in rows]
    options = "".join(f"<option value='{s}'>{s}</option>" for s in statuses)
    return (
        f"<section id='{section_id}'><h2>{html.escape(title)}</h2>{note}"
        "<div class='controls'><input class='search' type='search' placeholder='search rows and runs'>"
        f"<select class='filter'><option value='all'>all</option>{options}</select>"
        "<span class='shown'></span></div>"
        f"<table class='rows' data-source='{section_id}-data' data-columns='{html.escape(json.dumps(columns))}'>"
        f"<thead><tr>{head}</tr></thead><tbody></tbody></table>"
        f"{embedded_json(section_id + '-data', listed)}</section>"
    )


def _curve_points(summary: dict[str, Any]) -> list[dict[str, Any]]:
    points = []
    for statistic, key, prefix in (("pass@k", "pass_at_k", "pass_at"), ("pass^k", "pass_hat_k", "pass_hat")):
        for k, value in summary[key].items():
            iv = summary["intervals"].get(f"{prefix}_{k}") or {}
            points.append(
                {
                    "statistic": statistic,
                    "k": int(k),
                    "value": value,
                    "low": iv.get("low", value),
                    "high": iv.get("high", value),
                }
            )
    return points


def _metrics_table(report: RunReport) -> str:
    head = "<tr><th>model</th><th>score</th><th>mean</th><th>pass@1</th><th>pass@n</th><th>mixed rows</th><th>errors</th></tr>"
    body = []
    for tag, metrics in report.metrics.items():
        for name, s in metrics.items():
            ks = list(s["pass_at_k"])
            mixed = next(iter(s["mixed_fraction"].values()), None)
            cells = [
                tag,
                name,
                s["mean"],
                s["pass_at_k"].get("1"),
                s["pass_at_k"].get(ks[-1]) if ks else None,
                mixed,
                s["errors"],
            ]
            body.append(
                "<tr>"
                + "".join(f"<td>{html.escape(_text(c) if c is not None else '-')}</td>" for c in cells)
                + "</tr>"
            )
    return f"<table>{head}{''.join(body)}</table>"


def _run_section(index: int, report: RunReport) -> str:
    h = report.header
    dataset = h.get("dataset") or {}
    pairs = [
        ("file", h["file"]),
        ("kind", h["kind"]),
        ("command / agent", h.get("command")),
        ("model(s)", h.get("models")),
        ("dataset", dataset.get("path") if isinstance(dataset, dict) else dataset),
        ("dataset fingerprint", dataset.get("fingerprint") if isinstance(dataset, dict) else None),
        ("created", h.get("created_at")),
        ("attempts per row (n)", h["n"]),
        ("rows", report.rows_total),
        ("runs", h["runs"]),
        ("failed runs", h["failed_runs"]),
        ("pass threshold", h["pass_threshold"]),
        ("total run time (s)", h["duration_ms"] / 1000.0 if h.get("duration_ms") else None),
        ("tokens", h.get("tokens")),
        ("cost (USD)", h.get("cost_usd")),
        ("osmosis version", h.get("osmosis_version")),
    ]
    specs: list[tuple[str, dict[str, Any]]] = []
    primary = next(iter(report.metrics.values()), {})
    for name, bins in report.histograms.items():
        if not bins:
            continue
        if name.startswith("score:"):
            specs.append((name, charts.bar_histogram(bins, f"score distribution: {name[6:]}", "score")))
        else:
            unit = "latency (ms)" if name == "latency_ms" else "tokens per run"
            specs.append((name, charts.bar_histogram(bins, unit, unit)))
    for name, summary in primary.items():
        if summary["pass_at_k"]:
            specs.append(
                (
                    f"pass-curve:{name}",
                    charts.pass_curve(_curve_points(summary), f"pass@k and pass^k: {name}"),
                )
            )
    if report.row_pass_rates:
        title = f"per-row pass rate (sorted): {report.primary_metric}"
        specs.append(("row-pass-rate", charts.sorted_rates(report.row_pass_rates, title)))
    if report.judge is not None:
        specs.append(("judge-health", charts.judge_chart(report.judge, "judge health")))
    counts = report.row_counts
    summary_line = (
        f"<p>Rows: {counts['passed']} passed every attempt, {counts['failed']} failed at least one, "
        f"{counts['errored']} had an error. Intervals: 95% {report.interval_method} over rows.</p>"
    )
    return (
        f"<section class='result'><h1>{html.escape(h['file'])}</h1>{kv_table(pairs)}<h2>Scores</h2>"
        f"{_metrics_table(report)}{summary_line}<h2>Plots</h2>{figures(specs)}</section>"
        + rows_section(f"rows-{index}", report.rows, report.rows_total, f"Rows of {h['file']}")
    )


def render_run_page(reports: list[RunReport]) -> str:
    """The whole page for one or more results files."""
    title = "osmosis report: " + ", ".join(r.header["file"] for r in reports)
    return document(title, "".join(_run_section(i, r) for i, r in enumerate(reports)))
