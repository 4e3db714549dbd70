"""`osmosis eval` end to end: the real CLI in a subprocess against a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.json_text import assert_json_dumps_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
OSMOSIS = str(Path(sys.executable).parent / "osmosis")
REWARD = "reward_fn.compute_reward:numbers_match_reward"

FAILING_AGENT = """
from osmosis_ai.rollout import RolloutAgentLoop

class Flaky(RolloutAgentLoop):
    name = "flaky"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        if "explode" in ctx.request.messages[-1]["content"]:
            raise RuntimeError("agent blew up on purpose")
        if "refuse" in ctx.request.messages[-1]["content"]:
            return ctx.error("agent declined this row")
        reply = await ctx.chat(ctx.request.messages, **ctx.request.completion_params)
        return ctx.complete([*ctx.request.messages, reply.message])

agent = Flaky()
"""


def write_rows(path: Path, prompts: list[tuple[str, str]]) -> Path:
    with path.open("w") as out:
        for prompt, truth in prompts:
            out.write(
                json.dumps(
                    {"system_prompt": "Answer with a number.", "user_prompt": prompt, "ground_truth": truth}
                )
                + "\n"
            )
    return path


def osmosis(*args: str, cwd: Path = EXAMPLES, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}
    return subprocess.run([OSMOSIS, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def eval_args(
    server: Any, dataset: Path, tmp_path: Path, *extra: str, agent: str = "math_agent:agent_loop"
) -> list[str]:
    return [
        "eval", "-m", agent, "-d", str(dataset), "--model", "org/scripted-model", "--base-url", server.base_url,
        "--eval-fn", REWARD, "-o", str(tmp_path / "out.json"), "--log", str(tmp_path / "log.jsonl"), *extra,
    ]  # fmt: skip


@pytest.fixture
def three_rows(tmp_path: Path) -> Path:
    return write_rows(
        tmp_path / "data.jsonl", [("q-alpha: 1+1?", "2"), ("q-beta: 2+2?", "4"), ("q-gamma: 3+3?", "6")]
    )


def test_pass_at_k_is_exact_and_the_output_has_the_established_schema(scripted, three_rows, tmp_path) -> None:
    # alpha passes 2 of 3 runs, beta 0 of 3, gamma 3 of 3 (sequential, so the per-prompt queues are exact).
    server = scripted(
        {
            "by_prompt": {
                "q-alpha": [{"content": "2"}, {"content": "5"}, {"content": "2"}],
                "q-beta": [{"content": "no idea"}],
                "q-gamma": [{"content": "6"}],
            },
            "default": {"content": "1"},
        }
    )
    result = osmosis(*eval_args(server, three_rows, tmp_path, "--n", "3", "--no-preflight"))
    assert result.returncode == 0, result.stderr  # a score of 0.0 is a result, not a failed run
    out = assert_json_dumps_text(tmp_path / "out.json")  # the established text, written as it streams
    assert set(out) == {"config", "summary", "rows"}
    assert out["config"] == {
        "model": "org/scripted-model",
        "n_runs": 3,
        "pass_threshold": 1.0,
        "eval_fns": [REWARD],
    }
    summary = out["summary"]["eval_fns"][REWARD]
    assert summary["mean"] == pytest.approx(5 / 9)
    assert summary["min"] == 0.0 and summary["max"] == 1.0
    assert summary["pass_at_1"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert summary["pass_at_3"] == pytest.approx((1 + 0 + 1) / 3)
    assert "pass_at_5" not in summary
    assert out["summary"]["total_rows"] == 3 and out["summary"]["total_runs"] == 9
    assert out["summary"]["total_tokens"] == 9 * 60
    row0 = out["rows"][0]
    assert row0["row_index"] == 0
    assert [r["run_index"] for r in row0["runs"]] == [0, 1, 2]
    assert [r["scores"][REWARD] for r in row0["runs"]] == [1.0, 0.0, 1.0]
    assert all(r["success"] and "error" not in r for r in row0["runs"])
    assert "Evaluation Results:" in result.stdout and "pass@3" in result.stdout


def test_all_runs_succeeding_exits_zero_and_requests_carry_the_endpoint_model(
    scripted, three_rows, tmp_path
) -> None:
    server = scripted({"default": {"content": "The answer is 4"}})
    result = osmosis(*eval_args(server, three_rows, tmp_path, "--batch-size", "4", "--temperature", "0.2"))
    assert result.returncode == 0, result.stderr
    bodies = [b for b in server.requests() if b.get("max_tokens") != 1]  # the preflight asks for one token
    assert len(bodies) == 3
    assert {b["model"] for b in bodies} == {"org/scripted-model"}  # a '/' in the name is not a provider
    assert all(b["temperature"] == 0.2 for b in bodies)
    assert all(b["tools"][0]["function"]["name"] == "calculator" for b in bodies)


def test_a_local_server_with_fewer_slots_gets_no_more_runs_at_once(scripted, three_rows, tmp_path) -> None:
    # As eval-rubric's judge calls: llama.cpp's queue wait counts against each call's timeout.
    server = scripted({"default": {"content": "The answer is 4"}, "props": {"total_slots": 1}})
    result = osmosis(*eval_args(server, three_rows, tmp_path, "--batch-size", "4", "--no-preflight"))
    assert result.returncode == 0, result.stderr
    notice = f"The server at {server.base_url} has 1 request slot(s): running 1 runs at a time instead of 4"
    assert result.stderr.count(notice) == 1, result.stderr
    assert len(server.requests()) == 3 and server.most_in_flight() == 1


def test_tool_calls_are_executed_and_fed_back(scripted, tmp_path) -> None:
    dataset = write_rows(tmp_path / "data.jsonl", [("q-tool: 12*(3+4)?", "84")])
    server = scripted(
        {
            "by_prompt": {
                "q-tool": [
                    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "12*(3+4)"}}]},
                    {"content": "84"},
                ]
            }
        }
    )
    result = osmosis(*eval_args(server, dataset, tmp_path, "--no-preflight"))
    assert result.returncode == 0, result.stderr
    second = server.requests()[1]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["content"] == "84"
    assert second[-2]["tool_calls"][0]["function"]["name"] == "calculator"
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["rows"][0]["runs"][0]["scores"][REWARD] == 1.0


def test_failed_runs_are_recorded_with_their_error_and_set_the_exit_code(scripted, tmp_path) -> None:
    (tmp_path / "flaky_agent.py").write_text(FAILING_AGENT)
    dataset = write_rows(
        tmp_path / "data.jsonl",
        [("fine 1", "1"), ("explode now", "1"), ("refuse this", "1"), ("fine 2", "1")],
    )
    server = scripted({"default": {"content": "1"}})
    # The agent lives in tmp_path and the reward function in examples/: run from tmp_path with both importable.
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    result = osmosis(
        *eval_args(server, dataset, tmp_path, "--no-preflight", agent="flaky_agent:agent"), cwd=tmp_path
    )
    assert result.returncode == 1
    assert "2 of 4 runs errored" in result.stderr
    assert "Traceback" not in result.stderr
    runs = {r["row_index"]: r["runs"][0] for r in json.loads((tmp_path / "out.json").read_text())["rows"]}
    assert runs[1]["error"] == "RuntimeError: agent blew up on purpose"
    assert runs[2]["error"] == "agent declined this row"  # the agent's own message is kept
    assert runs[0]["success"] and runs[3]["success"]
    again = tmp_path / "again"
    again.mkdir()
    tolerant = osmosis(
        *eval_args(
            server, dataset, again, "--no-preflight", "--max-failure-rate", "0.5", agent="flaky_agent:agent"
        ),
        cwd=tmp_path,
    )
    assert tolerant.returncode == 0, tolerant.stderr


def test_a_systemic_error_stops_before_the_run(scripted, three_rows, tmp_path) -> None:
    server = scripted({"default": {"status": 401, "message": "invalid api key"}})
    result = osmosis(*eval_args(server, three_rows, tmp_path))
    assert result.returncode == 1
    assert "Error: Preflight check failed for model 'org/scripted-model'" in result.stderr
    assert "HTTP 401" in result.stderr and "invalid api key" in result.stderr
    assert len(server.requests()) == 1


def test_a_systemic_error_during_the_run_stops_early(scripted, three_rows, tmp_path) -> None:
    server = scripted({"default": {"status": 404, "message": "model not found"}})
    result = osmosis(*eval_args(server, three_rows, tmp_path, "--no-preflight", "--n", "5"))
    assert result.returncode == 1
    assert "stopped early" in result.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["summary"]["stopped_early"] is True
    assert "HTTP 404" in out["summary"]["stop_reason"]
    assert out["summary"]["total_runs"] < 15


def test_a_slow_run_times_out_and_the_eval_goes_on(scripted, tmp_path) -> None:
    dataset = write_rows(tmp_path / "data.jsonl", [("q-slow", "1"), ("q-fast", "1")])
    server = scripted({"by_prompt": {"q-slow": [{"content": "1", "delay": 5}], "q-fast": [{"content": "1"}]}})
    result = osmosis(
        *eval_args(
            server, dataset, tmp_path, "--no-preflight", "--run-timeout", "0.5", "--max-failure-rate", "0.5"
        )
    )
    assert result.returncode == 0, result.stderr
    runs = [r["runs"][0] for r in json.loads((tmp_path / "out.json").read_text())["rows"]]
    assert runs[0]["error"] == "Run timed out after 0.5s"
    assert runs[1]["success"]


def test_baseline_model_adds_model_summaries(scripted, three_rows, tmp_path) -> None:
    server = scripted(
        {"by_model": {"org/scripted-model": {"content": "2 4 6"}, "other-model": {"content": "0"}}}
    )
    result = osmosis(
        *eval_args(
            server,
            three_rows,
            tmp_path,
            "--baseline-model",
            "other-model",
            "--baseline-base-url",
            server.base_url,
        )
    )
    assert result.returncode == 0, result.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["config"]["baseline_model"] == "other-model"
    tags = {s["model_tag"]: s for s in out["model_summaries"]}
    assert set(tags) == {"primary", "baseline"}
    assert tags["baseline"]["model"] == "other-model"
    assert {r["model_tag"] for row in out["rows"] for r in row["runs"]} == {"primary", "baseline"}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_resume_after_a_killed_process_gives_the_same_summary(scripted, tmp_path, sig) -> None:
    prompts = [(f"q-{i}", str(i % 3)) for i in range(12)]
    dataset = write_rows(tmp_path / "data.jsonl", prompts)
    plan = {"by_prompt": {f"q-{i}": [{"content": str(i % 2)}] for i in range(12)}}
    server = scripted(plan)
    full_dir = tmp_path / "full"
    full_dir.mkdir()
    straight = osmosis(
        *eval_args(server, dataset, full_dir, "--no-preflight", "--n", "2", "--max-failure-rate", "1")
    )
    assert straight.returncode == 0, straight.stderr
    expected = json.loads((full_dir / "out.json").read_text())["summary"]["eval_fns"]

    part = tmp_path / "part"
    part.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    args = eval_args(
        server, dataset, part, "--no-preflight", "--n", "2", "--max-failure-rate", "1", "--batch-size", "2"
    )
    # Rows 6 and on are held by the server (never answered): once both slots wait on them, the runs of
    # rows 0-5 are logged and no later one can be, however slow the machine.
    server.set_plan(
        {"by_prompt": {k: [{"hold": True}] if int(k[2:]) >= 6 else v for k, v in plan["by_prompt"].items()}}
    )
    proc = subprocess.Popen(
        [OSMOSIS, *args], cwd=EXAMPLES, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    log = part / "log.jsonl"
    server.wait_held(2)
    proc.send_signal(sig)
    stderr = proc.communicate(timeout=120)[1]
    server.set_plan(plan)
    if sig == signal.SIGINT:
        assert proc.returncode == 130, stderr
        assert f"--resume {log}" in stderr
    else:
        assert proc.returncode == -signal.SIGKILL
    logged = len([line for line in log.read_text().splitlines()[1:] if line.endswith("}")])
    assert 5 <= logged < 24

    resumed_args = [a for a in args if a not in ("--log", str(log))] + ["--resume", str(log)]
    resumed = osmosis(*resumed_args)
    assert resumed.returncode == 0, resumed.stderr
    assert f"Resumed: {logged} run(s) kept from the log, {24 - logged} run(s) done now" in resumed.stdout
    out = json.loads((part / "out.json").read_text())
    assert out["summary"]["eval_fns"] == expected
    assert out["summary"]["total_runs"] == 24
    records = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    keys = [(r["row_index"], r["run_index"]) for r in records]
    assert len(keys) == 24 and len(set(keys)) == 24  # nothing lost, nothing run twice


def test_resume_with_a_different_config_is_refused(scripted, three_rows, tmp_path) -> None:
    server = scripted({"default": {"content": "2"}})
    assert (
        osmosis(
            *eval_args(server, three_rows, tmp_path, "--no-preflight", "--max-failure-rate", "1")
        ).returncode
        == 0
    )
    args = eval_args(server, three_rows, tmp_path, "--no-preflight", "--max-turns", "3")
    args = [a for a in args if a not in ("--log", str(tmp_path / "log.jsonl"))] + [
        "--resume",
        str(tmp_path / "log.jsonl"),
    ]
    result = osmosis(*args)
    assert result.returncode == 1
    assert "Cannot resume" in result.stderr and "max_turns: 10 -> 3" in result.stderr


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--n", "0"], "Error: --n must be >= 1."),
        (["--batch-size", "0"], "Error: --batch-size must be >= 1."),
        (["--offset", "-1"], "Error: --offset must be >= 0."),
        (["--limit", "0"], "Error: --limit must be >= 1."),
        (["--baseline-base-url", "http://x"], "require --baseline-model"),
    ],
)
def test_argument_errors(extra: list[str], message: str, tmp_path: Path) -> None:
    result = osmosis(
        "eval", "-m", "math_agent:agent_loop", "-d", "x.jsonl", "--model", "m", "--eval-fn", REWARD, *extra
    )
    assert result.returncode == 2  # a usage error, found before x.jsonl (which does not exist) is read
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_input_errors_name_the_file_and_need_no_traceback(scripted, tmp_path) -> None:
    server = scripted({"default": {"content": "1"}})
    missing = osmosis(*eval_args(server, tmp_path / "nope.jsonl", tmp_path, "--no-preflight"))
    assert missing.returncode == 1 and "nope.jsonl" in missing.stderr and "Traceback" not in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"system_prompt": "s", "user_prompt": "u", "ground_truth": "g"}\n{"system_prompt": "s"}\n'
    )
    result = osmosis(*eval_args(server, bad, tmp_path, "--no-preflight"))
    assert result.returncode == 1
    assert "bad.jsonl, line 2" in result.stderr and "user_prompt" in result.stderr
    good = write_rows(tmp_path / "good.jsonl", [("1+1?", "2")])
    wrong_fn = osmosis(
        *[
            a if a != REWARD else "reward_fn.compute_reward:nope"
            for a in eval_args(server, good, tmp_path, "--no-preflight")
        ]
    )
    assert wrong_fn.returncode == 1 and "has no attribute 'nope'" in wrong_fn.stderr


def test_missing_api_key_for_a_provider_model_is_reported_before_anything_runs(three_rows) -> None:
    result = osmosis(
        "eval",
        "-m",
        "math_agent:agent_loop",
        "-d",
        str(three_rows),
        "--model",
        "anthropic/claude-x",
        "--eval-fn",
        REWARD,
    )
    assert result.returncode == 1
    assert (
        "No API key for provider 'anthropic'" in result.stderr
        and "'ANTHROPIC_API_KEY' is not set" in result.stderr
    )


def test_provider_models_go_through_litellm_with_tools(scripted, three_rows, tmp_path) -> None:
    # No --base-url: the model string is a LiteLLM provider route; OPENAI_BASE_URL points LiteLLM here.
    server = scripted({"default": {"content": "2 4 6"}})
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}
    env.update(
        OPENAI_API_KEY="sk-local-test", OPENAI_BASE_URL=server.base_url, LITELLM_LOCAL_MODEL_COST_MAP="True"
    )
    args = [
        "eval", "-m", "math_agent:agent_loop", "-d", str(three_rows), "--model", "openai/scripted-model",
        "--eval-fn", REWARD, "-o", str(tmp_path / "out.json"), "--log", str(tmp_path / "log.jsonl"),
    ]  # fmt: skip
    result = subprocess.run(
        [OSMOSIS, *args], cwd=EXAMPLES, capture_output=True, text=True, timeout=180, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
    bodies = [b for b in server.requests() if b.get("max_tokens") != 1]
    assert len(bodies) == 3
    assert {b["model"] for b in bodies} == {"scripted-model"}  # LiteLLM strips its provider prefix
    assert all(b["tools"][0]["function"]["name"] == "calculator" for b in bodies)
    summary = json.loads((tmp_path / "out.json").read_text())["summary"]
    # "2 4 6": the last number matches only the third row (ground truth 6).
    assert summary["total_runs"] == 3 and summary["eval_fns"][REWARD]["mean"] == pytest.approx(1 / 3)


def test_against_the_embedded_real_model(local_model, tmp_path) -> None:
    # Plumbing only: a 135M model's answers are not asserted, only that every run completes and is scored.
    dataset = write_rows(tmp_path / "data.jsonl", [("What is 2 + 2?", "4"), ("What is 10 - 3?", "7")])
    args = [
        "eval", "-m", "math_agent:agent_loop", "-d", str(dataset), "--model", "smollm2", "--base-url", local_model.base_url,
        "--eval-fn", REWARD, "--n", "2", "--max-tokens", "16", "--max-failure-rate", "1",
        "-o", str(tmp_path / "out.json"), "--log", str(tmp_path / "log.jsonl"),
    ]  # fmt: skip
    result = osmosis(*args, timeout=300)
    assert result.returncode == 0, result.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    runs = [run for row in out["rows"] for run in row["runs"]]
    assert len(runs) == 4 and all(run["success"] for run in runs)
    assert all(run["tokens"] > 0 and set(run["scores"]) == {REWARD} for run in runs)
    assert set(out["summary"]["eval_fns"][REWARD]) == {"mean", "std", "min", "max", "pass_at_1"}


def test_a_row_breaking_the_contract_is_refused_before_the_first_run(scripted, tmp_path) -> None:
    server = scripted({"default": {"content": "2"}})
    data = tmp_path / "ints.jsonl"
    data.write_text(
        '{"system_prompt": "s", "user_prompt": "1+1?", "ground_truth": "2"}\n'
        '{"system_prompt": "s", "user_prompt": "2+2?", "ground_truth": 4}\n'
        '{"system_prompt": "s", "user_prompt": "3+3?", "ground_truth": 6}\n'
    )
    result = osmosis(*eval_args(server, data, tmp_path))
    assert result.returncode == 1
    assert "ints.jsonl, line 2 (row 1): 'ground_truth' must be a string, got int" in result.stderr
    assert "ints.jsonl, line 3 (row 2)" in result.stderr  # every problem, not only the first
    assert "nothing was run" in result.stderr and '"ground_truth": "4"' in result.stderr
    assert server.requests() == []  # refused before the preflight, too
    assert not (tmp_path / "log.jsonl").exists()


def test_a_missing_dataset_is_reported_before_the_agent_loads(tmp_path) -> None:
    # The agent module would fail too; the cheap local check (the dataset file) speaks first.
    result = osmosis(
        "eval", "-m", "no_such_agent_module:agent", "-d", str(tmp_path / "missing.jsonl"),
        "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--eval-fn", REWARD,
    )  # fmt: skip
    assert result.returncode != 0
    assert "missing.jsonl" in result.stderr and "no_such_agent_module" not in result.stderr


def test_ctrl_c_says_what_never_ran_and_json_gets_the_interrupted_envelope(scripted, tmp_path) -> None:
    # 5 rows x 2 runs; rows 2 and on are held: rows 0-1 finish (4 runs), rows 2-4 never finish a run.
    prompts = [(f"q-{i}", "1") for i in range(5)]
    dataset = write_rows(tmp_path / "data.jsonl", prompts)
    server = scripted(
        {"by_prompt": {f"q-{i}": [{"hold": True}] if i >= 2 else [{"content": "1"}] for i in range(5)}}
    )
    args = eval_args(server, dataset, tmp_path, "--no-preflight", "--n", "2", "--batch-size", "2", "--json")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.Popen(
        [OSMOSIS, *args], cwd=EXAMPLES, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    server.wait_held(2)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    envelope = json.loads(stdout)
    data = envelope["data"]
    assert data["interrupted"] is True and data["results_log"] == str(tmp_path / "log.jsonl")
    summary = data["summary"]
    assert (summary["total_rows"], summary["total_runs"]) == (2, 4)
    assert (summary["planned_rows"], summary["planned_runs"]) == (5, 10)
    expected = "6 of 10 planned runs are missing (3 rows with no finished run, 0 short of n = 2)"
    assert [w for w in summary["warnings"] if expected in w["message"]], summary["warnings"]
    assert expected in stderr
    header = json.loads((tmp_path / "log.jsonl").read_text().splitlines()[0])
    assert header["planned"] == {"rows": 5, "runs": 10}
    written = json.loads((tmp_path / "out.json").read_text())
    assert written["summary"]["warnings"] == summary["warnings"]
    report = osmosis("report", str(tmp_path / "log.jsonl"), "-o", str(tmp_path / "page.html"), "--json")
    assert report.returncode == 0, report.stderr
    assert expected in report.stdout
    text = osmosis("report", str(tmp_path / "log.jsonl"), "-o", str(tmp_path / "page.html"))
    assert "2 rows (of 5 planned), 4 runs (of 10 planned)" in text.stdout and "3 incomplete" in text.stdout


HOSTILE_EVAL_FN = """
def flaky(solution_str, ground_truth, extra_info=None, **kwargs):
    if "boom" in solution_str:
        raise ValueError("cannot score " + solution_str)
    return 1.0
"""


def test_model_text_and_exception_messages_reach_the_terminal_escaped(scripted, tmp_path) -> None:
    # The reply carries a colour (CSI), a window title (OSC 0 ... BEL), a clipboard write (OSC 52) and a
    # carriage return; the eval function quotes it in its exception: progress and summary lines show it inert.
    hostile = "boom #### 4\x1b[31mRED\x1b]0;pwned\x07\x1b]52;c;aGk=\x07\rX" + "long " * 60
    (tmp_path / "gm.py").write_text(HOSTILE_EVAL_FN)
    (tmp_path / "math_agent.py").symlink_to(EXAMPLES / "math_agent.py")
    dataset = write_rows(tmp_path / "data.jsonl", [("q1", "4"), ("q2", "4"), ("q3", "4")])
    server = scripted({"default": {"content": hostile}})
    args = eval_args(server, dataset, tmp_path, "--no-preflight")
    args[args.index(REWARD)] = "gm:flaky"
    result = osmosis(*args, cwd=tmp_path)
    shown = result.stdout + result.stderr
    assert "gm:flaky raised: ValueError: cannot score boom #### 4\\x1b[31mRED\\x1b]0;pwned\\x07" in shown, (
        shown
    )
    assert "- gm:flaky: ValueError: cannot score boom" in shown
    assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown
    assert max(len(line) for line in shown.splitlines()) < 200  # the long reply is cut, not echoed whole
