"""The probe report: per eval function and probe, how often a negative control is paid like the answer.

A control *passes* on a row when it scores at least as high as the row's best-scoring format of the correct
answer while that answer scores at or above ``threshold`` (a gameable reward). A row where no format
reaches ``threshold`` cannot test a control: it is *untestable*, counted apart, and a function whose
controls were tested on no row at all gets no verdict (:meth:`ProbeReport.inconclusive`). Separately, a
correct answer in one of the common formats scoring below ``threshold`` marks the row *too strict* for that
format. Rows where a score is missing (the function raised, or the probe does not apply) are left out of
that fraction and counted. Every count and fraction is the result model's (``ModelResult.probes``, computed in the Rust
core from the probe log): this module only lays them out in probe order and adds the example rows' text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_ai.probes.controls import CORRECT_FORMS, PROBES
from osmosis_ai.probes.probe import CORRECT, probe_key

if TYPE_CHECKING:
    from osmosis_ai.results import ProbeCount

__all__ = ["DEFAULT_FAIL_ABOVE", "ProbeFinding", "ProbeReport", "build_report"]

MAX_EXAMPLES = 3
# `reward probe` fails (exit 1) when a control passes on more than this fraction of the rows: a sound
# reward pays no control at all, and 5 % leaves room for a noisy judge without letting a gameable
# reward through.
DEFAULT_FAIL_ABOVE = 0.05


@dataclass
class ProbeFinding:
    """One function on one probe (or on one correct format, for the too-strict check).

    Attributes:
        probe: The probe or format name (``correct`` for the too-strict line over every format).
        rows: Rows where the scores exist.
        hits: Rows where the control passed (or, for a correct format, scored below the threshold).
        skipped: Rows without a usable score (error, or probe not applicable).
        fraction: ``hits`` over ``rows`` as the result model gives it; None when no row counts.
        examples: Up to three hit rows: ``{row_index, probe, answer, control, control_score,
            correct_score, reference}`` (``probe``: the control or format shown; ``reference``: the format
            of the correct answer a control was compared with, ``correct_score`` its score).
        untestable: Controls: rows where no format of the correct answer reached the threshold (not in
            ``rows``).
    """

    probe: str
    rows: int = 0
    hits: int = 0
    skipped: int = 0
    fraction: float | None = None
    examples: list[dict[str, Any]] = field(default_factory=list)
    untestable: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "probe": self.probe,
            "rows": self.rows,
            "hits": self.hits,
            "fraction": self.fraction,
            "skipped": self.skipped,
            "untestable": self.untestable,
            "examples": self.examples,
        }


@dataclass
class ProbeReport:
    """Findings by function: ``gameable[fn][probe]``, ``too_strict[fn]`` (any format) and
    ``formats[fn][format]``."""

    threshold: float
    rows: int = 0
    gameable: dict[str, dict[str, ProbeFinding]] = field(default_factory=dict)
    too_strict: dict[str, ProbeFinding] = field(default_factory=dict)
    formats: dict[str, dict[str, ProbeFinding]] = field(default_factory=dict)

    def worst(self) -> tuple[str, str, float] | None:
        """The (function, probe, fraction) with the highest pass fraction, or None."""
        found = [
            (fn, p, f.fraction)
            for fn, by in self.gameable.items()
            for p, f in by.items()
            if f.fraction is not None
        ]
        return max(found, key=lambda t: t[2]) if found else None

    def failures(self, fail_above: float) -> list[tuple[str, str, float]]:
        """Every (function, probe, fraction) whose pass fraction is above ``fail_above``."""
        return [
            (fn, probe, finding.fraction)
            for fn, by_probe in self.gameable.items()
            for probe, finding in by_probe.items()
            if finding.fraction is not None and finding.fraction > fail_above
        ]

    def untestable(self, fn: str) -> int:
        """Rows of ``fn`` where no format of the correct answer reached the threshold (no control could be
        compared there)."""
        return max((f.untestable for f in self.gameable[fn].values()), default=0)

    def inconclusive(self) -> list[str]:
        """Functions no control could be tested on (every scored row untestable): no verdict, not a pass."""
        return [
            fn
            for fn, by_probe in self.gameable.items()
            if self.untestable(fn) and all(f.fraction is None for f in by_probe.values())
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "rows": self.rows,
            "functions": {
                fn: {
                    "untestable_rows": self.untestable(fn),
                    "gameable": [f.as_json() for f in by_probe.values()],
                    "too_strict": self.too_strict[fn].as_json(),
                    "correct_formats": [f.as_json() for f in self.formats[fn].values()],
                }
                for fn, by_probe in self.gameable.items()
            },
        }


def _example(record: Mapping[str, Any], fn: str, probe: str, reference: str | None) -> dict[str, Any]:
    scores = record.get("scores") or {}
    previews = record.get("previews") or {}
    return {
        "row_index": record.get("row_index"),
        "probe": probe,
        "answer": previews.get(reference or CORRECT),
        "control": previews.get(probe),
        "control_score": scores.get(probe_key(fn, probe)),
        "correct_score": scores.get(probe_key(fn, reference or CORRECT)),
        "reference": reference,
    }


def _finding(count: ProbeCount, fn: str, records: Mapping[int, Mapping[str, Any]]) -> ProbeFinding:
    """A :class:`ProbeFinding` from the model's ``ProbeCount``, its example rows' text from the log."""
    examples = [
        _example(records[e.row], fn, e.probe, e.reference) for e in count.examples if e.row in records
    ]
    return ProbeFinding(
        count.probe, count.rows, count.hits, count.skipped, count.fraction, examples, count.untestable
    )


def _in_order(
    names: Iterable[str],
    counts: Iterable[ProbeCount],
    fn: str,
    records: Mapping[int, Mapping[str, Any]],
    rows: int,
) -> dict[str, ProbeFinding]:
    """Findings in the probes' documented order; a probe the log never holds applied to no row."""
    found = {c.probe: _finding(c, fn, records) for c in counts}
    ordered = {name: found.pop(name, ProbeFinding(name, skipped=rows)) for name in names}
    return {**ordered, **found}


def build_report(
    log_path: str | os.PathLike[str], functions: Iterable[str], *, threshold: float
) -> ProbeReport:
    """The :class:`ProbeReport` of a probe log, from its result model.

    Args:
        log_path: The probe session's results log.
        functions: The eval function names, in report order.
        threshold: A correct answer scoring below this is "low" (too strict); a control only passes
            against a correct answer at or above it. The log's own threshold (its header) decides the
            counts; a resumed log keeps the threshold it was started with.
    """
    from osmosis_ai.results import read_results
    from osmosis_ai.runs.log import iter_runs

    summary = read_results(log_path)
    model = summary.models[0] if summary.models else None  # no model: the log holds no row yet
    probed = model.probes if model is not None else ()
    by_function = {p.function: p for p in probed}
    wanted = {e.row for p in probed for c in (*p.controls, *p.formats, p.too_strict) for e in c.examples}
    records = {r["row_index"]: r for r in iter_runs(Path(log_path)) if r.get("row_index") in wanted}
    report = ProbeReport(threshold=threshold, rows=model.total_rows if model is not None else 0)
    for fn in functions:
        probes = by_function.get(fn)
        report.gameable[fn] = _in_order(PROBES, probes.controls if probes else (), fn, records, report.rows)
        report.formats[fn] = _in_order(
            CORRECT_FORMS, probes.formats if probes else (), fn, records, report.rows
        )
        strict = probes.too_strict if probes else None
        report.too_strict[fn] = (
            _finding(strict, fn, records) if strict else ProbeFinding(CORRECT, skipped=report.rows)
        )
    return report
