"""`eval-rubric --repeat K` and `--gold FILE` against a scripted judge with known noise."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osmosis_ai.cli.main import main
from osmosis_ai.rubric.calibration import judge_noise

pytestmark = pytest.mark.usefixtures("judge_env")

CONFIG = """\
version: 1
default_score_min: 0.0
default_score_max: 1.0
default_model_info:
  provider: openai
  model: judge-1
  api_key: sk-test
rubrics:
  - id: helpful
    rubric: Give 1.0 if the answer helps.
"""

# The judge's scores per record, in call order (the scripted server matches the solution text).
PLAN = {
    "by_prompt": {
        "alpha answer": [
            {"score": 0.2, "explanation": "x"},
            {"score": 0.4, "explanation": "x"},
            {"score": 0.6, "explanation": "x"},
        ],
        "beta answer": [{"score": 1.0, "explanation": "x"}],
        "gamma answer": [
            {"score": 0.0, "explanation": "x"},
            {"score": 1.0, "explanation": "x"},
            {"score": 0.5, "explanation": "x"},
        ],
    }
}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rubric_configs.yaml").write_text(CONFIG)
    rows = [
        {"rubric_id": "helpful", "id": key, "solution_str": f"{name} answer"}
        for key, name in (("a", "alpha"), ("b", "beta"), ("g", "gamma"))
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    gold = [
        {"id": "a", "score": 0.5},
        {"id": "b", "score": 1.0},
        {"id": "g", "score": 0.0},
        {"id": "nobody", "score": 1.0},
    ]
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold))
    return tmp_path


def test_repeat_and_gold_figures(workspace: Path, scripted, capsys: pytest.CaptureFixture[str]) -> None:
    server = scripted(PLAN)
    code = main(
        [
            "eval-rubric",
            "-r",
            "helpful",
            "-d",
            "data.jsonl",
            "--repeat",
            "3",
            "--gold",
            "gold.jsonl",
            "--base-url",
            server.base_url,
            "--concurrency",
            "1",
            "-o",
            "out.json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    payload = json.loads((workspace / "out.json").read_text())
    assert payload["number"] == 3
    noise = payload["judge_noise"]
    # Sample variances (K - 1 = 2 in the denominator; finding 10: the population variance read a third
    # too low at K = 3): alpha 0.08/2, beta 0, gamma 0.5/2.
    alpha, gamma = [0.2, 0.4, 0.6], [0.0, 1.0, 0.5]
    assert noise["records"] == 3 and noise["disagreeing"] == 2
    assert noise["mean_variance"] == pytest.approx(
        (statistics.variance(alpha) + statistics.variance(gamma)) / 3
    )
    assert noise["mean_variance"] == pytest.approx((0.08 / 2 + 0.5 / 2) / 3)
    assert noise["mean_std"] == pytest.approx((statistics.stdev(alpha) + statistics.stdev(gamma)) / 3)
    assert noise["max_std"] == pytest.approx(statistics.stdev(gamma))
    assert noise["examples"][0]["record"] == "g"
    gold = payload["gold_agreement"]
    # Judge means 0.4, 1.0, 0.5 against labels 0.5, 1.0, 0.0.
    assert gold["count"] == 3 and gold["unmatched_labels"] == 1
    assert gold["mae"] == pytest.approx(0.2) and gold["bias"] == pytest.approx(0.4 / 3)
    assert gold["spearman"] == pytest.approx(0.5)
    assert gold["kappa"] == pytest.approx(-0.5)
    assert "Judge noise: over 3 record(s)" in out and "Gold agreement: 3 record(s): MAE 0.2000" in out


def test_repeat_conflicting_with_number_is_refused(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["eval-rubric", "-r", "helpful", "-d", "data.jsonl", "--repeat", "3", "-n", "2"])
    assert code == 1 and "disagree" in capsys.readouterr().err


def test_bad_gold_file(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "bad.jsonl").write_text('{"id": "a"}\n')
    code = main(
        [
            "eval-rubric",
            "-r",
            "helpful",
            "-d",
            "data.jsonl",
            "--gold",
            "bad.jsonl",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ]
    )
    assert code == 1 and "bad.jsonl:1" in capsys.readouterr().err


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=8), min_size=1, max_size=6))
def test_judge_noise_is_the_sample_variance(scores: list[list[float]]) -> None:
    numpy = pytest.importorskip("numpy")
    runs = [[{"status": "success", "score": x} for x in row] for row in scores]
    noise = judge_noise(list(range(len(runs))), lambda i: runs[i - 1])
    repeated = [row for row in scores if len(row) >= 2]
    assert noise["records"] == len(repeated)
    if not repeated:
        assert noise["mean_variance"] is None
        return
    variances = [numpy.var(row, ddof=1) for row in repeated]
    stds = [numpy.std(row, ddof=1) for row in repeated]
    assert noise["mean_variance"] == pytest.approx(numpy.mean(variances), rel=1e-9, abs=1e-12)
    assert noise["mean_std"] == pytest.approx(numpy.mean(stds), rel=1e-9, abs=1e-12)
    assert noise["max_std"] == pytest.approx(max(stds), rel=1e-9, abs=1e-12)
