"""One pass over a results file's records: the page's row index, its runs as the page shows them, and
the per-run values of its histograms.

Memory holds a few numbers and short previews per row (never the runs themselves): the runs go to a
sink as they are read (the report's compressed data) or are left in the file and found again by their
position (``osmosis view``).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from osmosis_ai.report._outcomes import row_outcome, run_outcome, score_of
from osmosis_ai.report._source import Record

__all__ = ["PREVIEW_CHARS", "RowIndex", "final_answer", "page_run", "run_texts", "score_key"]

PREVIEW_CHARS = 240
_LETTER = {"passed": "P", "not_passed": "N", "errored": "E", "unscored": "U", "skipped": "S"}
# "X": the scorer raised (errored, like "E", but no attempt at all for the statistics of that score).
_OUTCOME = {**{v: k for k, v in _LETTER.items()}, "X": "errored"}
_JUDGE_COUNTERS = ("parse_failures", "clamped", "retries")


def score_key(tag: str, name: str) -> str:
    """How the page names a score of a model: the name, with the model's tag when it is not the primary."""
    return name if tag in ("", "primary") else f"{name} [{tag}]"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    import orjson

    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


def _messages(record: Mapping[str, Any]) -> list[Any]:
    for name in ("final_messages", "messages"):
        value = record.get(name)
        if isinstance(value, list):
            return value
    return []


def final_answer(record: Mapping[str, Any]) -> str | None:
    """The run's answer: ``final_answer``, else the last assistant message with content."""
    if record.get("final_answer") is not None:
        return _text(record["final_answer"])
    for message in reversed(_messages(record)):
        if isinstance(message, dict) and message.get("role") == "assistant" and message.get("content"):
            return _text(message["content"])
    return None


def _first_user(record: Mapping[str, Any]) -> str | None:
    for message in _messages(record):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text(message.get("content"))
    return _text(record["preview"]) if record.get("preview") is not None else None


def _errors(record: Mapping[str, Any]) -> list[str]:
    found = [_text(record["error"])] if record.get("error") else []
    errors = record.get("eval_errors")
    if isinstance(errors, dict):
        found += [f"{name}: {_text(message)}" for name, message in errors.items()]
    if record.get("unscored_reason"):
        found.append(_text(record["unscored_reason"]))
    return found


def run_texts(record: Mapping[str, Any]) -> Iterable[str]:
    """Every text of a run a search looks in: messages, answer, tool calls, errors, judge explanation."""
    for message in _messages(record):
        if isinstance(message, dict):
            yield _text(message.get("content"))
            if message.get("tool_calls"):
                yield _text(message["tool_calls"])
        else:
            yield _text(message)
    for name in ("final_answer", "explanation", "preview", "tool_calls"):
        if record.get(name) is not None:
            yield _text(record[name])
    yield from _errors(record)


def page_run(
    record: Mapping[str, Any],
    keys: list[tuple[str, str, str]],
    threshold: float,
    outcomes: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A run as the page receives it: the record, with each score's outcome (``_outcomes``) added."""
    if outcomes is None:
        tag = record.get("model_tag") or ""
        tag = "" if tag == "primary" else tag
        outcomes = {key: run_outcome(record, name, threshold) for t, name, key in keys if t == tag}
    run = {k: v for k, v in record.items() if k not in ("row_key", "row_index")}
    run["_outcomes"] = outcomes
    return run


def _preview(text: str | None) -> str | None:
    if text is None:
        return None
    # ASCII marker: one non-ASCII character would make CPython store the whole preview at 2-4 bytes a char.
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "..."


_CODES = "PNEXUS"
_NAN = float("nan")


@dataclass(slots=True)
class _Row:
    index: int
    key: str | None = None
    prompt: str | None = None
    answer: str | None = None
    error: str | None = None
    runs: int = 0
    tokens: float = 0.0
    slowest_ms: float | None = None
    left_out: int = 0
    # An order-free digest of the runs' final answers (whether two runs of a row answered alike).
    answers: int = 0
    # Per score key number: ``run * 8 + letter code`` per run, and the scores aligned (NaN: none).
    # Arrays, not lists of tuples: a 25,000-row log's index fits in a few MB.
    codes: list[array[int] | None] = field(default_factory=list)
    scores: list[array[float] | None] = field(default_factory=list)
    positions: array[int] | None = None

    def runs_of(self, k: int) -> list[tuple[int, str, float | None]]:
        """``(run, letter, score)`` of score key number ``k``, in run order."""
        codes = self.codes[k] if k < len(self.codes) else None
        if codes is None:
            return []
        scores = self.scores[k]
        assert scores is not None
        runs = [(c >> 3, _CODES[c & 7], None if s != s else s) for c, s in zip(codes, scores, strict=True)]
        return sorted(runs)

    def put(self, k: int, run: int, letter: str, score: float | None) -> bool:
        """Records run ``run`` of key ``k``; a run recorded again replaces the first (False then)."""
        while len(self.codes) <= k:
            self.codes.append(None)
            self.scores.append(None)
        codes, scores = self.codes[k], self.scores[k]
        if codes is None or scores is None:
            codes = self.codes[k] = array("q")
            scores = self.scores[k] = array("d")
        code = run * 8 + _CODES.index(letter)
        value = _NAN if score is None else score
        for i, old in enumerate(codes):
            if old >> 3 == run:
                codes[i], scores[i] = code, value
                return False
        codes.append(code)
        scores.append(value)
        return True


@dataclass
class RowIndex:
    """Rows of one results file, built by feeding it every record (:meth:`add`), then :meth:`rows`.

    Args:
        names: The score names the file declares (more are added as records mention them).
        threshold: The pass threshold.
        declared_n: Runs per row the file declares (rows with fewer are incomplete), or None.
        sink: Called with ``(row_index, outcome per score key, record)`` for every record (the report's
            compressed data); False when it takes no more.
        keep_positions: Remember where each run is in the file (``osmosis view``).
        judged: Count the judge's health fields (rubric files).
    """

    names: list[str]
    threshold: float
    declared_n: int | None = None
    sink: Callable[[int, dict[str, str], dict[str, Any]], bool] | None = None
    keep_positions: bool = False
    judged: bool = False
    keys: list[tuple[str, str, str]] = field(default_factory=list)
    latency_ms: array[float] = field(default_factory=lambda: array("d"))
    tokens: array[float] = field(default_factory=lambda: array("d"))
    score_values: dict[str, array[float]] = field(default_factory=dict)
    runs_left_out: int = 0
    judge: dict[str, int] = field(default_factory=dict)
    _rows: dict[int, _Row] = field(default_factory=dict)
    # The key numbers of a record by (model tag, its score names, its error names): most records repeat one.
    _known: dict[tuple[Any, ...], list[int]] = field(default_factory=dict)

    def _keys_for(self, record: Mapping[str, Any]) -> list[int]:
        tag = record.get("model_tag") or ""
        tag = "" if tag == "primary" else tag
        scores, errors = record.get("scores"), record.get("eval_errors")
        seen = (
            tag,
            tuple(scores) if type(scores) is dict else (),
            tuple(errors) if type(errors) is dict else (),
        )
        known = self._known.get(seen)
        if known is None:
            known = self._known[seen] = self._new_keys(tag, record)
        return known

    def _new_keys(self, tag: str, record: Mapping[str, Any]) -> list[int]:
        mentioned = [*self.names]
        for source in (record.get("scores"), record.get("eval_errors")):
            if type(source) is dict:
                mentioned += [n for n in source if n not in mentioned]
        for name in mentioned:
            if name not in self.names:
                self.names.append(name)
            if not any(t == tag and n == name for t, n, _ in self.keys):
                self.keys.append((tag, name, score_key(tag, name)))
        return [k for k, (t, _, _) in enumerate(self.keys) if t == tag]

    def _number(self, key: str) -> int | None:
        return next((k for k, (_, _, name) in enumerate(self.keys) if name == key), None)

    def add(self, item: Record) -> None:
        """Takes one run record (a run recorded again, as a resume may, replaces the first)."""
        record = item.data
        try:
            index = int(record["row_index"])
        except (KeyError, TypeError, ValueError):
            return
        row = self._rows.get(index)
        if row is None:
            row = self._rows[index] = _Row(index, positions=array("q") if self.keep_positions else None)
        outcomes = self._count(row, record, self._keys_for(record))
        if row.positions is not None:
            row.positions.append(item.position)
        if self.sink is not None and not self.sink(index, outcomes, record):
            row.left_out += 1
            self.runs_left_out += 1

    def _count(self, row: _Row, record: Mapping[str, Any], keys: list[int]) -> dict[str, str]:
        """Counts the run into the row; returns its outcome per score key."""
        run = record.get("run_index")
        run = run if isinstance(run, int) and run >= 0 else row.runs
        new = True
        outcomes = {}
        for k in keys:
            tag, name, key = self.keys[k]
            outcome = outcomes[key] = run_outcome(record, name, self.threshold)
            letter = _LETTER[outcome]
            if letter == "E" and record.get("success", True) is not False:
                letter = "X"
            score = score_of(record, name) if outcome in ("passed", "not_passed") else None
            new = row.put(k, run, letter, score) and new
            if score is not None and tag == "":
                self.score_values.setdefault(name, array("d")).append(score)
        row.runs += int(new)
        if row.key is None and isinstance(record.get("row_key"), str):
            row.key = record["row_key"]
        if self.judged:
            self._judge(record)
        self._usage(row, record)
        if row.prompt is None:
            row.prompt = _preview(_first_user(record))
        answer = final_answer(record)
        row.answers ^= hash((run, record.get("model_tag") or "", answer))
        if row.answer is None or run == 0:
            row.answer = _preview(answer) or row.answer
        if row.error is None:
            errors = _errors(record)
            row.error = _preview(errors[0]) if errors else None
        return outcomes

    def _usage(self, row: _Row, record: Mapping[str, Any]) -> None:
        duration = record.get("duration_ms")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            self.latency_ms.append(float(duration))
            row.slowest_ms = max(row.slowest_ms or 0.0, float(duration))
        tokens = record.get("tokens")
        if not isinstance(tokens, (int, float)) and isinstance(record.get("usage"), dict):
            tokens = record["usage"].get("total_tokens")
        if isinstance(tokens, (int, float)) and not isinstance(tokens, bool):
            self.tokens.append(float(tokens))
            row.tokens += float(tokens)

    def _judge(self, record: Mapping[str, Any]) -> None:
        for name in _JUDGE_COUNTERS:
            value = record.get(name)
            if isinstance(value, (bool, int)) and value:
                self.judge[name] = self.judge.get(name, 0) + int(value)
        status = record.get("status")
        if status in ("unscored", "error"):
            key = "unscored" if status == "unscored" else "errors"
            self.judge[key] = self.judge.get(key, 0) + 1

    def row_keys(self) -> dict[str, int]:
        """``{row_key: row_index}`` of the rows whose records carry a content key."""
        return {row.key: row.index for row in self._rows.values() if row.key is not None}

    def __len__(self) -> int:
        return len(self._rows)

    def indices(self) -> list[int]:
        """Every row index, in order."""
        return sorted(self._rows)

    def answer_digest(self, row_index: int) -> int:
        """A digest of the row's final answers (equal digests: the same answers, in this process)."""
        row = self._rows.get(row_index)
        return row.answers if row is not None else 0

    def rows_left_out(self) -> int:
        """Rows with at least one run the sink did not take."""
        return sum(1 for row in self._rows.values() if row.left_out)

    def positions(self, row_index: int) -> list[int]:
        """Where the row's runs are in the file (with ``keep_positions``)."""
        row = self._rows.get(row_index)
        return list(row.positions) if row is not None and row.positions is not None else []

    def outcomes(self, key: str) -> Iterable[tuple[int, str | None, list[tuple[int, str, float | None]]]]:
        """``(row_index, row_key, [(run_index, outcome letter, score)])`` of every row holding ``key``.

        Letters: P passed, N did not pass, E the run errored, X the scorer raised, U unscored, S skipped.
        """
        k = self._number(key)
        for row in self._rows.values():
            runs = row.runs_of(k) if k is not None else []
            if runs:
                yield row.index, row.key, runs

    def attempts(self, key: str) -> Iterable[tuple[int, list[float | None], int]]:
        """``(row_index, attempts, scorer errors)`` of every row for one score key, as the statistics take
        them: a score, None for a run that counts as not passing (errored run, unscored), and the runs
        whose scorer raised or that were skipped left out (counted as errors)."""
        for index, _, runs in self.outcomes(key):
            attempts = [score for _, letter, score in runs if letter not in "XS"]
            yield index, attempts, len(runs) - len(attempts)

    def _category(self, runs: list[tuple[int, str, float | None]]) -> str:
        return row_outcome([_OUTCOME[letter] for _, letter, _ in runs], self.declared_n)

    def rows(self, dataset: Mapping[int, Mapping[str, Any]]) -> Iterable[dict[str, Any]]:
        """Every row as the page's row table receives it, in row order."""
        for index in sorted(self._rows):
            row = self._rows[index]
            data = dataset.get(index) or {}
            out = {}
            for k, (_, _, key) in enumerate(self.keys):
                runs = row.runs_of(k)
                if not runs:
                    continue
                letters = "".join(letter for _, letter, _ in runs)
                out[key] = {
                    "cat": self._category(runs),
                    "runs": letters,
                    "passed": letters.count("P"),
                    "counted": sum(1 for x in letters if x not in "XS"),
                }
            yield {
                "i": index,
                "key": row.key,
                "prompt": data.get("prompt") or row.prompt,
                "truth": data.get("truth"),
                "fields": data.get("fields") or {},
                "answer": row.answer,
                "error": row.error,
                "runs": row.runs,
                "tokens": row.tokens or None,
                "slowest_ms": row.slowest_ms,
                "out": out,
                "left_out": row.left_out,
            }
