"""Units of the rubric package: configs, records, statistics, output paths, lazy imports."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from osmosis_ai.errors import CLIError, ConfigError, DatasetFormatError
from osmosis_ai.rubric.config import find_config, load_rubric_configs
from osmosis_ai.rubric.engine import JudgeHealth, calculate_statistics
from osmosis_ai.rubric.records import load_rubric_records
from osmosis_ai.rubric.report import resolve_output_path
from osmosis_ai.runs.progress import Progress
from osmosis_ai.runs.work import RunOutcome

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_shipped_example_config_and_records_load():
    entries = load_rubric_configs(EXAMPLES / "rubric_configs.yaml")
    assert list(entries) == ["helpfulness", "politeness"]
    polite = entries["politeness"]
    assert polite.model_info["api_key_env"] == "OPENAI_API_KEY" and polite.system_prompt
    assert polite.source_label.endswith("rubric_configs.yaml:rubrics[1]")
    records, others, unlabelled = load_rubric_records(EXAMPLES / "rubric_records.jsonl", "Helpfulness")
    assert [r.label for r in records] == ["capital", "sum"] and (others, unlabelled) == (1, 0)


def test_entries_are_found_anywhere_and_labelled_by_full_path(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "default_model_info: {provider: openai, model: m}\n"
        "a:\n  deep:\n    - id: one\n      rubric: r1\n"
        "b:\n  deep:\n    - id: two\n      rubric: r2\n      score_min: 1\n      score_max: 5\n"
    )
    entries = load_rubric_configs(path)
    assert [e.source_label.split(":")[-1] for e in entries.values()] == ["a.deep[0]", "b.deep[0]"]
    assert (entries["two"].score_min, entries["two"].score_max) == (1.0, 5.0)


def test_numeric_fields_reject_booleans(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "rubrics:\n  - id: x\n    rubric: r\n    score_min: true\n    model_info: {provider: o, model: m}\n"
    )
    with pytest.raises(ConfigError, match="entry 'rubrics\\[0\\]': 'score_min' must be a number"):
        load_rubric_configs(path)


def test_config_search_order(tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "rubric_configs.yaml").write_text("x: 1")
    monkeypatch.chdir(tmp_path)
    assert find_config(data_dir / "d.jsonl", None) == tmp_path / "examples" / "rubric_configs.yaml"
    (data_dir / "rubric_configs.yaml").write_text("x: 1")
    assert find_config(data_dir / "d.jsonl", None) == data_dir / "rubric_configs.yaml"
    (tmp_path / "examples" / "rubric_configs.yaml").unlink()
    (data_dir / "rubric_configs.yaml").unlink()
    with pytest.raises(ConfigError, match="Pass one with --config"):
        find_config(data_dir / "d.jsonl", None)


def test_records_only_validate_the_requested_rubric(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        json.dumps({"rubric_id": "other", "solution_str": 5}) + "\n" + json.dumps({"rubric_id": "a"})
    )
    with pytest.raises(
        DatasetFormatError,
        match=r"must include a non-empty 'solution_str' string \(line 2 of '.*d.jsonl', got null\)",
    ):
        load_rubric_records(path, "a")
    path.write_text("\n\n")
    with pytest.raises(DatasetFormatError, match="No JSON records found"):
        load_rubric_records(path, "a")


def test_statistics_are_population_and_skip_unscored():
    stats = calculate_statistics([0.0, 1.0, 0.5], total_runs=4, unscored=1)
    assert stats["average"] == 0.5 and stats["variance"] == pytest.approx(1 / 6)
    assert (stats["success_count"], stats["failure_count"], stats["unscored_count"]) == (3, 1, 1)
    assert calculate_statistics([], 0)["average"] is None  # no score is not a 0.0 (issue #22)


def test_output_path_rules(tmp_path, monkeypatch):
    monkeypatch.setenv("OSMOSIS_EVAL_RESULT_DIR", str(tmp_path / "cache"))
    path, ident = resolve_output_path(None, "My Rubric/v2!")
    assert (
        path.parent == tmp_path / "cache" / "my_rubric_v2" and path.name == f"rubric_eval_result_{ident}.json"
    )
    path, ident = resolve_output_path(tmp_path / "new" / "res.v2", "r")
    assert path == tmp_path / "new" / "res.v2" and ident is None
    path, ident = resolve_output_path(tmp_path / "outdir", "r")
    assert path.parent == tmp_path / "outdir" and ident
    (tmp_path / "taken.json").mkdir()
    with pytest.raises(CLIError, match="is a directory"):
        resolve_output_path(tmp_path / "taken.json", "r")


def test_import_and_help_stay_light():
    code = (
        "import sys, osmosis_ai; from osmosis_ai.cli.main import main; "
        "assert 'litellm' not in sys.modules; assert callable(osmosis_ai.evaluate_rubric); "
        "assert 'litellm' not in sys.modules and 'yaml' not in sys.modules; print('ok')"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "ok\n"
    )
    help_text = subprocess.run(
        [sys.executable, "-m", "osmosis_ai.cli.main", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "eval-rubric" in help_text
    eval_help = subprocess.run(
        [sys.executable, "-m", "osmosis_ai.cli.main", "eval", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "rubric" in eval_help


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_only_on_a_terminal():
    outcome = RunOutcome(executed=2, failed=1)
    tty = _Terminal()
    progress = Progress(4, stream=tty, extra=lambda o: [f"scored {o.executed - o.failed}"])
    progress({"success": True}, outcome)
    line = tty.getvalue()
    assert "[############............] 2/4" in line and "runs/s" in line and "ETA " in line
    assert "failed 1" in line and "scored 1" in line
    progress.close()
    quiet = io.StringIO()
    Progress(4, stream=quiet)({"success": True}, outcome)
    assert quiet.getvalue() == ""


def test_judge_health_counts_run_records():
    health = JudgeHealth.of(
        [
            {"status": "success", "score": 1.0, "retries": 2, "attempts": 3, "usage": {"prompt_tokens": 5}},
            {"status": "unscored", "unscored_reason": "invalid_json", "parse_failures": 3},
        ]
    )
    assert health.line().startswith("Judge health: 3 parse failure(s), 0 clamped, 2 retried, 1 unscored")
    assert health.as_json()["prompt_tokens"] == 5 and health.runs == 2


def test_established_import_paths_still_work():
    import osmosis_ai
    from osmosis_ai import rubric_eval, rubric_types

    assert rubric_eval.evaluate_rubric is osmosis_ai.evaluate_rubric
    assert rubric_eval.MissingAPIKeyError is rubric_types.MissingAPIKeyError is osmosis_ai.MissingAPIKeyError
    assert rubric_eval.DEFAULT_REQUEST_TIMEOUT_SECONDS == 30.0
    assert rubric_eval.DEFAULT_API_KEY_ENV["google"] == "GEMINI_API_KEY"
    assert set(rubric_types.RewardRubricRunResult.__annotations__) >= {"score", "explanation", "raw"}


def test_the_0_3_layout_comes_from_the_0_2_payload_and_keeps_failures_visible() -> None:
    from osmosis_ai.rubric.document import layout_0_3
    from osmosis_ai.rubric.engine import calculate_statistics

    ok = {"run_index": 1, "status": "success", "score": 0.5, "explanation": "fine", "error": None}
    bad = {"run_index": 2, "status": "error", "score": None, "explanation": None, "error": "timeout"}
    unscored = {"run_index": 1, "status": "unscored", "score": None, "unscored_reason": "no score in reply"}
    rows = [
        {
            "record_index": 1,
            "conversation_id": "a",
            "statistics": calculate_statistics([0.5], 2),
            "runs": [ok, bad],
        },
        {
            "record_index": 2,
            "conversation_id": "b",
            "statistics": calculate_statistics([], 1, 1),
            "runs": [unscored],
        },
    ]
    payload = {
        "generated_at": "t", "rubric_id": "rubric", "data_path": "d.jsonl", "number": 2, "records": rows,
        "overall_statistics": calculate_statistics([0.5], 3, 1), "interrupted": False,
    }  # fmt: skip
    doc = layout_0_3(payload, model="openai/m", rubric="R")
    first, second = doc["records"]
    assert (first["scores"], first["explanations"], first["errors"]) == ([0.5], ["fine"], ["timeout"])
    assert (
        second["errors"] == ["no score in reply"] and second["statistics"]["average"] is None
    )  # null, not 0.0
    assert doc["overall_statistics"] is payload["overall_statistics"]  # the same numbers, not recomputed
    assert doc["interrupted"] is False and doc["rubric_id"] == "rubric"


def test_eval_rubric_output_paths_follow_0_3(tmp_path: Path) -> None:
    from osmosis_ai.rubric.report import resolve_output_path_0_3

    (tmp_path / "existing").mkdir()
    assert resolve_output_path_0_3(f"{tmp_path}/new/")[0] == tmp_path / "new" / "rubric_eval_result.json"
    assert (
        resolve_output_path_0_3(str(tmp_path / "existing"))[0]
        == tmp_path / "existing/rubric_eval_result.json"
    )
    assert (
        resolve_output_path_0_3(str(tmp_path / "a" / "out"))[0] == tmp_path / "a" / "out"
    )  # a file, no suffix
    assert (tmp_path / "a").is_dir()
