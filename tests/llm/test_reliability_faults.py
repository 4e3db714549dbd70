"""Faulty model endpoints (issue #22 item 6): every fault ends as a retried success or a counted, reported
failure, never a 0 in a summary or output file, a hang or a traceback. Real CLI, scripted local server."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_eval_cli import eval_args, osmosis, write_rows

OK = {"content": "1"}
# prompt -> (the replies in order, the last one repeating; whether the run ends as a success)
FAULTS = {
    "q-429-retry-after": ([{"status": 429, "headers": {"Retry-After": "0"}}, OK], True),
    "q-429-bare": ([{"status": 429}, OK], True),
    "q-500": ([{"status": 500}, OK], True),
    "q-502": ([{"status": 502}, OK], True),
    "q-503": ([{"status": 503}, OK], True),
    "q-reset": ([{"fault": "reset"}, OK], True),
    "q-truncated": ([{"fault": "truncate"}, OK], True),
    "q-empty-choices": ([{"fault": "empty_choices"}], False),
    "q-not-json": ([{"fault": "not_json"}], False),
    "q-bad-tool-args": (
        [{"tool_calls": [{"name": "calculator", "raw_arguments": '{"expression": '}]}],
        False,
    ),
    "q-never-finishes": ([{"fault": "stall"}], False),
    "q-always-500": ([{"status": 500}], False),
}


def test_every_fault_is_retried_or_counted(scripted, tmp_path) -> None:
    names = list(FAULTS)
    dataset = write_rows(tmp_path / "data.jsonl", [(name, "1") for name in names])
    server = scripted({"by_prompt": {name: replies for name, (replies, _) in FAULTS.items()}})
    args = eval_args(
        server, dataset, tmp_path, "--no-preflight", "--batch-size", "4", "--run-timeout", "20",
        "--max-failure-rate", "1",
    )  # fmt: skip
    result = osmosis(*args, timeout=300)  # a hang raises TimeoutExpired
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    runs = {row["row_index"]: row["runs"][0] for row in out["rows"]}
    assert len(runs) == len(names)
    failed = 0
    for index, name in enumerate(names):
        run, succeeds = runs[index], FAULTS[name][1]
        assert bool(run["success"]) is succeeds, (name, run)
        if succeeds:
            assert run["scores"] == {"reward_fn.compute_reward:numbers_match_reward": 1.0}, name
        else:
            failed += 1
            assert run["error"], name  # reported, with a reason
            assert not run.get("scores"), name  # never scored as 0
    # Counted as failures (the established aggregates treat a failed attempt as 0.0: eval/summary.py).
    assert out["summary"]["failed_runs"] == failed


@pytest.mark.parametrize("fault", [{"fault": "reset"}, {"fault": "empty_choices"}, {"status": 503}])
def test_judge_faults_are_retried_or_counted(scripted, tmp_path, fault) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"rubric_id": "polite", "solution_str": "hello there"}) + "\n")
    (tmp_path / "rubric_configs.yaml").write_text(
        "version: 1\ndefault_score_min: 0.0\ndefault_score_max: 1.0\n"
        "polite:\n  id: polite\n  rubric: Is it polite?\n"
        "  model_info: {provider: openai, model: judge-model, api_key: sk-local-judge}\n"
    )
    server = scripted({"responses": [fault], "default": {"score": 0.75, "explanation": "fine"}})
    result = osmosis(
        "eval-rubric", "-r", "polite", "-d", str(records), "--base-url", server.base_url,
        "-o", str(tmp_path / "out.json"),
        cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in result.stdout + result.stderr
    stats = json.loads((tmp_path / "out.json").read_text())["overall_statistics"]
    if "choices" in fault.get("fault", ""):
        # Not retried (the endpoint answered, wrongly): a counted error, and no score is not a 0.0.
        assert result.returncode == 1
        assert stats["failure_count"] == 1 and stats["success_count"] == 0
        assert [stats[k] for k in ("average", "min", "max")] == [None, None, None]
    else:
        assert result.returncode == 0, result.stderr
        assert stats["average"] == 0.75
