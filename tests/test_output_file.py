"""The `-o` rule (issue #32 item 3): checked before anything runs, never over what is not a regular file,
written through a symbolic link, `-` for standard output. The real CLI against a scripted server."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from osmosis_ai._files import (
    check_output_path,
    json_block,
    output_writer,
    write_json_atomic,
    write_json_streamed,
)
from osmosis_ai.errors import OutputPathError
from tests.cli.test_eval_cli import EXAMPLES, eval_args, osmosis, write_rows
from tests.json_text import has_tiny_float


@pytest.fixture
def run(scripted, tmp_path):
    dataset = write_rows(tmp_path / "data.jsonl", [("q-1", "1"), ("q-2", "2")])
    server = scripted({"default": {"content": "1"}})

    def eval_with_output(output: str, *extra: str):
        args = eval_args(server, dataset, tmp_path, "--no-preflight", *extra)
        args[args.index("-o") + 1] = output
        return osmosis(*args), server

    return eval_with_output


def test_a_fifo_is_refused_before_any_run_and_stays_a_fifo(run, tmp_path) -> None:
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    result, server = run(str(fifo))
    assert result.returncode == 2, result.stderr
    assert "FIFO (named pipe), not a regular file" in result.stderr and str(fifo) in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert server.requests() == []  # refused before the first model call
    assert not (tmp_path / "log.jsonl").exists()


def _device(tmp_path: Path) -> Path:
    """A character device to aim at: a node of /dev/full's kind in tmp_path where one can be made (root),
    else /dev/full itself (which an unprivileged run could not replace even before the rule)."""
    node = tmp_path / "full"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        return Path("/dev/full")
    return node


def test_a_device_and_a_socket_are_refused(run, tmp_path) -> None:
    device = _device(tmp_path)
    result, _ = run(str(device))
    assert result.returncode == 2 and "character device" in result.stderr, result.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        result, _ = run(str(path))
    assert result.returncode == 2 and "socket, not a regular file" in result.stderr, result.stderr


def test_a_symlink_to_a_device_is_refused_naming_both(tmp_path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to("/dev/null")
    with pytest.raises(OutputPathError, match=r"out\.json \(/dev/null\) is a character device"):
        check_output_path(link)


@pytest.mark.parametrize("path", ["/proc/nope/x.json", "/sys/x.json"])
def test_a_place_no_file_can_be_created_is_found_before_the_run(run, path) -> None:
    result, server = run(path)
    assert result.returncode == 2, result.stderr
    assert f"cannot create {path}" in result.stderr
    assert server.requests() == []


def test_missing_parents_are_created_as_the_readme_says(run, tmp_path) -> None:
    # Finding 14: the README said a missing parent fails at once, the command created it. The established
    # package creates an -o file's parent directories (anchor-0.2 section 7.10): the README now says so.
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    rule = readme[readme.index("- **`-o` (results file") :].split("\n- **")[0]
    assert "missing parent directories are created" in " ".join(rule.split())
    target = tmp_path / "new" / "deeper" / "out.json"
    result, _ = run(str(target))
    assert result.returncode == 0, result.stderr
    assert json.loads(target.read_text())["summary"]["total_runs"] == 2
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    result, _ = run(str(blocked / "sub" / "out.json"))
    assert result.returncode == 2 and "is not a directory" in result.stderr, result.stderr


def test_a_symlink_is_written_through_to_its_target(run, tmp_path) -> None:
    target = tmp_path / "kept" / "real.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "out-link.json"
    link.symlink_to(target)
    result, _ = run(str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["summary"]["total_runs"] == 2
    assert sorted(p.name for p in target.parent.iterdir()) == ["real.json"]  # no temporary file left


def test_dash_writes_the_results_to_stdout_and_the_text_to_stderr(run) -> None:
    result, _ = run("-")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["summary"]["total_runs"] == 2 and len(document["rows"]) == 2
    assert "Evaluation Results:" in result.stderr
    assert not (EXAMPLES / "-").exists()


def test_dash_and_json_together_are_a_usage_error(run) -> None:
    result, server = run("-", "--json")
    assert result.returncode == 2, result.stderr
    assert "-o - and --json both write to standard output" in result.stderr
    assert server.requests() == []


def test_a_replaced_file_keeps_its_mode(tmp_path) -> None:
    target = tmp_path / "r.json"
    target.write_text("{}")
    target.chmod(0o640)
    write_json_atomic(target, {"ok": True})
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert json.loads(target.read_text()) == {"ok": True}


def test_a_write_interrupted_midway_keeps_the_previous_file_whole(tmp_path) -> None:
    # Ctrl+C (or any error) while the document is being written: the file that was there stays as it was,
    # and no temporary file is left beside it.
    target = tmp_path / "r.json"
    target.write_text('{"previous": true}')
    with pytest.raises(KeyboardInterrupt), output_writer(target) as write:
        write('{"rows": [')
        raise KeyboardInterrupt
    assert json.loads(target.read_text()) == {"previous": True}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize(
    ("head", "items", "tail"),
    [
        ({"a": 1, "nested": {"x": [1, 2.5, None]}}, [{"text": "é\n\u2028", "n": []}, 3], {"z": "q", "e": {}}),
        ({}, [], {}),
        ({"a": 1}, [], {"b": 2}),
        ({}, ["only"], {}),
    ],
)
def test_a_streamed_document_reads_as_the_whole_one_written_at_once(tmp_path, head, items, tail, ascii_only):
    whole, streamed = tmp_path / "whole.json", tmp_path / "streamed.json"
    write_json_atomic(whole, {**head, "rows": items, **tail}, ensure_ascii=ascii_only)
    write_json_streamed(streamed, head, "rows", iter(items), lambda: tail, ensure_ascii=ascii_only)
    assert streamed.read_text(encoding="utf-8") == whole.read_text(encoding="utf-8")


def test_a_streamed_document_asks_for_its_tail_after_the_items_and_masks_secrets(tmp_path) -> None:
    from osmosis_ai.redact import remember

    remember(["sk-streamed-secret-1234567890"])
    seen: list[int] = []

    def items():
        for i in range(5000):  # several pieces of the writer
            seen.append(i)
            yield {"i": i, "note": f"key sk-streamed-secret-1234567890 #{i}"}

    target = tmp_path / "r.json"
    write_json_streamed(target, {"head": True}, "rows", items(), lambda: {"counted": len(seen)})
    text = target.read_text()
    assert "sk-streamed-secret" not in text
    document = json.loads(text)
    assert document["counted"] == 5000 and len(document["rows"]) == 5000


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES, st.booleans())
@example({"big": 2**70, "lone": "\ud800", "astral": "\U0001f600"}, True)  # the standard encoder's cases
@example({"big": 2**70, "lone": "\ud800", "astral": "\U0001f600"}, False)
def test_a_json_block_is_json_dumps_text(value, ascii_only) -> None:
    # The one difference: a float below 1e-4 is written in full (the same number).
    block = json_block(value, ensure_ascii=ascii_only)
    assert json.loads(block) == value
    if not has_tiny_float(value):
        assert block == json.dumps(value, indent=2, ensure_ascii=ascii_only, default=str)
