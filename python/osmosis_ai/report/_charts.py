"""Vega-Lite charts rendered to inline SVG by vl-convert: no JavaScript, no network.

Each function takes plain data of a page (numbers from the summary object, never computed here) and
returns a Vega-Lite spec as a dict; :func:`to_svg` renders them. Specs are written as dicts rather
than with altair: altair's import alone took 55 MB of the report's 200 MB memory budget. vl-convert
escapes every text it draws, so a dataset value in a label is text, never markup.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "bar_histogram",
    "counts_chart",
    "group_chart",
    "invocations_chart",
    "latency_chart",
    "pass_curve",
    "pass_difference",
    "to_svg",
]

_WIDTH, _HEIGHT = 420, 220
_BLUE, _RED, _GREY = "#4c78a8", "#e45756", "#888"


def _spec(
    title: str, layers: list[dict[str, Any]], values: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    # Data is inlined in the spec; the chart renders without any URL.
    return {
        "title": title,
        "width": _WIDTH,
        "height": _HEIGHT,
        "data": {"values": values},
        "layer": layers,
        **extra,
    }


def _q(field: str, title: str | None = None, **more: Any) -> dict[str, Any]:
    return {"field": field, "type": "quantitative", **({"title": title} if title is not None else {}), **more}


def bar_histogram(bins: list[dict[str, Any]], title: str, unit: str) -> dict[str, Any]:
    """A histogram from pre-computed bins (``low``, ``high``, ``count``)."""
    bar = {
        "mark": {"type": "bar", "color": _BLUE},
        "encoding": {"x": _q("low", unit, bin="binned"), "x2": {"field": "high"}, "y": _q("count", "runs")},
    }
    return _spec(title, [bar], bins)


def latency_chart(bins: list[dict[str, Any]], percentiles: dict[str, float] | None) -> dict[str, Any]:
    """Latency bins on a log scale with a rule and label at each percentile (p50, p95, p99)."""
    scale = {"type": "log"}
    bar = {
        "mark": {"type": "rect", "color": _BLUE, "stroke": "white", "strokeWidth": 0.5},
        "encoding": {
            "x": _q("low", "latency per run (ms, log scale)", scale=scale),
            "x2": {"field": "high"},
            "y": _q("count", "runs"),
            "y2": {"datum": 0},
        },
    }
    layers = [bar]
    if percentiles:
        marks = [{"name": k, "ms": v} for k, v in percentiles.items() if v and v > 0]
        rule = {
            "data": {"values": marks},
            "mark": {"type": "rule", "color": _RED, "strokeDash": [4, 3]},
            "encoding": {"x": _q("ms", scale=scale)},
        }
        label = {
            "data": {"values": marks},
            "mark": {
                "type": "text",
                "color": _RED,
                "align": "left",
                "dx": 3,
                "dy": -4,
                "baseline": "top",
                "y": 0,
            },
            "encoding": {"x": _q("ms", scale=scale), "text": {"field": "name"}},
        }
        layers += [rule, label]
    return _spec("latency per run", layers, bins)


def pass_curve(points: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """pass@k and pass^k against k with their intervals (``k``, ``statistic``, ``value``, ``low``, ``high``)."""
    x = _q("k", "k", axis={"tickMinStep": 1})
    color = {"field": "statistic", "type": "nominal", "title": None}
    rate = _q("low", "rate", scale={"domain": [0, 1]})
    band = {
        "mark": {"type": "area", "opacity": 0.2},
        "encoding": {"x": x, "y": rate, "y2": {"field": "high"}, "color": color},
    }
    line = {
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": x,
            "y": _q("value"),
            "color": color,
            "tooltip": [
                {"field": f, "type": "nominal" if f == "statistic" else "quantitative"}
                for f in ("statistic", "k", "value", "low", "high")
            ],
        },
    }
    return _spec(title, [band, line], points)


def counts_chart(counts: dict[str, int], title: str, color: str = _RED) -> dict[str, Any]:
    """Named counters as bars (judge health)."""
    values = [{"event": k.replace("_", " "), "count": v} for k, v in counts.items()]
    bar = {
        "mark": {"type": "bar", "color": color},
        "encoding": {
            "x": {"field": "event", "type": "nominal", "title": None, "sort": None},
            "y": _q("count"),
        },
    }
    return _spec(title, [bar], values)


def invocations_chart(invocations: list[dict[str, Any]]) -> dict[str, Any]:
    """Wall time and CPU time of each invocation that wrote the log (the first run and each resume)."""
    values = []
    for inv in invocations:
        values.append({"invocation": f"#{inv['index']}", "measure": "wall", "s": inv["wall_ms"] / 1000})
        if inv.get("cpu_ms") is not None:
            values.append({"invocation": f"#{inv['index']}", "measure": "CPU", "s": inv["cpu_ms"] / 1000})
    bar = {
        "mark": "bar",
        "encoding": {
            "x": {"field": "invocation", "type": "nominal", "title": "invocation (0: the first run)"},
            "xOffset": {"field": "measure"},
            "y": _q("s", "seconds"),
            "color": {"field": "measure", "type": "nominal", "title": None},
        },
    }
    return _spec("wall time and CPU per invocation", [bar], values)


def group_chart(points: list[dict[str, Any]], title: str, axis: str) -> dict[str, Any]:
    """A value per group with its interval (``group``, ``statistic``, ``value``, ``low``, ``high``)."""
    y = {"field": "group", "type": "nominal", "title": None, "sort": None}
    color = {"field": "statistic", "type": "nominal", "title": None}
    x = _q("low", axis, scale={"zero": False})
    rule = {
        "mark": {"type": "rule", "strokeWidth": 2},
        "encoding": {
            "y": y,
            "yOffset": {"field": "statistic"},
            "x": x,
            "x2": {"field": "high"},
            "color": color,
        },
    }
    dot = {
        "mark": {"type": "point", "filled": True, "size": 50},
        "encoding": {"y": y, "yOffset": {"field": "statistic"}, "x": _q("value"), "color": color},
    }
    return _spec(title, [rule, dot], points)


def pass_difference(points: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """B - A per statistic with its paired interval and a zero line (``statistic``, ``estimate``, ``low``, ``high``)."""
    y = {"field": "statistic", "type": "nominal", "title": None, "sort": None}
    rule = {
        "mark": {"type": "rule", "strokeWidth": 2},
        "encoding": {"y": y, "x": _q("low", "difference (B - A)"), "x2": {"field": "high"}},
    }
    dot = {"mark": {"type": "point", "filled": True, "size": 60}, "encoding": {"y": y, "x": _q("estimate")}}
    zero = {
        "data": {"values": [{"x": 0}]},
        "mark": {"type": "rule", "color": _GREY, "strokeDash": [4, 4]},
        "encoding": {"x": _q("x")},
    }
    return _spec(title, [rule, dot, zero], points)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def _drawable(spec: dict[str, Any]) -> Any:
    """The spec with control characters in its texts shown as U+FFFD: a NUL in a dataset field made
    vl-convert abort the whole process (a panic that does not unwind)."""
    from osmosis_ai.report._source import replace_in_texts

    return replace_in_texts(spec, _CONTROL)


def to_svg(specs: list[dict[str, Any]]) -> list[str]:
    """Each spec as an SVG document (text), rendered in-process by vl-convert."""
    # Without the report extra this raises ModuleNotFoundError naming vl_convert; the CLI names the extra.
    import vl_convert as vlc

    return [vlc.vegalite_to_svg(_drawable(spec)) for spec in specs]
