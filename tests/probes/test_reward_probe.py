"""`osmosis reward probe`: a gameable reward (substring match) is flagged; a strict exact match is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_ai.cli.main import main
from osmosis_ai.probes.controls import CORRECT_FORMS, PROBES, build_controls, correct_forms
from osmosis_ai.probes.probe import other_answers, probe_key
from osmosis_ai.probes.report import build_report

REWARDS = """
import re

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

def _last_number(text):
    numbers = re.findall(r"-?\\d+(?:\\.\\d+)?", text.replace(",", ""))
    return float(numbers[-1]) if numbers else None

def empty_ok(solution_str, ground_truth, extra_info=None):
    # Gameable: pays the empty answer, and of the correct formats only `#### x`.
    return 1.0 if solution_str.strip() in ("", "#### " + str(ground_truth)) else 0.0

def hashes_only(solution_str, ground_truth, extra_info=None):
    # Sound but format-bound (the git-sync example's numbers_match_reward): only `#### x` scores.
    return 1.0 if solution_str.strip() == "#### " + str(ground_truth) else 0.0

def last_number(solution_str, ground_truth, extra_info=None):
    # The usual GSM8K-style reward: the final number of the reply against the expected one.
    answer, expected = _last_number(solution_str), _last_number(str(ground_truth))
    return float(answer is not None and answer == expected)
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
    assert controls["all_numbers"].split() == [str(i) for i in range(-8, 93)]
    assert controls["repeated"] == " ".join(["42"] * 50) + " 43."
    assert controls["truncated"] == "4" and controls["other_row"] == "5"
    assert controls["wrong_unit"] is None  # a bare number has no unit to get wrong
    swapped = build_controls({"ground_truth": "3 m"}, None)
    assert swapped["wrong_unit"] == "3 km" and swapped["other_row"] is None and swapped["echo"] is None


def test_numeric_controls_are_sized_to_the_answer() -> None:
    # Finding 9: 0..100 listed for every row missed every answer above 100.
    big = build_controls({"ground_truth": "12,345"}, None)["all_numbers"].split()
    assert big[0] == "12,295" and big[-1] == "12,395" and "12,345" in big and len(big) == 101
    small = build_controls({"ground_truth": "-0.25"}, None)["all_numbers"].split()
    assert small[0] == "-0.75" and small[-1] == "0.25" and "-0.25" in small and "0.00" in small
    assert build_controls({"ground_truth": "Paris"}, None)["all_numbers"] is None
    assert build_controls({"ground_truth": "1,250.5 kg"}, None)["wrong_unit"] == "1,250.5 g"


def test_echo_is_left_out_where_the_question_holds_the_answer() -> None:
    assert (
        build_controls({"user_prompt": "What is 144 divided by 12?", "ground_truth": "12"}, None)["echo"]
        is None
    )
    assert build_controls({"user_prompt": "What is 144 / 36?", "ground_truth": "4"}, None)["echo"] is not None


def test_correct_answer_in_common_formats() -> None:
    assert correct_forms(" 42 ") == {
        "correct": " 42 ",
        "correct_spaced": "\n  42  \n",
        "correct_hashes": "#### 42",
        "correct_sentence": "The answer is 42",
        "correct_boxed": "\\boxed{42}",
    }
    assert set(correct_forms("")) == set(CORRECT_FORMS)
    assert [k for k, v in correct_forms("").items() if v is not None] == ["correct"]


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
    # The numbers around "5", "42" and "3 m" hold "5" and "42" but not "3 m"; "Paris" is not a number.
    assert gameable["all_numbers"] == pytest.approx(2 / 3)
    # Only "3 m" has a unit to swap, and "3 km" does not contain "3 m".
    assert gameable["wrong_unit"] == 0.0
    assert gameable["empty"] == 0.0 and gameable["truncated"] == 0.0
    assert all(v == 0.0 for v in fractions(data, "rewards_probe_fixture:exact").values() if v is not None)
    strict = data["functions"]["rewards_probe_fixture:exact"]
    # strip() makes exact match accept whitespace around the answer, and nothing else.
    formats = {f["probe"]: f["fraction"] for f in strict["correct_formats"]}
    assert formats == {
        "correct": 0.0,
        "correct_spaced": 0.0,
        "correct_hashes": 1.0,
        "correct_sentence": 1.0,
        "correct_boxed": 1.0,
    }
    assert strict["too_strict"]["fraction"] == 1.0
    failed = {(f["function"], f["probe"]) for f in data["failed"]}
    assert ("rewards_probe_fixture:substring", "buried") in failed
    assert not any(fn == "rewards_probe_fixture:exact" for fn, _ in failed)
    example = next(
        f for f in data["functions"]["rewards_probe_fixture:substring"]["gameable"] if f["probe"] == "buried"
    )["examples"][0]
    assert example["row_index"] == 0 and example["control_score"] == 1.0


def write_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[tuple[str, str]]) -> None:
    (tmp_path / "rewards_probe_fixture.py").write_text(REWARDS)
    lines = [json.dumps({"user_prompt": prompt, "ground_truth": truth}) + "\n" for prompt, truth in rows]
    (tmp_path / "data.jsonl").write_text("".join(lines))
    monkeypatch.chdir(tmp_path)


def test_a_sound_last_number_reward_passes_every_control(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Finding 9: `repeated` and `wrong_unit` ("71 kg" for "71") flagged this reward on every row.
    rows = [("What is 60 + 11?", "71"), ("What is 12 * 12?", "144"), ("What is 144 / 12?", "12")]
    write_rows(tmp_path, monkeypatch, [*rows, ("Half of 5?", "2.5"), ("What is 1000 * 3?", "3,000")])
    code, data = run_probe(capsys, "--eval-fn", "rewards_probe_fixture:last_number")
    found = data["functions"]["rewards_probe_fixture:last_number"]
    assert code == 0 and data["failed"] == [] and data["fail_above"] == 0.05
    assert all(f["hits"] == 0 for f in found["gameable"])
    assert {f["probe"]: f["rows"] for f in found["gameable"]}["echo"] == 4  # "144 / 12?" holds its answer
    assert found["too_strict"] == {**found["too_strict"], "rows": 5, "hits": 0, "fraction": 0.0}
    wrong_unit = next(f for f in found["gameable"] if f["probe"] == "wrong_unit")
    assert wrong_unit["rows"] == 0 and wrong_unit["fraction"] is None and wrong_unit["skipped"] == 5


def test_a_unit_blind_reward_is_flagged_on_answers_with_a_unit(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = run_probe(capsys, "--eval-fn", "rewards_probe_fixture:last_number")
    found = data["functions"]["rewards_probe_fixture:last_number"]
    assert code == 1 and [(f["probe"], f["fraction"]) for f in data["failed"]] == [("wrong_unit", 1.0)]
    # "Paris" has no number, so its correct answer scores 0 in every format: that row is too strict.
    assert found["too_strict"]["hits"] == 1 and found["too_strict"]["examples"][0]["row_index"] == 2


@pytest.mark.parametrize("answers", [["1234", "250", "7.5", "-3"], ["150", "999", "12,000", "101"]])
def test_contains_the_number_reward_fails_out_of_the_box(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], answers: list[str]
) -> None:
    # Finding 9: answers above 100 were missed by 0..100, and the command exited 0 without --fail-above.
    write_rows(tmp_path, monkeypatch, [(f"Question {i}?", answer) for i, answer in enumerate(answers)])
    code, data = run_probe(capsys, "--eval-fn", "rewards_probe_fixture:substring")
    assert code == 1
    assert fractions(data, "rewards_probe_fixture:substring")["all_numbers"] == 1.0
    assert ("rewards_probe_fixture:substring", "all_numbers") in {
        (f["function"], f["probe"]) for f in data["failed"]
    }


def test_text_output_is_plain(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Finding 9: "correct 0/30 0.0% scores low (too strict?)" read as an alarm when nothing scored low.
    code = main(["reward", "probe", "-d", "data.jsonl", "--eval-fn", "rewards_probe_fixture:substring"])
    out = capsys.readouterr()
    assert code == 1
    assert "too strict" not in out.out
    assert "correct answers: scored >= 0.5 on all 4 row(s), in every format" in out.out
    assert "<- GAMEABLE" in out.out and "FAIL: rewards_probe_fixture:substring: control 'buried'" in out.err
    code = main(["reward", "probe", "-d", "data.jsonl", "--eval-fn", "rewards_probe_fixture:exact"])
    out = capsys.readouterr()
    assert code == 0 and "<- GAMEABLE" not in out.out
    assert "correct answers scoring below 0.5 (too strict?) on 4 of 4 row(s):" in out.out
    assert "e.g. too strict, correct_hashes, row 0: '#### 5' scored 0 (the answer as written: 1)" in out.out


def test_exact_match_passes_the_gate(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_probe(capsys, "--eval-fn", "rewards_probe_fixture:exact", "--fail-above", "0")
    assert code == 0 and data["failed"] == []


def test_too_strict_reward_and_errors_are_counted(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = run_probe(
        capsys, "--eval-fn", "rewards_probe_fixture:never", "--eval-fn", "rewards_probe_fixture:broken"
    )
    assert code == 1  # `broken` pays every answer it does not raise on: gameable
    assert {f["function"] for f in data["failed"]} == {"rewards_probe_fixture:broken"}
    assert data["functions"]["rewards_probe_fixture:never"]["too_strict"]["fraction"] == 1.0
    # Nothing correct scores, so no control can be compared: untestable, never "0 % passed".
    assert fractions(data, "rewards_probe_fixture:never")["buried"] is None
    assert data["functions"]["rewards_probe_fixture:never"]["untestable_rows"] == 4
    assert [i["function"] for i in data["inconclusive"]] == ["rewards_probe_fixture:never"]
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


def test_report_from_records(tmp_path: Path) -> None:
    fn = "m:f"
    header = {"format": "osmosis-results/1", "kind": "probe", "config": {"eval_fns": [fn], "threshold": 0.5}}
    records = [
        {"row_index": 0, "scores": {probe_key(fn, "correct"): 1.0, probe_key(fn, "echo"): 1.0}},
        {"row_index": 1, "scores": {probe_key(fn, "correct"): 0.2, probe_key(fn, "echo"): 0.9}},
        {"row_index": 2, "scores": {probe_key(fn, "correct"): 0.8, probe_key(fn, "echo"): 0.7}},
    ]
    log = tmp_path / "probe.jsonl"
    lines = [header, *({"run_index": 0, "success": True, "previews": {}, **r} for r in records)]
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = build_report(log, [fn], threshold=0.5)
    echo = report.gameable[fn]["echo"]
    # Row 1's answer is low: its control cannot be tested there (untestable), not counted as "did not pass".
    assert (echo.rows, echo.hits, echo.untestable) == (2, 1, 1)
    assert echo.examples[0]["row_index"] == 0 and echo.examples[0]["control_score"] == 1.0
    assert (report.too_strict[fn].rows, report.too_strict[fn].hits) == (3, 1)
    assert report.failures(0.3) == [(fn, "echo", pytest.approx(1 / 2))]
    assert report.failures(0.5) == []
    # A control the log never holds applied to no row: every row skipped, no fraction (not 0).
    assert (report.gameable[fn]["empty"].skipped, report.gameable[fn]["empty"].fraction) == (3, None)


def test_cli_json_and_model_agree(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Every fraction `reward probe` prints or writes is the result model's, from the log.
    fns = ["rewards_probe_fixture:substring", "rewards_probe_fixture:broken"]
    log = workspace / "probe.jsonl"
    args = ["-d", "data.jsonl", "--log", str(log), "--eval-fn", fns[0], "--eval-fn", fns[1]]
    _, data = run_probe(capsys, *args[2:])
    assert main(["reward", "probe", "--resume", str(log), *args[:2], *args[4:]]) == 1
    printed = capsys.readouterr()
    from osmosis_ai.results import read_results

    model = {p.function: p for p in read_results(log).model().probes}
    assert set(model) == set(fns)
    for fn in fns:
        shown = {f["probe"]: f for f in data["functions"][fn]["gameable"]}
        for control in model[fn].controls:
            row = shown[control.probe]
            assert (row["rows"], row["hits"], row["skipped"]) == (control.rows, control.hits, control.skipped)
            assert row["fraction"] == control.fraction
            assert [e["row_index"] for e in row["examples"]] == [e.row for e in control.examples]
            section = printed.out.split(f"\n{fn}\n")[1]
            line = next(x for x in section.splitlines() if x.startswith(f"    {control.probe:<17} "))
            cell = f"{control.hits:>4}/{control.rows:<4} {control.fraction:6.1%}" if control.rows else " n/a "
            assert cell in line, line
        strict = data["functions"][fn]["too_strict"]
        assert (strict["rows"], strict["hits"], strict["fraction"]) == (
            model[fn].too_strict.rows,
            model[fn].too_strict.hits,
            model[fn].too_strict.fraction,
        )
        formats = {f["probe"]: f["fraction"] for f in data["functions"][fn]["correct_formats"]}
        assert {c.probe: c.fraction for c in model[fn].formats} == {
            k: v for k, v in formats.items() if k in {c.probe for c in model[fn].formats}
        }
    failed = {(f["function"], f["probe"]): f["fraction"] for f in data["failed"]}
    assert failed == {
        (fn, c.probe): c.fraction for fn in fns for c in model[fn].controls if (c.fraction or 0) > 0.05
    }
    for (fn, probe), fraction in failed.items():
        assert f"FAIL: {fn}: control '{probe}' passes on {fraction:.1%}" in printed.err


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


def test_a_reward_paying_only_another_format_is_probed_against_that_format(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Finding 2: the answer as written scores 0 for both, so every control "passed on 0 rows" and both got
    # the all-clear. Compared with the best-scoring correct format, the gameable one is caught.
    code, data = run_probe(
        capsys,
        "--eval-fn",
        "rewards_probe_fixture:empty_ok",
        "--eval-fn",
        "rewards_probe_fixture:hashes_only",
    )
    assert code == 1
    assert {(f["function"], f["probe"]) for f in data["failed"]} == {
        ("rewards_probe_fixture:empty_ok", "empty")
    }
    empty = next(
        f for f in data["functions"]["rewards_probe_fixture:empty_ok"]["gameable"] if f["probe"] == "empty"
    )
    assert (empty["rows"], empty["hits"], empty["untestable"]) == (4, 4, 0)
    assert (
        empty["examples"][0]["reference"] == "correct_hashes" and empty["examples"][0]["correct_score"] == 1.0
    )
    sound = data["functions"]["rewards_probe_fixture:hashes_only"]
    assert all(f["hits"] == 0 for f in sound["gameable"]) and sound["untestable_rows"] == 0
    assert fractions(data, "rewards_probe_fixture:hashes_only")["empty"] == 0.0
    assert data["inconclusive"] == []


def test_a_reward_nothing_correct_scores_on_gets_no_verdict(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["reward", "probe", "-d", "data.jsonl", "--eval-fn", "rewards_probe_fixture:never"])
    out = capsys.readouterr()
    assert code == 1  # inconclusive is not a pass
    assert "4 row(s) untestable: no format of the correct answer scored >= 0.5" in out.out
    assert "N/A: rewards_probe_fixture:never: no verdict" in out.err and "FAIL" not in out.err
    assert "  0/" not in out.out  # no control line claims rows it could not test
