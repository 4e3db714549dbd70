"""The end of `osmosis eval run` in the core (`osmosis_ai.atif.EvalRunItems`): from a results log line, the
same trajectory document, index line and record fields the Python writers make from the parsed record,
byte for byte, or None where it leaves the work to them."""

from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osmosis_ai._version import __version__ as VERSION
from osmosis_ai.atif import EvalRunItems
from osmosis_ai.eval.run_dir import index_line
from osmosis_ai.eval.run_files import _conversation, trajectory_document
from osmosis_ai.rollout.trajectory import trajectory_json

FIELDS = (
    "row_index", "run_index", "source_row_index", "rollout_id", "trajectory_filename", "status", "reward",
    "error_type", "error",
)  # fmt: skip

_text = st.text(max_size=12)  # control characters, quotes, backslashes, accents, astral characters
# Both sides of [1e-4, 1e15) (where the writers' forms part), -0.0, ties; mostly inside.
_float = st.one_of(
    st.floats(1e-4, 1e6), st.floats(-1e14, 1e14), st.floats(allow_nan=False, allow_infinity=False)
)
_number = st.one_of(st.integers(-(2**64), 2**64), _float)
_leaf = st.one_of(st.none(), st.booleans(), _number, _text)
_json = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=6,
)


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


_usage = st.dictionaries(
    st.sampled_from(
        [
            "prompt_tokens", "completion_tokens", "input_tokens", "output_tokens", "cached_tokens",
            "prompt_tokens_details", "input_tokens_details", "completion_tokens_details", "total_tokens",
        ]
    ),
    st.one_of(st.integers(-5, 2**64), _float, st.dictionaries(st.sampled_from(["cached_tokens", "x"]), _leaf)),
)  # fmt: skip
_arguments = st.one_of(_text, _json, st.just('{"a": [1, 2.5e-7, "é"]}'), st.just("[1]"), st.just(""))
_tool_call = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.sampled_from(["c1", "c2", ""]), st.integers(0, 3)),
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {}, optional={"name": st.one_of(_text, st.none(), st.integers()), "arguments": _arguments}
        ),
    },
)
_content = st.one_of(
    _text,
    st.none(),
    _json,
    st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["text", "image_url"])},
            optional={"text": st.one_of(_text, st.none(), st.integers())},
        ),
        max_size=3,
    ),
)
_message = st.fixed_dictionaries(
    {},
    optional={
        "role": st.one_of(
            st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "critic", ""]),
            st.none(),
            st.integers(),
        ),
        "content": _content,
        "tool_calls": st.one_of(st.lists(_tool_call, max_size=2), _leaf),
        "tool_call_id": st.one_of(st.sampled_from(["c1", "c2", "zz"]), _leaf),
        "reasoning_content": st.one_of(_text, _json),
        "model": st.one_of(_text, _leaf),
        "model_name": _leaf,
        "usage": st.one_of(_usage, _leaf),
        "extra": st.one_of(
            st.fixed_dictionaries({}, optional={"response": st.fixed_dictionaries({}, optional={"model": _leaf, "usage": _usage})}),
            st.just({"timestamp": 1700000000}),
            _leaf,
        ),
        "created_at": st.sampled_from(["2026-01-02T03:04:05Z", 1700000000.5, None]),
        "name": _text,
    },
)  # fmt: skip
# Messages of the shapes the core writes itself (no own timestamps, roles and ids as text).
_plain_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "tool", "critic"]), "content": _content},
    optional={
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {"id": st.sampled_from(["c1", "c2", ""]), "function": st.fixed_dictionaries(
                    {"name": st.sampled_from(["add", ""])}, optional={"arguments": _arguments}
                )}
            ),
            max_size=2,
        ),
        "tool_call_id": st.sampled_from(["c1", "c2", "zz"]),
        "reasoning_content": st.one_of(_text, _json),
        "model": st.sampled_from(["m1", ""]),
        "usage": _usage,
        "extra": st.fixed_dictionaries({}, optional={"response": st.fixed_dictionaries({}, optional={"model": _text, "usage": _usage})}),
    },
)  # fmt: skip
_call = st.dictionaries(
    st.sampled_from(
        [
            "prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "model_name", "logprobs",
            "prompt_token_ids", "extra", "latency_ms",
        ]
    ),
    st.one_of(_number, _text, st.none(), st.lists(_number, max_size=2), st.dictionaries(_text, _leaf, max_size=2)),
)  # fmt: skip
_messages = st.one_of(
    st.lists(_plain_message, min_size=1, max_size=5),
    st.lists(_plain_message, min_size=1, max_size=5),
    st.lists(st.one_of(_message, _leaf), max_size=5),
    _leaf,
)
_record = st.fixed_dictionaries(
    {
        "row_index": st.integers(0, 5),
        "run_index": st.integers(0, 2),
        "rollout_id": st.integers(0, 5).flatmap(lambda i: st.integers() if i == 0 else _text),
    },
    optional={
        "messages": _messages,
        "final_messages": _messages,
        "trajectory": st.one_of(st.booleans(), st.none()),
        "llm_calls": st.one_of(
            st.lists(_call, max_size=3), st.lists(st.one_of(_call, _leaf), max_size=3), _leaf
        ),
        "prompt_tokens": st.one_of(st.integers(-3, 2**63), _leaf),
        "completion_tokens": st.one_of(st.integers(0, 9), _leaf),
        "label": _leaf,
        "reward": st.one_of(_number, st.booleans(), st.none()),
        "metrics": _json,
        "request_metadata": _json,
        "request_extra_fields": _json,
        "status": st.sampled_from(["success", "failed", "skipped"]),
        "error_type": _maybe(_text),
        "error": _maybe(_text),
        "source_row_index": st.integers(0, 9),
        "tokens": _number,
        "duration_ms": _float,
        "trajectory_filename": _text,
        "resumed": _leaf,
    },
)


def _python_document(record: dict[str, Any], model: str | None) -> bytes | None:
    try:
        document = trajectory_document(record, model_name=model)
    except Exception:  # what the Python writers refuse, the core must leave to them
        return None
    return None if document is None else trajectory_json(document)


def _python_index_line(record: dict[str, Any], resumed: bool) -> bytes | None:
    try:
        return index_line(record, resumed)
    except ValueError:
        return None


def _core_read(line: bytes, carried: Any, resumed: Any, model: str | None) -> tuple[Any, ...] | None:
    """What the core gives for one log line (written after a header, as in a results log)."""
    header = b'{"format":"osmosis-results/1"}\n'
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "results.jsonl")
        with open(path, "wb") as handle:
            handle.write(header + line)
        ((offset, *read),) = EvalRunItems(path, iter([len(header)]), carried, resumed, model, VERSION)
    assert offset == len(header)
    return None if read[0] is None else tuple(read)


def _has_negative_zero(value: Any) -> bool:
    if isinstance(value, float):
        return value == 0.0 and math.copysign(1.0, value) < 0
    if isinstance(value, dict):
        return any(_has_negative_zero(v) for v in value.values())
    return isinstance(value, list) and any(_has_negative_zero(v) for v in value)


def _check(
    record: dict[str, Any], model: str | None = "openai/m", resumed: bool = False
) -> tuple[Any, ...] | None:
    """Compares the core with the Python writers on one record; returns what the core gave."""
    line = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)  # as the results log writes it
    parsed = orjson.loads(line)
    conversation = bool(_conversation(parsed))
    if conversation:
        parsed["trajectory_filename"] = "trajectory.json"
    ids = {parsed["rollout_id"]} if resumed and isinstance(parsed["rollout_id"], str) else set()
    read = _core_read(line, (), ids, model)
    if _has_negative_zero(parsed):  # `-0.0` and `-0` read alike in the core: the line is Python's
        assert read is None
        return read
    assert read is not None
    fields, core_conversation, document, index, written = read
    assert core_conversation == conversation and written is False  # no files to write to
    expected = {k: parsed[k] for k in FIELDS if k in parsed}
    assert fields == expected and list(fields) == list(expected)
    if document is not None:
        assert conversation and document == _python_document(parsed, model)
    if index is not None:
        assert index == _python_index_line(parsed, bool(ids))
    return read


@settings(max_examples=400, deadline=None)  # no timing: a loaded machine must not fail it
@given(_record, st.sampled_from([None, "", "openai/m", "é model"]), st.booleans())
def test_the_core_writes_what_the_python_writers_write(
    record: dict[str, Any], model: Any, resumed: bool
) -> None:
    try:
        orjson.dumps(record)
    except TypeError:  # an integer past 64 bits: no results log holds one
        return
    _check(record, model, resumed)


# What the core always writes itself: text, integers, booleans, nulls and floats written alike by both
# writers, in every shape of message, call and context.
_safe_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(1e-4, 1e14), _text
)
_safe_json = st.recursive(
    _safe_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=6,
)
_safe_usage = st.dictionaries(
    st.sampled_from(["prompt_tokens", "completion_tokens", "input_tokens", "output_tokens", "cached_tokens"]),
    st.integers(0, 2**40),
) | st.fixed_dictionaries(
    {
        "input_tokens": st.integers(0, 9),
        "input_tokens_details": st.fixed_dictionaries({"cached_tokens": st.integers(0, 9)}),
    }
)
_safe_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "critic"])},
    optional={
        "content": st.one_of(_text, _safe_json, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _text}), max_size=2)),
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {"id": st.sampled_from(["c1", "c2", ""]), "function": st.fixed_dictionaries(
                    {"name": st.sampled_from(["add", ""])},
                    optional={"arguments": st.one_of(_safe_json.map(json.dumps), st.dictionaries(_text, _safe_leaf))},
                )}
            ),
            max_size=2,
        ),
        "tool_call_id": st.sampled_from(["c1", "c2", "zz"]),
        "reasoning_content": st.one_of(_text, _safe_json),
        "model": st.sampled_from(["m1", ""]),
        "usage": _safe_usage,
        "extra": st.fixed_dictionaries({"response": st.fixed_dictionaries({"model": _text, "usage": _safe_usage})}),
    },
)  # fmt: skip
_safe_call = st.dictionaries(
    st.sampled_from(
        ["prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "model_name", "logprobs"]
    ),
    st.one_of(st.integers(0, 2**40), st.floats(1e-4, 1e3), _text, st.lists(st.floats(1e-4, 1.0), max_size=2)),
)
_safe_record = st.fixed_dictionaries(
    {
        "row_index": st.integers(0, 5), "run_index": st.integers(0, 2), "rollout_id": _text,
        "messages": st.lists(_safe_message, min_size=1, max_size=5),
    },
    optional={
        "llm_calls": st.lists(_safe_call, max_size=3),
        "prompt_tokens": st.integers(0, 9), "completion_tokens": st.integers(0, 9),
        "label": _safe_leaf, "reward": st.one_of(st.floats(1e-4, 1.0), st.integers(0, 1), st.none()),
        "metrics": _safe_json, "request_metadata": _safe_json, "request_extra_fields": _safe_json,
        "status": st.sampled_from(["success", "failed"]), "error_type": _text, "duration_ms": st.floats(1e-4, 1e6),
    },
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_safe_record, st.sampled_from([None, "openai/m"]))
def test_usual_shapes_are_always_written_in_the_core(record: dict[str, Any], model: Any) -> None:
    read = _check(record, model)
    assert read is not None
    _, conversation, document, index, _ = read
    assert conversation and document is not None and index is not None


REALISTIC = [
    {
        "row_key": "k", "row_index": 3, "run_index": 1, "model_tag": "", "success": True, "scores": {"reward": 1.0},
        "error": None, "source_row_index": 7, "rollout_id": "r1", "status": "success",
        "llm_calls": [{"prompt_tokens": 50, "completion_tokens": 10, "cost_usd": 0.00012, "model_name": "gpt-x"}],
        "reward": 1.0,
        "messages": [
            {"role": "system", "content": "Be brief.\n\tOK?"},
            {"role": "user", "content": "What is 2+2? \u00e9\u4e2d\U0001f600 \"quoted\" \\ back"},
            {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 2}"}}
            ], "usage": {"prompt_tokens": 50, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 4}}},
            {"role": "tool", "tool_call_id": "c1", "content": "4"},
            {"role": "assistant", "content": [{"type": "text", "text": "4"}], "reasoning_content": "sum"},
        ],
        "label": "4", "duration_ms": 47.38555199583061, "tokens": 60, "metrics": {"steps": 2, "score": 0.5},
        "request_metadata": {"source": "unit"}, "invocation": 0, "invocation_ms": 127.002,
    },
    {
        "row_index": 0, "run_index": 0, "rollout_id": "r2", "status": "failed", "error_type": "timeout",
        "error": "Timed out", "final_messages": [{"role": "user", "content": "hi"}], "prompt_tokens": 9,
        "completion_tokens": None, "reward": None, "duration_ms": 13.0481719970703125,
    },
]  # fmt: skip


def test_usual_records_are_written_in_the_core() -> None:
    for record in REALISTIC:
        for resumed in (False, True):
            read = _check(record, resumed=resumed)
            assert read is not None
            _, conversation, document, index, _ = read
            assert conversation and document is not None and index is not None
            assert json.loads(index).get("resumed") is (True if resumed else None)


def test_carried_rollouts_and_lines_that_are_not_objects_are_left_to_python() -> None:
    line = orjson.dumps(REALISTIC[0]) + b"\n"
    assert _core_read(line, {"r1"}, (), None)[2] is None  # checked on disk first
    for bad in (b"[1]\n", line[:-3] + b"\n", b'{"a": NaN}\n', b""):
        assert _core_read(bad, (), (), None) is None


def test_a_negative_zero_literal_is_left_to_python() -> None:
    # serde_json reads `-0` as the float -0.0, orjson as the integer 0: the core must not decide it.
    line = orjson.dumps(REALISTIC[0]) + b"\n"
    assert _core_read(line, (), (), None) is not None
    for key in (b'"row_index":', b'"reward":'):
        start = line.index(key) + len(key)
        end = start + len(line[start:].split(b",", 1)[0])
        assert _core_read(line[:start] + b"-0" + line[end:], (), (), None) is None


def test_a_failed_link_names_the_path_that_failed(tmp_path) -> None:
    from osmosis_ai.atif import write_trajectory

    target = tmp_path / "row_0_run_0.json"
    target.mkdir()  # an earlier attempt's file is a folder: it cannot be replaced
    with pytest.raises(IsADirectoryError) as caught:
        write_trajectory(str(tmp_path / "r0"), str(target), b"{}")
    assert caught.value.filename == str(target) and caught.value.errno is not None


def test_the_core_writes_the_files_python_writes_and_leaves_it_what_only_python_redacts(tmp_path) -> None:
    from osmosis_ai._core import SecretMasker
    from osmosis_ai.atif import write_trajectory
    from osmosis_ai.redact import redact_bytes, remember

    secret = "sk-core-writes-0123456789"
    remember([secret])
    masked = dict(REALISTIC[0], rollout_id="masked", label=f"key {secret}")
    url = dict(REALISTIC[0], rollout_id="url", row_index=4, label="see https://user:pw@example.com/x")
    odd_name = dict(REALISTIC[0], rollout_id="odd", row_index=5.0)
    records = [masked, url, odd_name]
    header = b'{"format":"osmosis-results/1"}\n'
    log = tmp_path / "results.jsonl"
    lines = [orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in records]
    log.write_bytes(header + b"".join(lines))
    starts = [len(header) + sum(map(len, lines[:i])) for i in range(len(lines))]
    for side in ("core", "python"):
        (tmp_path / side / "trials").mkdir(parents=True)
        (tmp_path / side / "trajectories").mkdir()
    files = (str(tmp_path / "core/trials"), str(tmp_path / "core/trajectories"))
    items = EvalRunItems(str(log), iter(starts), (), (), "openai/m", VERSION, files, SecretMasker([secret]))
    written = {}
    for (_, fields, _, document, _, done), record in zip(items, records, strict=True):
        written[record["rollout_id"]] = done
        name = f"row_{fields['row_index']}_run_{fields['run_index']}.json"
        python_trials, python_target = tmp_path / "python/trials", tmp_path / "python/trajectories" / name
        expected = redact_bytes(_python_document(orjson.loads(orjson.dumps(record)), "openai/m"))
        write_trajectory(str(python_trials / record["rollout_id"]), str(python_target), expected)
        if not done:  # left to Python: a document the core made comes back as made, unmasked
            assert document in (None, _python_document(orjson.loads(orjson.dumps(record)), "openai/m"))
            continue
        assert document is None
        core = tmp_path / "core/trials" / record["rollout_id"] / "trajectory.json"
        assert core.read_bytes() == expected == (tmp_path / "core/trajectories" / name).read_bytes()
        assert os.path.samefile(core, tmp_path / "core/trajectories" / name)
    assert written == {"masked": True, "url": False, "odd": False}
    assert secret.encode() not in (tmp_path / "core/trials/masked/trajectory.json").read_bytes()
