"""The probe report: per eval function and probe, how often a negative control is paid like the answer.

A control *passes* on a row when it scores at least as high as the row's correct answer while that
answer itself scores at or above ``threshold`` (a gameable reward). Separately, the correct answer
scoring below ``threshold`` marks the row *too strict*. Rows where a score is missing (the function
raised, or the probe does not apply) are left out of that fraction and counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.probes.controls import PROBES
from osmosis_ai.probes.probe import CORRECT, probe_key

__all__ = ["ProbeFinding", "ProbeReport", "build_report"]

MAX_EXAMPLES = 3


@dataclass
class ProbeFinding:
    """One function on one probe (or on ``correct`` for the too-strict check).

    Attributes:
        probe: The probe name (``correct`` for the too-strict line).
        rows: Rows where both scores exist.
        hits: Rows where the control passed (or, for ``correct``, the answer scored low).
        skipped: Rows without a usable score (error, or probe not applicable).
        examples: Up to three hit rows: ``{row_index, control, control_score, correct_score}``.
    """

    probe: str
    rows: int = 0
    hits: int = 0
    skipped: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def fraction(self) -> float:
        """``hits / rows`` (0.0 without rows)."""
        return self.hits / self.rows if self.rows else 0.0

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
    """Findings by function: ``gameable[fn][probe]`` and ``too_strict[fn]``."""

    threshold: float
    rows: int = 0
    gameable: dict[str, dict[str, ProbeFinding]] = field(default_factory=dict)
    too_strict: dict[str, ProbeFinding] = field(default_factory=dict)

    def worst(self) -> tuple[str, str, float] | None:
        """The (function, probe, fraction) with the highest pass fraction, or None."""
        found = [(fn, p, f.fraction) for fn, by in self.gameable.items() for p, f in by.items() if f.rows]
        return max(found, key=lambda t: t[2]) if found else None

    def failures(self, fail_above: float) -> list[tuple[str, str, float]]:
        """Every (function, probe, fraction) whose pass fraction is above ``fail_above``."""
        return [
            (fn, probe, finding.fraction)
            for fn, by_probe in self.gameable.items()
            for probe, finding in by_probe.items()
            if finding.rows and finding.fraction > fail_above
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "rows": self.rows,
            "functions": {
                fn: {
                    "gameable": [f.as_json() for f in by_probe.values()],
                    "too_strict": self.too_strict[fn].as_json(),
                }
                for fn, by_probe in self.gameable.items()
            },
        }


def _example(record: Mapping[str, Any], probe: str, control: float, correct: float | None) -> dict[str, Any]:
    return {
        "row_index": record.get("row_index"),
        "answer": (record.get("previews") or {}).get(CORRECT),
        "control": (record.get("previews") or {}).get(probe),
        "control_score": control,
        "correct_score": correct,
    }


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
        report.too_strict[fn] = ProbeFinding(CORRECT)
    for record in records:
        report.rows += 1
        scores = record.get("scores") or {}
        for fn in names:
            correct = scores.get(probe_key(fn, CORRECT))
            strict = report.too_strict[fn]
            if correct is None:
                strict.skipped += 1
            else:
                strict.rows += 1
                if correct < threshold:
                    strict.hits += 1
                    if len(strict.examples) < MAX_EXAMPLES:
                        strict.examples.append(_example(record, CORRECT, correct, correct))
            for probe, finding in report.gameable[fn].items():
                control = scores.get(probe_key(fn, probe))
                if control is None or correct is None:
                    finding.skipped += 1
                    continue
                finding.rows += 1
                if correct >= threshold and control >= correct:
                    finding.hits += 1
                    if len(finding.examples) < MAX_EXAMPLES:
                        finding.examples.append(_example(record, probe, control, correct))
    return report
