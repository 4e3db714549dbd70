"""Runs survive misbehaving user code, bad rows and crashes (issue #22 items 1-3): the real CLI in a subprocess.

The subprocess timeouts below are hang guards, not timing assertions: before the fix these commands never
exited at all.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.test_eval_cli import EXAMPLES, OSMOSIS, eval_args, osmosis, write_rows

BLOCKING = """
import threading
import time

from osmosis_ai.rollout import RolloutAgentLoop


class Blocking(RolloutAgentLoop):
    name = "blocking"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        if "block" in ctx.request.messages[-1]["content"]:
            time.sleep(3600)  # sync code inside an async agent: blocks whatever loop runs it
        reply = await ctx.chat(ctx.request.messages)
        return ctx.complete([*ctx.request.messages, reply.message])


agent = Blocking()


def never_returns(solution_str, ground_truth, extra_info=None):
    threading.Event().wait()


class Hanging(RolloutAgentLoop):
    name = "hanging"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        if "hang" in ctx.request.messages[-1]["content"]:
            import asyncio

            await asyncio.Event().wait()  # until the run is cancelled
        reply = await ctx.chat(ctx.request.messages)
        return ctx.complete([*ctx.request.messages, reply.message])


hanging = Hanging()
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "blocking.py").write_text(BLOCKING)
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    return tmp_path


def _records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()[1:]]


def test_a_sync_eval_function_that_never_returns_does_not_keep_the_process_alive(scripted, project) -> None:
    dataset = write_rows(project / "data.jsonl", [("q-one", "1")])
    server = scripted({"default": {"content": "1"}})
    args = eval_args(server, dataset, project, "--no-preflight", "--run-timeout", "1", agent="blocking:agent")
    args[args.index("--eval-fn") + 1] = "blocking:never_returns"
    result = osmosis(*args, cwd=project, timeout=60)  # a hang raises TimeoutExpired
    assert result.returncode == 1, result.stderr
    [record] = _records(project / "log.jsonl")
    assert record["error"] == "Run timed out after 1s"
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["eval", "test"])
def test_an_agent_that_blocks_its_loop_times_out_and_later_rows_still_run(scripted, project, command) -> None:
    dataset = write_rows(project / "data.jsonl", [("please block", "1"), ("q-fast", "1")])
    server = scripted({"default": {"content": "1"}})
    # 5 s: the fast row must finish inside it on a loaded machine too; only the blocking one cannot.
    if command == "eval":
        args = eval_args(
            server, dataset, project, "--no-preflight", "--run-timeout", "5", "--max-failure-rate", "0.5",
            agent="blocking:agent",
        )  # fmt: skip
    else:
        args = [
            "test", "-m", "blocking:agent", "-d", str(dataset), "--model", "org/scripted-model",
            "--base-url", server.base_url, "--run-timeout", "5",
        ]  # fmt: skip
    result = osmosis(*args, cwd=project, timeout=60)
    if command == "eval":
        assert result.returncode == 0, result.stderr
        records = sorted(_records(project / "log.jsonl"), key=lambda r: r["row_index"])
        assert [r["error"] for r in records] == ["Run timed out after 5s", None]
        assert records[1]["success"]
    else:
        assert result.returncode == 1, result.stderr
        assert "Row 0: FAILED" in result.stdout and "timed out after 5s" in result.stdout
        assert "Row 1: OK" in result.stdout


def test_sigterm_on_eval_keeps_finished_runs_and_exits_with_a_message(scripted, tmp_path) -> None:
    # One run at a time: the first four rows are answered, the fifth's model call is held by the server
    # (never answered), so SIGTERM arrives with exactly four runs finished, however loaded the machine.
    rows = [(f"q-{i}", "1") for i in range(4)] + [(f"q-hold-{i}", "1") for i in range(36)]
    dataset = write_rows(tmp_path / "data.jsonl", rows)
    server = scripted({"default": {"content": "1"}, "by_prompt": {"q-hold": [{"hold": True}]}})
    out = tmp_path / "out.json"
    args = eval_args(server, dataset, tmp_path, "--no-preflight", "--batch-size", "1")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.Popen(
        [OSMOSIS, *args], cwd=EXAMPLES, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    log = tmp_path / "log.jsonl"
    server.wait_held(1)
    proc.send_signal(signal.SIGTERM)
    stderr = proc.communicate(timeout=60)[1]
    assert proc.returncode == 143, stderr  # 128 + SIGTERM; Ctrl+C is 130
    assert "Terminated (SIGTERM):" in stderr and f"--resume {log}" in stderr
    assert "Traceback" not in stderr
    assert len(_records(log)) == 4
    # The -o file holds what finished, marked as interrupted (the README's promise).
    document = json.loads(out.read_text())
    assert document["interrupted"] is True
    assert sum(len(row["runs"]) for row in document["rows"]) == 4


def test_sigterm_on_test_writes_the_finished_rows_marked_interrupted(scripted, project) -> None:
    dataset = write_rows(project / "data.jsonl", [("q-fast", "1"), ("please hang", "1")])
    server = scripted({"default": {"content": "1"}})
    out = project / "out.json"
    args = [
        OSMOSIS, "test", "-m", "blocking:hanging", "-d", str(dataset), "--model", "org/scripted-model",
        "--base-url", server.base_url, "-o", str(out),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.Popen(
        args, cwd=project, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:  # the fast row's line is printed once it is finished
        if "Row 0: OK" in line:
            break
    proc.send_signal(signal.SIGTERM)
    stderr = proc.communicate(timeout=60)[1]
    assert proc.returncode == 143, stderr
    assert "Terminated (SIGTERM): 1 row(s) finished." in stderr and "Traceback" not in stderr
    document = json.loads(out.read_text())
    assert document["interrupted"] is True
    assert [r["row_index"] for r in document["results"]] == [0] and document["results"][0]["success"]


@pytest.mark.parametrize(
    ("bad_line", "expected"),
    [
        ("{not json", "line 1100"),
        ('{"user_prompt": 5, "system_prompt": "s", "ground_truth": "1"}', "user_prompt"),
        ("[1, 2]", "line 1100"),
    ],
)
def test_a_bad_row_is_refused_before_any_run(scripted, tmp_path, bad_line, expected) -> None:
    # eval checks the whole dataset before the first run: a bad row costs no request and no log.
    dataset = write_rows(tmp_path / "data.jsonl", [(f"q-{i}", "1") for i in range(1099)])
    with dataset.open("a") as out:
        out.write(bad_line + "\n")
    server = scripted({"default": {"content": "1"}})
    result = osmosis(
        *eval_args(server, dataset, tmp_path, "--no-preflight", "--batch-size", "8"), timeout=300
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "never retrieved" not in result.stderr
    assert f"{dataset}" in result.stderr and expected in result.stderr
    assert not (tmp_path / "log.jsonl").exists() and server.requests() == []


def test_a_bad_row_met_mid_run_keeps_every_finished_item() -> None:
    # A file that changes under a run (or a reader error past the up-front check) is met while items are
    # in flight: those still finish and are logged, then the run raises the reader's error.
    import asyncio

    from osmosis_ai.errors import DatasetFormatError
    from osmosis_ai.runs.engine import RunEngine
    from osmosis_ai.runs.work import MemorySink, WorkItem

    class Echo:
        def new_record(self, item):
            return {"row_index": item.row_index, "success": False, "scores": {}}

        async def execute(self, item, record, control):
            await asyncio.sleep(0.001)
            record["success"] = True

        def finish(self, item, record):
            pass

    def items():
        for i in range(50):
            yield WorkItem(i, {"q": i}, f"k{i}", 0)
        raise DatasetFormatError("data.jsonl:51: bad row")

    sink = MemorySink()
    engine = RunEngine(Echo(), sink, concurrency=8)
    with pytest.raises(DatasetFormatError, match=r"data\.jsonl:51"):
        asyncio.run(engine.run(items()))
    assert sorted(r["row_index"] for r in sink.records) == list(range(50))


def test_a_torn_last_line_is_dropped_and_reported_on_resume(scripted, tmp_path) -> None:
    dataset = write_rows(tmp_path / "data.jsonl", [("q-one", "1"), ("q-two", "1")])
    server = scripted({"default": {"content": "1"}})
    args = eval_args(server, dataset, tmp_path, "--no-preflight", "--limit", "1")
    assert osmosis(*args).returncode == 0
    log = tmp_path / "log.jsonl"
    with log.open("ab") as handle:
        handle.write(b'{"row_key": "abc", "run_in')  # a crash mid-write
    resumed = [a for a in args if a not in ("--log", str(log))] + ["--resume", str(log)]
    result = osmosis(*resumed)
    assert result.returncode == 0, result.stderr
    assert f"{log}:3: dropped an incomplete last line" in result.stderr
    assert len(_records(log)) == 1 and log.read_bytes().endswith(b"}\n")


class _Misbehaving:
    """Row 0 blocks its loop until ``gate`` opens; row 1 ignores its cancellation once; others answer."""

    def __init__(self) -> None:
        import threading

        self.gate = threading.Event()

    def new_record(self, item):
        return {"row_index": item.row_index, "success": False, "scores": {}, "error": None}

    async def execute(self, item, record, control):
        import asyncio

        if item.row_index == 0:
            self.gate.wait()  # sync code in a coroutine: nothing else on this loop runs meanwhile
        elif item.row_index == 1:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                await asyncio.sleep(30)
        await asyncio.sleep(0.001)
        record["success"] = True

    def finish(self, item, record):
        record["finished"] = True


@pytest.mark.parametrize("blocked_row", [0, 1])
def test_an_isolated_run_gives_up_an_item_its_lane_cannot_time_out(blocked_row) -> None:
    # Row 0 blocks the lane: it is abandoned (with what it held) and a fresh lane runs the rest. Row 1 only
    # ignores its cancellation: the lane keeps running, that item alone is logged as timed out.
    import asyncio

    from osmosis_ai.runs.engine import RunEngine
    from osmosis_ai.runs.work import MemorySink, WorkItem

    executor = _Misbehaving()
    sink = MemorySink()
    engine = RunEngine(executor, sink, concurrency=2, item_timeout=0.2, isolate=True, handle_signals=False)
    items = [WorkItem(blocked_row, {"q": blocked_row}, "k", 0)]
    items += [WorkItem(i, {"q": i}, f"k{i}", 0) for i in range(2, 12)]
    try:
        outcome = asyncio.run(asyncio.wait_for(engine.run(items), 30))
    finally:
        executor.gate.set()
    by_row = {r["row_index"]: r for r in sink.records}
    assert by_row.pop(blocked_row)["error"] == "Run timed out after 0.2s"
    # An item the abandoned lane was running beside the blocked one times out with it; the rest succeed.
    assert all(r["success"] for r in by_row.values() if r["error"] is None)
    assert sorted(by_row) == list(range(2, 12)) and all(r["finished"] for r in sink.records)
    assert outcome.executed == 11 and engine.abandoned_lanes == (1 if blocked_row == 0 else 0)
    time.sleep(0.1)  # the released lane finds itself abandoned and logs nothing more
    assert len(sink.records) == 11


SLOW_REWARD = """
import time

def slow(solution_str, ground_truth, extra_info=None):
    time.sleep(0.05)
    return 1.0
"""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_reward_probe_exits_with_the_signal_code_and_the_resume_command(
    tmp_path, sig, code
) -> None:
    (tmp_path / "slow_reward.py").write_text(SLOW_REWARD)
    write_rows(tmp_path / "data.jsonl", [(f"q-{i}", "1") for i in range(200)])
    log = tmp_path / "probe.jsonl"
    proc = subprocess.Popen(
        [OSMOSIS, "reward", "probe", "-d", "data.jsonl", "--eval-fn", "slow_reward:slow", "--log", str(log)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 3):
        time.sleep(0.02)
    proc.send_signal(sig)
    stderr = proc.communicate(timeout=60)[1]
    assert proc.returncode == code, stderr
    assert f"are saved in {log}" in stderr and "--resume" in stderr and "Traceback" not in stderr


class _Stubborn:
    """Row 0 shrugs off its cancellation for a while; the rest take a moment each. Counts items in flight."""

    def __init__(self) -> None:
        self.active = self.peak = 0

    def new_record(self, item):
        return {"row_index": item.row_index, "success": False, "scores": {}, "error": None}

    async def execute(self, item, record, control):
        import asyncio

        if item.row_index == 0:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                await asyncio.sleep(1.5)  # past the watcher's grace: given up, its worker replaced
            return
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(0.02)
        finally:
            self.active -= 1
        record["success"] = True

    def finish(self, item, record):
        pass


def test_a_worker_held_by_a_given_up_item_is_replaced_not_added() -> None:
    import asyncio

    from osmosis_ai.runs.engine import RunEngine
    from osmosis_ai.runs.work import MemorySink, WorkItem

    executor, sink = _Stubborn(), MemorySink()
    # 2 s: far beyond an item's 0.02 s even on a loaded machine, so only row 0 can time out.
    engine = RunEngine(executor, sink, concurrency=2, item_timeout=2.0, isolate=True, handle_signals=False)
    items = [WorkItem(i, {"q": i}, f"k{i}", 0) for i in range(200)]
    asyncio.run(asyncio.wait_for(engine.run(items), 120))
    by_row = {r["row_index"]: r for r in sink.records}
    assert len(sink.records) == 200 and by_row[0]["error"] == "Run timed out after 2s"
    assert all(by_row[i]["success"] for i in range(1, 200))
    # While row 0 held one worker, one other ran; after it was given up, two again: never three.
    assert executor.peak == 2


WRONG_RETURN = """
from osmosis_ai.rollout import RolloutAgentLoop


class ReturnsInt(RolloutAgentLoop):
    name = "returns-int"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        return 3


agent = ReturnsInt()
"""


@pytest.mark.parametrize("command", ["eval", "test"])
def test_an_agent_returning_the_wrong_type_is_told_what_was_expected(scripted, tmp_path, command) -> None:
    (tmp_path / "wrong.py").write_text(WRONG_RETURN)
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    dataset = write_rows(tmp_path / "data.jsonl", [("q-1", "1")])
    server = scripted({"default": {"content": "1"}})
    if command == "eval":
        args = eval_args(server, dataset, tmp_path, "--no-preflight", agent="wrong:agent")
    else:
        args = [
            "test",
            "-m",
            "wrong:agent",
            "-d",
            str(dataset),
            "--model",
            "org/m",
            "--base-url",
            server.base_url,
        ]
    result = osmosis(*args, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    output = result.stdout + result.stderr
    if command == "eval":
        [record] = _records(tmp_path / "log.jsonl")
        output = record["error"]
    assert "run() must return a RolloutResult (ctx.complete(...) or ctx.error(...)), got int" in output
    assert "AttributeError" not in output
