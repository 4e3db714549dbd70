"""The scan of ``eval rubric``'s chat records (the Rust core's check, Python for the lines it hands back)
accepts, counts and refuses what Python's reader and record check do, with the same error naming the same
file, line and field; a line the core vouches for is one Python accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osmosis_ai import _core
from osmosis_ai.errors import DatasetFormatError
from osmosis_ai.rubric.records import RecordSource, _chat_record, read_jsonl

# Blank by Python's str.strip or not, ASCII or not: the candidate checks turn on it.
TEXTS = st.sampled_from(
    [
        "",
        " ",
        "a",
        " a ",
        "\u3000",
        "\x1c\x1f",
        "\x85\xa0",
        "\u200b",
        "é",
        "字",
        "\u2028x",
        "\t\n",
        "\x7f",
        "```",
    ]
)
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.just(1.5),
    TEXTS,
    st.just([]),
    st.just({}),
    st.just({"k": 1}),
)
PART = st.one_of(
    VALUES,
    st.fixed_dictionaries(
        {}, optional={"type": st.sampled_from(["text", "image", 1]), "text": st.one_of(TEXTS, VALUES)}
    ),
)
CONTENT = st.one_of(TEXTS, VALUES, st.lists(PART, max_size=3))
MESSAGE = st.one_of(
    VALUES,
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.sampled_from(["assistant", "user", "system", "Assistant", 1]),
            "content": CONTENT,
        },
    ),
)
RECORD = st.fixed_dictionaries(
    {},
    optional={
        "messages": st.one_of(st.lists(MESSAGE, max_size=4), VALUES),
        "solution_str": st.one_of(TEXTS, VALUES),
        "ground_truth": st.one_of(TEXTS, VALUES),
        "original_input": st.one_of(TEXTS, VALUES),
        "metadata": VALUES,
        "id": VALUES,
    },
)
# Lines no dict serialises to: what the readers may read apart, keys given twice, blank lines.
RAW_LINES = st.sampled_from(
    [
        '{"solution_str": "s", "n": NaN}',
        '{"solution_str": "s", "n": 123456789012345678901234567890}',
        '{"solution_str": "\\ud800"}',
        '{"solution_str": "s", "other": "\\ud800"}',
        '{"solution_str": "s", "other": "\\q"}',
        '{"solution_str": "s", "other": "a\tb"}',
        '{"solution_str": "s", "solution_str": " "}',
        '{"solution_str": " ", "solution_str": "s"}',
        '{"messages": [{"role": "assistant", "content": " ", "content": "a"}]}',
        '{"messages": [{"role": "assistant", "role": "user", "content": "a"}], "solution_str": "s"}',
        '{"messages": [{"role": "assistant", "content": [{"type": "text", "text": "a", "text": ""}]}]}',
        '{"solution_str": "s"} trailing',
        '{"solution_str": "s"',
        "[1, 2]",
        '"text"',
        '\ufeff{"solution_str": "s"}',
        '{"solution_str": "s", "metadata": 1e400}',
        " \x0b ",
        "",
    ]
)
LINE = st.one_of(
    RECORD.map(lambda r: json.dumps(r)), RECORD.map(lambda r: json.dumps(r, ensure_ascii=False)), RAW_LINES
)


def _python_scan(path: Path) -> int:
    """What the scan was before the core's check: every line read and checked in Python."""
    count = 0
    for index, (line, data) in enumerate(read_jsonl(path), start=1):
        _chat_record(path, line, data, index)
        count = index
    if count == 0:
        raise DatasetFormatError(f"No JSON records found in '{path}'.", path=str(path))
    return count


def _outcome(scan: Any, path: Path) -> tuple[Any, ...]:
    try:
        return ("ok", scan(path))
    except DatasetFormatError as exc:
        return (type(exc), str(exc), exc.path, exc.line, exc.field)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(LINE, max_size=6), st.booleans())
def test_the_scan_finds_what_pythons_reader_and_check_find(
    tmp_path, lines: list[str], newline_at_end: bool
) -> None:
    path = tmp_path / "chats.jsonl"
    path.write_bytes(("\n".join(lines) + ("\n" if newline_at_end else "")).encode("utf-8", "surrogatepass"))
    expected = _outcome(_python_scan, path)
    assert _outcome(lambda p: RecordSource(p).scan()[0], path) == expected


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(LINE)
def test_a_line_the_core_vouches_for_is_a_record_python_accepts(tmp_path, line: str) -> None:
    path = tmp_path / "one.jsonl"
    path.write_bytes(line.encode("utf-8", "surrogatepass") + b"\n")
    records, unsure = _core.scan_chat_records(str(path))
    if records and not unsure:
        assert _python_scan(path) == 1


def test_the_lines_handed_back_are_the_ones_in_doubt(tmp_path) -> None:
    path = tmp_path / "chats.jsonl"
    good = json.dumps({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]})
    path.write_text(f'{good}\n\n{{"solution_str": "s", "n": NaN}}\n{good}\n', encoding="utf-8")
    records, unsure = _core.scan_chat_records(str(path))
    assert records == 3
    # line 3, the record numbered 2, at the byte after the first line and the blank one
    assert list(memoryview(unsure).cast("Q")) == [3, 2, len(good) + 2]
    assert RecordSource(path).scan() == (3, 0, 0)


def test_a_bad_record_is_named_by_file_line_and_field(tmp_path) -> None:
    path = tmp_path / "chats.jsonl"
    path.write_text('{"solution_str": "s"}\n{"solution_str": "s", "metadata": "m"}\n{"solution_str": ""}\n')
    with pytest.raises(DatasetFormatError) as caught:
        RecordSource(path).scan()
    assert (caught.value.line, caught.value.field) == (2, "metadata")
    assert str(path) in str(caught.value)


def test_a_member_the_check_skips_is_still_read_as_python_reads_it(tmp_path) -> None:
    # A lone surrogate escape in a member no check looks at: the core does not vouch for a line it has not
    # decoded whole, and Python's reader decides (it takes this one).
    path = tmp_path / "chats.jsonl"
    good = '{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]'
    path.write_text(f'{good}}}\n{good}, "note": "bad \\ud800 text"}}\n', encoding="utf-8")
    records, unsure = _core.scan_chat_records(str(path))
    assert records == 2
    assert list(memoryview(unsure).cast("Q"))[:2] == [2, 2]
    assert RecordSource(path).scan() == (2, 0, 0)
    assert _python_scan(path) == 2


def test_an_integer_python_will_not_build_is_named_by_file_and_line(tmp_path) -> None:
    path = tmp_path / "chats.jsonl"
    good = '{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]'
    path.write_text(f'{good}}}\n{good}, "n": {"9" * 5000}}}\n', encoding="utf-8")
    with pytest.raises(DatasetFormatError) as caught:
        RecordSource(path).scan()
    assert caught.value.line == 2
    assert str(path) in str(caught.value)


def _checked_record(path: Path, data: dict[str, Any]) -> tuple[Any, ...]:
    """The record's checked fields as the three checks alone give them (or the error they raise)."""
    from osmosis_ai.rubric.records import _optional_object, _optional_text

    try:
        return (
            _optional_text(path, 1, data, "ground_truth"),
            _optional_text(path, 1, data, "original_input"),
            _optional_object(path, 1, data, "metadata"),
        )
    except DatasetFormatError as exc:
        return (type(exc), str(exc), exc.field)


@settings(max_examples=400, deadline=None)
@given(RECORD.map(lambda r: {**r, "solution_str": "s"}))
def test_a_record_built_at_a_glance_is_what_the_checks_build(data: dict[str, Any]) -> None:
    path = Path("chats.jsonl")
    try:
        record = _chat_record(path, 1, data, 1)
    except DatasetFormatError as exc:
        assert _checked_record(path, data) == (type(exc), str(exc), exc.field)
        return
    got = (record.ground_truth, record.original_input, record.metadata)
    assert got == _checked_record(path, data)
    assert (record.line, record.data, record.label, record.record_id) == (1, data, record.label, record.label)
    assert record.extra_info == {} and record.score_min is None and record.rubric_id is None
