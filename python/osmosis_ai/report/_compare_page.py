"""The comparison page: paired differences, McNemar, flips, per-group deltas, and every matched row with
A's and B's runs side by side (the same front end as the report; its data block holds row pairs)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_ai.report import _charts as charts
from osmosis_ai.report._embed import CompressedLines
from osmosis_ai.report._pairs import Paired, Side
from osmosis_ai.report._run import curve_points

if TYPE_CHECKING:
    from osmosis_ai.report._compare import RunComparison
    from osmosis_ai.report._run import Scan

__all__ = ["PageSinks", "comparison_summary", "figure_specs", "pair_entries", "verdict", "write_compare_page"]


class PageSinks:
    """Where both runs' records go while they are read: two compressed streams under one budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.runs_a = CompressedLines()
        self.runs_b = CompressedLines()
        self.left_out = 0

    def _add(self, lines: CompressedLines, line: list[Any]) -> bool:
        if self.runs_a.estimate() + self.runs_b.estimate() > self.budget:
            self.left_out += 1
            return False
        return lines.add(line)

    def a(self, row: int, outcomes: dict[str, str], run: dict[str, Any]) -> bool:
        return self._add(self.runs_a, [row, outcomes, run])

    def b(self, row: int, outcomes: dict[str, str], run: dict[str, Any]) -> bool:
        return self._add(self.runs_b, [row, outcomes, run])


_VERDICTS = {"b_better": "B better", "a_better": "B worse", "no_clear_difference": "no clear difference"}


def verdict(outcome: str) -> str:
    """The comparison model's verdict in words."""
    return _VERDICTS.get(outcome, outcome)


def _label(statistic: str) -> str:
    return statistic.replace("pass_at_", "pass@").replace("pass_hat_", "pass^")


def comparison_summary(c: RunComparison) -> dict[str, Any]:
    """Every number of the comparison page (from the comparison; nothing computed again here)."""
    differences = [
        {
            "statistic": name,
            "label": _label(name),
            "a": iv["a"],
            "b": iv["b"],
            "estimate": iv["estimate"],
            "low": iv["low"],
            "high": iv["high"],
            "p_holm": iv.get("p_holm"),
            "note": iv.get("note"),
            "verdict": verdict(iv["verdict"]),
        }
        for name, iv in c.differences.items()
    ]
    return {
        "a": c.a,
        "b": c.b,
        "metric": c.metric,
        "matched_by": c.matched_by,
        "rows_a": c.rows_a,
        "rows_b": c.rows_b,
        "rows_matched": c.rows_matched,
        "pass_threshold": c.pass_threshold,
        "mcnemar_p": c.mcnemar_p,
        "interval_note": f"{_level(c):.0%} paired {c.interval_method} intervals over rows; verdicts need the "
        "interval, Holm's adjusted p-value and McNemar's test to agree",
        "verdict": {**c.verdict, "words": verdict(c.verdict.get("outcome", ""))} if c.verdict else None,
        "flips": c.flips,
        "differences": differences,
        "groups": c.groups,
        "warnings": c.warnings,
    }


def _level(c: RunComparison) -> float:
    return next((float(d["level"]) for d in c.differences.values() if d.get("level")), 0.95)


def _side(entry: dict[str, Any] | None, metric: str) -> dict[str, Any] | None:
    if entry is None or metric not in entry["out"]:
        return None
    return {"i": entry["i"], "out": entry["out"][metric], "answer": entry["answer"]}


def pair_entries(paired: Paired, scan_a: Scan, scan_b: Scan, metric: str) -> list[dict[str, Any]]:
    """The comparison's rows as the page receives them: matched pairs first, then rows of one side."""
    from osmosis_ai.report._compare import flip_of

    entries_a = {e["i"]: e for e in scan_a.index.rows(scan_a.dataset.rows)}
    entries_b = {e["i"]: e for e in scan_b.index.rows(scan_b.dataset.rows)}
    out: list[dict[str, Any]] = []

    def add(key: str | None, a: Side | None, b: Side | None, flip: str | None, differs: bool) -> None:
        ea = entries_a.get(a.index) if a else None
        eb = entries_b.get(b.index) if b else None
        first = ea or eb or {}
        out.append(
            {
                "id": len(out),
                "pair": True,
                "key": key or first.get("key"),
                "prompt": first.get("prompt"),
                "truth": first.get("truth"),
                "fields": first.get("fields") or {},
                "a": _side(ea, metric),
                "b": _side(eb, metric),
                "flip": flip,
                "differs": differs,
            }
        )

    for pair in paired.matched:
        same = pair.a.letters() == pair.b.letters() and (
            scan_a.index.answer_digest(pair.a.index) == scan_b.index.answer_digest(pair.b.index)
        )
        add(pair.key, pair.a, pair.b, flip_of(pair), not same)
    for side in paired.only_a:
        add(None, side, None, None, True)
    for side in paired.only_b:
        add(None, None, side, None, True)
    return out


def _diff_point(label: str, d: dict[str, Any]) -> dict[str, Any] | None:
    """A plotted difference; one without an interval (too few rows, no spread) is its point alone, one
    without an estimate (a side with nothing scored) is not plotted."""
    if d["estimate"] is None:
        return None
    low, high = d.get("low"), d.get("high")
    return {
        "statistic": label,
        "estimate": d["estimate"],
        "low": d["estimate"] if low is None else low,
        "high": d["estimate"] if high is None else high,
    }


def figure_specs(c: RunComparison) -> list[tuple[str, dict[str, Any]]]:
    diff_points = [p for k, v in c.differences.items() if (p := _diff_point(_label(k), v))]
    # Each run's pass@k over its own rows, with the result model's intervals.
    curves = [
        {**point, "statistic": f"{run} pass@k"}
        for run, side in (("A", c.sides.get("a")), ("B", c.sides.get("b")))
        if side
        for point in curve_points(side)
        if point["statistic"] == "pass@k"
    ]
    specs = [
        ("c:difference", charts.pass_difference(diff_points, "B - A with paired intervals")),
        ("c:pass-curves", charts.pass_curve(curves, "pass@k of A and B (each over its rows)")),
    ]
    for field, groups in c.groups.items():
        points = [
            p
            for g in groups
            for k, d in g["differences"].items()
            if (p := _diff_point(f"{g['value']}: {_label(k)}", d))
        ]
        if points:
            specs.append((f"d:{field}", charts.pass_difference(points, f"B - A by {field}")))
    return specs


def write_compare_page(
    target: Path, c: RunComparison, paired: Paired, scan_a: Scan, scan_b: Scan, sinks: PageSinks
) -> int:
    """Writes the comparison page; returns its size in bytes."""
    from osmosis_ai.report._page import PageData, write_page_output

    rows = CompressedLines()
    for entry in pair_entries(paired, scan_a, scan_b, c.metric):
        rows.add(entry)
    rows.finish()
    sinks.runs_a.finish()
    sinks.runs_b.finish()
    meta: dict[str, Any] = {"file": f"{os.path.basename(c.a)} vs {os.path.basename(c.b)}"}
    if sinks.left_out:
        meta["left_out_note"] = (
            f"{sinks.left_out:,} runs are not in this page (its data limit, --max-data-mb)"
        )
    specs = figure_specs(c)
    page = PageData(
        title=f"osmosis compare: {c.metric}",
        page="compare",
        summaries=[("page-summary", comparison_summary(c))],
        metas=[("page-meta", meta)],
        figures=list(zip([n for n, _ in specs], charts.to_svg([s for _, s in specs]), strict=True)),
        blocks=[("rows-data", rows), ("runs-data-a", sinks.runs_a), ("runs-data-b", sinks.runs_b)],
    )
    return write_page_output(target, page)
