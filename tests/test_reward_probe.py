"""`osmosis reward probe`: a gameable reward (substring match) is flagged; a strict exact match is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_ai.cli.main import main
from osmosis_ai.probes.controls import PROBES, build_controls
from osmosis_ai.probes.probe import other_answers, probe_key
from osmosis_ai.probes.report import build_report

REWARDS = """
def substring(solution_str, ground_truth, extra_info=None):
    return 1.0 if str(ground_truth) in solution_str else 0.0

def exact(solution_str, ground_truth, extra_info=None):
    return 1.0 if solution_str.strip() == str(ground_truth).strip() else 0.0

def never(solution_str, ground_truth, extra_info=None):
    return 0.0

def broken(solution_str, ground_truth, extra_info=None):
    if not solution_str:
        raise ValueError("empty")
    return 1.0
"""

ROWS = [
    ("What is 2 + 3?", "5"),
    ("What is 6 * 7?", "42"),
    ("Capital of France?", "Paris"),
    ("How long is 3 m in m?", "3 m"),
]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "rewards_probe_fixture.py").write_text(REWARDS)
    with (tmp_path / "data.jsonl").open("w") as out:
        for prompt, truth in ROWS:
            out.write(json.dumps({"user_prompt": prompt, "ground_truth": truth}) + "\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_probe(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["--json", "reward", "probe", "-d", "data.jsonl", *args])
    out = capsys.readouterr().out
    return code, json.loads(out)["data"]


def fractions(data: dict, fn: str) -> dict[str, float]:
    return {f["probe"]: f["fraction"] for f in data["functions"][fn]["gameable"]}


def test_controls_of_a_numeric_row() -> None:
    controls = build_controls({"user_prompt": "6*7?", "ground_truth": "42"}, "5")
    assert set(controls) == set(PROBES)
    assert controls["empty"] == "" and controls["echo"] == "6*7?"
    assert "42" in controls["buried"] and controls["buried"].endswith("43.")
    assert controls["all_numbers"].split() == [str(i) for i in range(101)]
    assert controls["repeated"] == " ".join(["42"] * 50)
    assert controls["truncated"] == "4" and controls["other_row"] == "5"
    assert controls["wrong_unit"] == "42 kg"
    swapped = build_controls({"ground_truth": "3 m"}, None)
    assert swapped["wrong_unit"] == "3 km" and swapped["other_row"] is None and swapped["echo"] is None


def test_other_answers_skips_equal_answers() -> None:
    assert other_answers(["a", "a", "b"]) == {0: "b", 1: "b", 2: "a"}
    assert other_answers(["a", "a"]) == {0: None, 1: None}


def test_substring_reward_is_flagged_and_exact_match_is_not(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = run_probe(
        capsys,
        "--eval-fn",
        "rewards_probe_fixture:substring",
        "--eval-fn",
        "rewards_probe_fixture:exact",
        "--fail-above",
        "0.25",
    )
    assert code == 1
    gameable = fractions(data, "rewards_probe_fixture:substring")
    # The ground truth is inside these controls on every row.
    assert gameable["buried"] == 1.0 and gameable["repeated"] == 1.0
    # Every numeric answer is among 0..100 ("5", "42"); "Paris" and "3 m" are not.
    assert gameable["all_numbers"] == 0.5
    # "5 kg" and "42 kg" contain the truth, "3 km" does not; "Paris" has no unit to swap.
    assert gameable["wrong_unit"] == pytest.approx(2 / 3)
    assert gameable["empty"] == 0.0 and gameable["truncated"] == 0.0
    assert all(v == 0.0 for v in fractions(data, "rewards_probe_fixture:exact").values())
    assert data["functions"]["rewards_probe_fixture:exact"]["too_strict"]["fraction"] == 0.0
    failed = {(f["function"], f["probe"]) for f in data["failed"]}
    assert ("rewards_probe_fixture:substring", "buried") in failed
    assert not any(fn == "rewards_probe_fixture:exact" for fn, _ in failed)
    example = next(
        f for f in data["functions"]["rewards_probe_fixture:substring"]["gameable"] if f["probe"] == "buried"
    )["examples"][0]
    assert example["row_index"] == 0 and example["control_score"] == 1.0


def test_exact_match_passes_the_gate(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_probe(capsys, "--eval-fn", "rewards_probe_fixture:exact", "--fail-above", "0")
    assert code == 0 and data["failed"] == []


def test_too_strict_reward_and_errors_are_counted(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = run_probe(
        capsys, "--eval-fn", "rewards_probe_fixture:never", "--eval-fn", "rewards_probe_fixture:broken"
    )
    assert code == 0
    assert data["functions"]["rewards_probe_fixture:never"]["too_strict"]["fraction"] == 1.0
    assert fractions(data, "rewards_probe_fixture:never")["buried"] == 0.0
    broken = {f["probe"]: f for f in data["functions"]["rewards_probe_fixture:broken"]["gameable"]}
    # Raising on the empty answer is an error of that probe (left out), never a score of 0.
    assert broken["empty"]["rows"] == 0 and broken["empty"]["skipped"] == 4
    assert broken["buried"]["fraction"] == 1.0


def test_resume_skips_probed_rows(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = workspace / "probe.jsonl"
    code, first = run_probe(capsys, "--eval-fn", "rewards_probe_fixture:exact", "--log", str(log))
    lines = log.read_text().splitlines()
    assert code == 0 and len(lines) == 1 + len(ROWS)
    code, again = run_probe(capsys, "--eval-fn", "rewards_probe_fixture:exact", "--resume", str(log))
    assert code == 0 and len(log.read_text().splitlines()) == len(lines)
    assert again["functions"] == first["functions"]


def test_report_from_records() -> None:
    fn = "m:f"
    records = [
        {"row_index": 0, "scores": {probe_key(fn, "correct"): 1.0, probe_key(fn, "echo"): 1.0}},
        {"row_index": 1, "scores": {probe_key(fn, "correct"): 0.2, probe_key(fn, "echo"): 0.9}},
        {"row_index": 2, "scores": {probe_key(fn, "correct"): 0.8, probe_key(fn, "echo"): 0.7}},
    ]
    report = build_report(records, [fn], threshold=0.5)
    echo = report.gameable[fn]["echo"]
    assert (echo.rows, echo.hits) == (3, 1)  # row 1's answer is low: its control cannot "pass"
    assert (report.too_strict[fn].rows, report.too_strict[fn].hits) == (3, 1)
    assert report.failures(0.3) == [(fn, "echo", pytest.approx(1 / 3))]
    assert report.failures(0.5) == []


RUBRIC_CONFIG = """\
version: 1
default_score_min: 0.0
default_score_max: 1.0
default_model_info:
  provider: openai
  model: judge-1
  api_key: sk-test
rubrics:
  - id: lenient
    rubric: Give 1.0 to anything.
"""


def test_rubric_judge_is_probed_like_a_function(
    workspace: Path, scripted, judge_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # A judge that pays everything: every control passes, the empty one is an error (nothing to judge).
    server = scripted({"default": {"score": 1.0, "explanation": "fine"}})
    (workspace / "rubric_configs.yaml").write_text(RUBRIC_CONFIG)
    code, data = run_probe(
        capsys, "--rubric", "lenient", "--base-url", server.base_url, "--fail-above", "0.5"
    )
    assert code == 1
    found = {f["probe"]: f for f in data["functions"]["rubric:lenient"]["gameable"]}
    assert found["buried"]["fraction"] == 1.0 and found["all_numbers"]["fraction"] == 1.0
    assert found["empty"]["rows"] == 0 and found["empty"]["skipped"] == len(ROWS)
    bodies = [json.dumps(b) for b in server.requests()]
    assert any("0 1 2 3 4 5" in b for b in bodies)


def test_probe_needs_something_to_probe(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reward", "probe", "-d", "data.jsonl"]) == 1
    assert "at least one --eval-fn" in capsys.readouterr().err
