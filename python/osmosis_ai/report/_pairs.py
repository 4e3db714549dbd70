"""Two runs' rows paired by content (for reading them side by side), and per-group differences of
``B - A`` by the comparison model's rules (the Rust core)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from osmosis_ai.report._rows import RowIndex

if TYPE_CHECKING:
    from osmosis_ai.stats import Aggregator, FailedPolicy

__all__ = [
    "Pair",
    "Paired",
    "Side",
    "first_attempt",
    "group_deltas",
    "pair_rows",
]


@dataclass(frozen=True)
class Side:
    """One run's row: its index and its runs as ``(run_index, outcome letter, score)``, run order."""

    index: int
    runs: tuple[tuple[int, str, float | None], ...]

    def attempts(self, n: int) -> tuple[list[float | None], int]:
        """(the first ``n`` runs as the statistics take them, runs left out as scorer errors or skipped)."""
        attempts: list[float | None] = []
        errors = 0
        for _, letter, score in self.runs[:n]:
            if letter in "XS":
                errors += 1
            else:
                attempts.append(score)
        return attempts, errors

    def share_passed(self) -> float | None:
        counting = [letter for _, letter, _ in self.runs if letter not in "XS"]
        return counting.count("P") / len(counting) if counting else None

    def letters(self) -> str:
        return "".join(letter for _, letter, _ in self.runs)


@dataclass(frozen=True)
class Pair:
    """A row both runs hold (``key``: its content key, or its index for files without keys)."""

    key: str | None
    a: Side
    b: Side


@dataclass
class Paired:
    matched: list[Pair]
    only_a: list[Side]
    only_b: list[Side]
    by_content: bool
    rows_a: int
    rows_b: int
    warnings: list[str] = field(default_factory=list)


def first_attempt(side: Side) -> bool | None:
    """Whether run 0 passed (None: no run 0, or its scorer raised or it was skipped)."""
    for run, letter, _ in side.runs:
        if run == 0:
            return None if letter in "XS" else letter == "P"
    return None


def _sides(index: RowIndex, key: str) -> list[tuple[str | None, Side]]:
    return [
        (row_key, Side(i, tuple(sorted(runs))))
        for i, row_key, runs in sorted(index.outcomes(key), key=lambda item: item[0])
    ]


def _keyed(sides: list[tuple[str | None, Side]], by_content: bool) -> dict[str, Side]:
    # A dataset that repeats a row holds it twice: the n-th copy of a content key pairs with the n-th.
    out: dict[str, Side] = {}
    copies: dict[str, int] = {}
    for row_key, side in sides:
        base = row_key if by_content and row_key is not None else str(side.index)
        copies[base] = copies.get(base, 0) + 1
        out[f"{base}#{copies[base]}"] = side
    return out


def pair_rows(a: RowIndex, b: RowIndex, name: str) -> Paired:
    """The rows of ``a`` and ``b`` under score ``name`` (primary model), paired by content when every row
    of both has a content key, else by row index."""
    sides_a, sides_b = _sides(a, name), _sides(b, name)
    by_content = bool(sides_a and sides_b) and all(k is not None for k, _ in [*sides_a, *sides_b])
    keyed_a, keyed_b = _keyed(sides_a, by_content), _keyed(sides_b, by_content)
    shared = sorted(set(keyed_a) & set(keyed_b), key=lambda k: keyed_a[k].index)
    matched = [Pair(k.rsplit("#", 1)[0] if by_content else None, keyed_a[k], keyed_b[k]) for k in shared]
    paired = Paired(
        matched,
        [s for k, s in keyed_a.items() if k not in keyed_b],
        [s for k, s in keyed_b.items() if k not in keyed_a],
        by_content,
        len(sides_a),
        len(sides_b),
    )
    if paired.only_a or paired.only_b:
        paired.warnings.append(
            f"{len(paired.only_a)} rows only in A and {len(paired.only_b)} only in B are in no statistic (listed below)"
        )
    return paired


def _aggregators(
    pairs: Iterable[Pair], threshold: float, n: int, ks: list[int], failed: FailedPolicy
) -> tuple[Aggregator, Aggregator]:
    from osmosis_ai.stats import Aggregator

    agg_a = Aggregator(pass_threshold=threshold, ks=ks, n_runs=n, failed=failed)
    agg_b = Aggregator(pass_threshold=threshold, ks=ks, n_runs=n, failed=failed)
    for label, pair in enumerate(pairs):
        for agg, side in ((agg_a, pair.a), (agg_b, pair.b)):
            attempts, errors = side.attempts(n)
            agg.push(attempts, row_index=label, errors=errors)
    return agg_a, agg_b


def group_deltas(
    pairs: list[Pair],
    fields: Mapping[str, Mapping[str, list[int]]],
    threshold: float,
    n: int,
    level: float,
    failed: FailedPolicy,
) -> dict[str, list[dict[str, Any]]]:
    """Per dataset field, per group of paired rows: ``B - A`` of the mean and pass@1 by the comparison
    model's rules (paired Student t; no bounds and a note where the rows give none; not tested, so no
    verdict). ``fields``: the groups of A's rows (:func:`~osmosis_ai.report._figures.group_fields`)."""
    by_row = {pair.a.index: pair for pair in pairs}
    out: dict[str, list[dict[str, Any]]] = {}
    for name, groups in fields.items():
        entries = []
        for value, indices in groups.items():
            members = [by_row[i] for i in indices if i in by_row]
            if not members:
                continue
            agg_a, agg_b = _aggregators(members, threshold, n, [1], failed)
            differences = agg_a.paired_differences(agg_b, ks=[1], level=level)
            entries.append(
                {
                    "value": value,
                    "rows": len(members),
                    "differences": {
                        k: {f: v for f, v in differences[k].items() if f not in ("p_holm", "verdict")}
                        for k in ("mean", "pass_at_1")
                        if k in differences
                    },
                }
            )
        out[name] = sorted(entries, key=lambda e: (-e["rows"], e["value"]))
    return out
