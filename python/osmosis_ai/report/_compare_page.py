"""The comparison page: paired differences, McNemar, flips, and the rows that changed most."""

from __future__ import annotations

import html
from typing import Any

from osmosis_ai.report import _charts as charts
from osmosis_ai.report._compare import RunComparison
from osmosis_ai.report._page import document, figures, kv_table, rows_section

__all__ = ["render_compare_page"]

CHANGED_COLUMNS = ["row_index", "status", "pass_rate_a", "pass_rate_b", "change", "row_key"]


def _label(statistic: str) -> str:
    return statistic.replace("pass_at_", "pass@").replace("pass_hat_", "pass^")


def _differences_table(c: RunComparison) -> str:
    head = "<tr><th>statistic</th><th>A</th><th>B</th><th>B - A</th><th>interval</th><th>verdict</th></tr>"
    body = []
    for name, iv in c.differences.items():
        real = iv["low"] is not None and (iv["low"] > 0 or iv["high"] < 0)
        verdict = ("B better" if iv["estimate"] > 0 else "B worse") if real else "no clear difference"
        css = "good" if real and iv["estimate"] > 0 else "bad" if real else ""
        cells = [
            _label(name),
            f"{c.a_values.get(name, float('nan')):.4f}",
            f"{c.b_values.get(name, float('nan')):.4f}",
            f"{iv['estimate']:+.4f}",
            "n/a" if iv["low"] is None else f"[{iv['low']:+.4f}, {iv['high']:+.4f}]",
        ]
        body.append(
            "<tr>"
            + "".join(f"<td class='num'>{html.escape(x)}</td>" for x in cells)
            + f"<td class='{css}'>{verdict}</td></tr>"
        )
    return f"<table>{head}{''.join(body)}</table>"


def _curves(c: RunComparison) -> list[dict[str, Any]]:
    points = []
    for run, values in (("A", c.a_values), ("B", c.b_values)):
        for name, value in values.items():
            if name.startswith("pass_at_"):
                k = int(name.rsplit("_", 1)[1])
                points.append(
                    {"statistic": f"{run} pass@k", "k": k, "value": value, "low": value, "high": value}
                )
    return points


def render_compare_page(c: RunComparison) -> str:
    """The whole comparison page."""
    f = c.flips
    pairs = [
        ("A", c.a),
        ("B", c.b),
        ("metric", c.metric),
        ("rows matched", f"{c.rows_matched} (A has {c.rows_a}, B has {c.rows_b}; matched by {c.matched_by})"),
        ("pass threshold", c.pass_threshold),
        ("intervals", f"95% paired {c.interval_method} over rows"),
        ("McNemar exact p (first attempts)", f"{c.mcnemar_p:.4g}"),
    ]
    flips = kv_table(
        [
            ("A passed, B failed", f["a_only"]),
            ("A failed, B passed", f["b_only"]),
            ("both passed", f["both"]),
            ("both failed", f["neither"]),
        ]
    )
    diff_points = [
        {"statistic": _label(k), "estimate": v["estimate"], "low": v["low"], "high": v["high"]}
        for k, v in c.differences.items()
        if v["low"] is not None
    ]
    specs = [
        ("difference", charts.pass_difference(diff_points, "B - A with paired intervals")),
        ("pass-curves", charts.pass_curve(_curves(c), "pass@k of A and B")),
    ]
    rows = [{**r, "mean_score": None} for r in c.changed_rows]
    body = (
        f"<section class='result'><h1>Comparison: {html.escape(c.metric)}</h1>{kv_table(pairs)}"
        f"<h2>Differences (B - A)</h2>{_differences_table(c)}<h2>Flips on the first attempt</h2>{flips}"
        f"<h2>Plots</h2>{figures(specs)}</section>"
        + rows_section(
            "changed",
            rows,
            len(rows),
            "Rows that changed most",
            columns=CHANGED_COLUMNS,
            statuses=("improved", "regressed"),
        )
    )
    return document(f"osmosis compare: {c.metric}", body)
