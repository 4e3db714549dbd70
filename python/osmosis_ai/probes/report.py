"""The probe report: per eval function and probe, how often a negative control is paid like the answer.

A control *passes* on a row when it scores at least as high as the row's correct answer (as written) while
that answer itself scores at or above ``threshold`` (a gameable reward). Separately, a correct answer in
one of the common formats scoring below ``threshold`` marks the row *too strict* for that format. Rows
where a score is missing (the function raised, or the probe does not apply) are left out of that fraction
and counted. Fractions come from the statistics core (a pass rate over the rows), and are None, never
0, when no row counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.probes.controls import CORRECT_FORMS, PROBES
from osmosis_ai.probes.probe import CORRECT, probe_key

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
        examples: Up to three hit rows: ``{row_index, probe, answer, control, control_score,
            correct_score}`` (``probe``: the control or format shown).
    """

    probe: str
    rows: int = 0
    hits: int = 0
    skipped: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def fraction(self) -> float | None:
        """The share of the counted rows that are hits; None when no row counts."""
        from osmosis_ai.stats import pass_at_k

        # The pass rate of `rows` one-attempt rows, `hits` of which passed: pass@1 of the pooled attempts.
        return pass_at_k(self.rows, self.hits, 1) if self.rows else None

    def count(self, hit: bool) -> bool:
        """Counts one row; True when it is a hit to keep as an example (one of the first few)."""
        self.rows += 1
        self.hits += hit
        return hit and len(self.examples) < MAX_EXAMPLES

    def as_json(self) -> dict[str, Any]:
        return {
            "probe": self.probe,
            "rows": self.rows,
            "hits": self.hits,
            "fraction": self.fraction,
            "skipped": self.skipped,
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

    def as_json(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "rows": self.rows,
            "functions": {
                fn: {
                    "gameable": [f.as_json() for f in by_probe.values()],
                    "too_strict": self.too_strict[fn].as_json(),
                    "correct_formats": [f.as_json() for f in self.formats[fn].values()],
                }
                for fn, by_probe in self.gameable.items()
            },
        }


def _example(record: Mapping[str, Any], probe: str, control: float, correct: float | None) -> dict[str, Any]:
    return {
        "row_index": record.get("row_index"),
        "probe": probe,
        "answer": (record.get("previews") or {}).get(CORRECT),
        "control": (record.get("previews") or {}).get(probe),
        "control_score": control,
        "correct_score": correct,
    }


def _add_formats(report: ProbeReport, fn: str, record: Mapping[str, Any], scores: Mapping[str, Any]) -> None:
    correct = scores.get(probe_key(fn, CORRECT))
    low: list[tuple[str, float]] = []
    for form, finding in report.formats[fn].items():
        score = scores.get(probe_key(fn, form))
        if score is None:
            finding.skipped += 1
            continue
        if score < report.threshold:
            low.append((form, score))
        if finding.count(score < report.threshold):
            finding.examples.append(_example(record, form, score, correct))
    strict = report.too_strict[fn]
    if not any(scores.get(probe_key(fn, form)) is not None for form in CORRECT_FORMS):
        strict.skipped += 1
    elif strict.count(bool(low)):
        strict.examples.append(_example(record, low[0][0], low[0][1], correct))


def _add_controls(report: ProbeReport, fn: str, record: Mapping[str, Any], scores: Mapping[str, Any]) -> None:
    correct = scores.get(probe_key(fn, CORRECT))
    for probe, finding in report.gameable[fn].items():
        control = scores.get(probe_key(fn, probe))
        if control is None or correct is None:
            finding.skipped += 1
        elif finding.count(correct >= report.threshold and control >= correct):
            finding.examples.append(_example(record, probe, control, correct))


def build_report(
    records: Iterable[Mapping[str, Any]], functions: Iterable[str], *, threshold: float
) -> ProbeReport:
    """Reads probe records (from the results log) into a :class:`ProbeReport`.

    Args:
        records: The log's run records.
        functions: The eval function names, in report order.
        threshold: A correct answer scoring below this is "low" (too strict); a control only passes
            against a correct answer at or above it.
    """
    names = list(functions)
    report = ProbeReport(threshold=threshold)
    for fn in names:
        report.gameable[fn] = {probe: ProbeFinding(probe) for probe in PROBES}
        report.formats[fn] = {form: ProbeFinding(form) for form in CORRECT_FORMS}
        report.too_strict[fn] = ProbeFinding(CORRECT)
    for record in records:
        report.rows += 1
        scores = record.get("scores") or {}
        for fn in names:
            _add_formats(report, fn, record, scores)
            _add_controls(report, fn, record, scores)
    return report
