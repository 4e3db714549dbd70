"""`osmosis reward diff`: a generated log with a known number of flips and advantage-sign changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_ai.cli.main import main
from osmosis_ai.runs.log import ResultsLog, dataset_fingerprint, row_key

REWARDS = """
def exact(solution_str, ground_truth, extra_info=None):
    return 1.0 if solution_str.strip() == ground_truth else 0.0

def short_contains(solution_str, ground_truth, extra_info=None):
    return 1.0 if ground_truth in solution_str and len(solution_str) <= 16 else 0.0

def picky(messages, ground_truth, metadata=None):
    if messages[-1]["content"] == "5":
        raise ValueError("cannot score 5")
    return 1.0
"""

# (ground truth, outputs of its runs). Under exact -> short_contains:
#   row 0: 1 0 0 1 -> 1 1 0 1   one fail->pass flip; signs + - - + -> + + - +  (1 run changes sign)
#   row 1: 1 1 1 1 -> 1 1 1 1   nothing changes
#   row 2: 1 0 0 0 -> 1 0 0 1   one fail->pass flip; signs + - - - -> + - - +  (1 run)
#   row 3: 0 0     -> 1 1       two fail->pass flips; signs 0 0 -> 0 0 (no advantage either way)
#   row 4: 1 1     -> 1 0       one pass->fail flip; signs 0 0 -> + -       (2 runs)
ROWS = [
    ("4", ["4", "The answer is 4", "5", "4"]),
    ("6", ["6", "6", "6", "6"]),
    ("Paris", ["Paris", "paris", "Lyon", "I think Paris"]),
    ("3", ["3 apples", "3 pears"]),
    ("8", ["8", "8" + " " * 20]),
]


@pytest.fixture
def eval_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "rewards_diff_fixture.py").write_text(REWARDS)
    monkeypatch.chdir(tmp_path)
    rows = [{"user_prompt": f"Q{i}", "ground_truth": truth} for i, (truth, _) in enumerate(ROWS)]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "eval.jsonl"
    with ResultsLog.create(path, {}, kind="eval", dataset=dataset_fingerprint(data)) as log:
        for index, (row, (_, outputs)) in enumerate(zip(rows, ROWS, strict=True)):
            for run_index, output in enumerate(outputs):
                messages = [
                    {"role": "user", "content": row["user_prompt"]},
                    {"role": "assistant", "content": output},
                ]
                log.append(
                    {
                        "row_key": row_key(row),
                        "row_index": index,
                        "run_index": run_index,
                        "model_tag": "",
                        "success": True,
                        "scores": {},
                        "final_messages": messages,
                    }
                )
    return path


def run_diff(capsys: pytest.CaptureFixture[str], old: str, new: str, log: Path) -> tuple[int, dict]:
    code = main(["--json", "reward", "diff", old, new, "--log", str(log)])
    return code, json.loads(capsys.readouterr().out)["data"]


def test_known_flips_and_sign_changes(eval_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_diff(
        capsys, "rewards_diff_fixture:exact", "rewards_diff_fixture:short_contains", eval_log
    )
    assert code == 0
    assert (data["runs"], data["compared"]) == (16, 16)
    assert data["flips"]["fail_to_pass"] == 4 and data["flips"]["pass_to_fail"] == 1
    assert data["changed_scores"] == 5
    adv = data["advantage"]
    assert (adv["groups"], adv["groups_sign_changed"], adv["runs_sign_changed"]) == (5, 3, 4)
    assert [ex["row_index"] for ex in adv["examples"]] == [0, 2, 4]
    # Means over the 16 runs: 9/16 -> 12/16; pass@1 is the mean over rows of c/n: 2.75/5 -> 3.75/5.
    assert data["old_summary"]["mean"] == pytest.approx(9 / 16)
    assert data["new_summary"]["mean"] == pytest.approx(12 / 16)
    assert data["delta"]["pass_at_1"] == pytest.approx(1 / 5)
    assert {(ex["row_index"], ex["run_index"]) for ex in data["flips"]["examples"]} == {
        (0, 1),
        (2, 3),
        (3, 0),
        (3, 1),
        (4, 1),
    }


def test_an_errored_saved_run_counts_as_the_eval_counted_it(
    eval_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Row 3 gets a third run that errored (no output): 0.0 and did not pass in both versions' mean and
    # pass@k, as in the eval's own summary, and no flip or score change.
    failed = {"row_key": row_key({"user_prompt": "Q3", "ground_truth": "3"}), "row_index": 3,
              "run_index": 2, "model_tag": "", "success": False, "scores": {}, "error": "agent blew up"}  # fmt: skip
    with eval_log.open("a") as fh:
        fh.write(json.dumps(failed) + "\n")
    code, data = run_diff(
        capsys, "rewards_diff_fixture:exact", "rewards_diff_fixture:short_contains", eval_log
    )
    assert code == 0 and (data["runs"], data["compared"], data["without_output"]) == (17, 16, 1)
    assert data["old_summary"]["mean"] == pytest.approx(9 / 17)
    assert data["new_summary"]["mean"] == pytest.approx(12 / 17)
    # pass@1, the mean over rows of c/n: row 3 is 0/3 -> 2/3.
    assert data["old_summary"]["pass_at_k"]["1"] == pytest.approx(2.75 / 5)
    assert data["new_summary"]["pass_at_k"]["1"] == pytest.approx((0.75 + 1 + 0.5 + 2 / 3 + 0.5) / 5)
    assert data["flips"]["total"] == 5 and data["advantage"]["groups_skipped"] == 1


def test_same_version_changes_nothing(eval_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (eval_log.parent / "again.py").write_text(REWARDS)
    code, data = run_diff(capsys, "rewards_diff_fixture:exact", "again:exact", eval_log)
    assert code == 0 and data["flips"]["total"] == 0 and data["advantage"]["groups_sign_changed"] == 0
    assert data["delta"]["mean"] == 0.0


def test_errors_are_not_scores(eval_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = run_diff(capsys, "rewards_diff_fixture:exact", "rewards_diff_fixture:picky", eval_log)
    assert code == 0
    assert data["errors"] == {"old": 0, "new": 1} and data["compared"] == 15
    # Row 0 lost a run to the error: it is left out of the sign comparison, not scored 0.
    assert data["advantage"]["groups"] == 4 and data["advantage"]["groups_skipped"] == 1


def test_text_output(eval_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "reward",
            "diff",
            "rewards_diff_fixture:exact",
            "rewards_diff_fixture:short_contains",
            "--log",
            str(eval_log),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "flips at >= 1: 5 (4 fail->pass, 1 pass->fail)" in out
    assert "advantage signs change in 3 of 5 row group(s) (4 run(s))" in out
