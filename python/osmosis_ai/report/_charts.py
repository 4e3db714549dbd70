"""Vega-Lite charts (built with altair) rendered to inline SVG by vl-convert: no JavaScript, no network.

Each function takes the plain data of a report and returns a Vega-Lite spec (a dict); :func:`to_svg`
renders specs. Both libraries are imported on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "bar_histogram",
    "judge_chart",
    "pass_curve",
    "pass_difference",
    "sorted_rates",
    "to_svg",
]

_WIDTH, _HEIGHT = 420, 220


def _alt() -> Any:
    try:
        import altair as alt
    except ImportError as exc:
        raise ImportError('reports need altair and vl-convert: pip install "osmosis-ai[report]"') from exc
    return alt


def _spec(chart: Any) -> dict[str, Any]:
    # Data is inlined in the spec; the chart renders without any URL.
    return chart.properties(width=_WIDTH, height=_HEIGHT).to_dict()


def bar_histogram(bins: list[dict[str, Any]], title: str, unit: str) -> dict[str, Any]:
    """A histogram from pre-computed bins (``low``, ``high``, ``count``)."""
    alt = _alt()
    data = alt.Data(values=bins)
    chart = (
        alt.Chart(data, title=title)
        .mark_bar(color="#4c78a8")
        .encode(
            x=alt.X("low:Q", bin="binned", title=unit),
            x2="high:Q",
            y=alt.Y("count:Q", title="count"),
            tooltip=["low:Q", "high:Q", "count:Q"],
        )
    )
    return _spec(chart)


def pass_curve(points: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """pass@k and pass^k against k with their confidence bands (``k``, ``statistic``, ``value``, ``low``, ``high``)."""
    alt = _alt()
    base = alt.Chart(alt.Data(values=points), title=title).encode(
        x=alt.X("k:Q", title="k", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("statistic:N", title=None),
    )
    band = base.mark_area(opacity=0.2).encode(
        y=alt.Y("low:Q", title="rate", scale=alt.Scale(domain=[0, 1])), y2="high:Q"
    )
    line = base.mark_line(point=True).encode(
        y="value:Q", tooltip=["statistic:N", "k:Q", "value:Q", "low:Q", "high:Q"]
    )
    return _spec(band + line)


def sorted_rates(points: list[dict[str, float]], title: str) -> dict[str, Any]:
    """Per-row pass rate, rows sorted from worst to best (``rank`` in [0, 1], ``pass_rate``)."""
    alt = _alt()
    chart = (
        alt.Chart(alt.Data(values=points), title=title)
        .mark_area(color="#54a24b", line=True, opacity=0.5)
        .encode(
            x=alt.X("rank:Q", title="rows, sorted by pass rate (fraction)"),
            y=alt.Y("pass_rate:Q", title="pass rate", scale=alt.Scale(domain=[0, 1])),
        )
    )
    return _spec(chart)


def judge_chart(health: dict[str, int], title: str) -> dict[str, Any]:
    """Judge health counters as bars."""
    alt = _alt()
    values = [{"event": k.replace("_", " "), "count": v} for k, v in health.items()]
    chart = (
        alt.Chart(alt.Data(values=values), title=title)
        .mark_bar(color="#e45756")
        .encode(x=alt.X("event:N", title=None, sort=None), y=alt.Y("count:Q"), tooltip=["event:N", "count:Q"])
    )
    return _spec(chart)


def pass_difference(points: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """B - A per statistic with its paired interval (``statistic``, ``estimate``, ``low``, ``high``)."""
    alt = _alt()
    base = alt.Chart(alt.Data(values=points), title=title).encode(
        y=alt.Y("statistic:N", title=None, sort=None)
    )
    bars = base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title="difference (B - A)"), x2="high:Q")
    dots = base.mark_point(filled=True, size=60).encode(
        x="estimate:Q", tooltip=["statistic:N", "estimate:Q", "low:Q", "high:Q"]
    )
    zero = alt.Chart(alt.Data(values=[{"x": 0}])).mark_rule(color="#888", strokeDash=[4, 4]).encode(x="x:Q")
    return _spec(bars + dots + zero)


def to_svg(specs: list[dict[str, Any]]) -> list[str]:
    """Each spec as an SVG document (text), rendered in-process by vl-convert."""
    try:
        import vl_convert as vlc
    except ImportError as exc:
        raise ImportError('reports need altair and vl-convert: pip install "osmosis-ai[report]"') from exc
    return [vlc.vegalite_to_svg(spec) for spec in specs]
