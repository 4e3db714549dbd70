"""One statistics path for results: summarize_results / load_results on every layout the commands write,
and eval functions that raise counted as errors, never as scores."""

from __future__ import annotations

import json
import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

import osmosis_ai
from osmosis_ai.errors import StatsError
from osmosis_ai.stats import (
    RESULTS_LOG_FORMATS,
    Aggregator,
    load_results,
    score_moments,
    score_statistics,
    summarize,
    summarize_results,
    summarize_results_by_model,
)
from tests.cli.test_eval_cli import EXAMPLES, eval_args, osmosis, write_rows

# Raises on rows whose expected answer is odd: half of the rows below.
HALF_RAISING = """
from osmosis_ai import osmosis_reward

@osmosis_reward
def picky(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    if int(ground_truth) % 2:
        raise ValueError(f"cannot judge {ground_truth}")
    return 1.0
"""
PICKY = "picky_fn:picky"


def _lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def half_raising_eval(scripted, tmp_path: Path) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """A real `osmosis eval` run, 4 rows x 3 runs, whose eval function raises on rows 1 and 3."""
    (tmp_path / "picky_fn.py").write_text(HALF_RAISING)
    (tmp_path / "math_agent.py").symlink_to(EXAMPLES / "math_agent.py")
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    dataset = write_rows(tmp_path / "data.jsonl", [(f"q-{i}", str(i)) for i in range(4)])
    server = scripted({"default": {"content": "7"}})
    args = eval_args(server, dataset, tmp_path, "--no-preflight", "--n", "3", "--max-failure-rate", "1")
    args[args.index("--eval-fn") + 1] = PICKY
    result = osmosis(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "log.jsonl", tmp_path / "out.json", result


def test_a_raising_eval_function_shows_errors_not_a_zero_mean(half_raising_eval) -> None:
    log, out_path, result = half_raising_eval
    out = json.loads(out_path.read_text())
    summary = out["summary"]
    # Every scored run was 1.0; the 6 raising runs are errors, not zeros (the old summary said 0.500).
    assert summary["eval_fns"][PICKY] == {
        "mean": 1.0,
        "std": 0.0,
        "min": 1.0,
        "max": 1.0,
        "pass_at_1": 1.0,
        "pass_at_3": 1.0,
    }
    errors = summary["eval_fn_errors"][PICKY]
    assert errors["count"] == 6 and summary["eval_error_runs"] == 6
    assert errors["messages"] and all(
        re.fullmatch(r"ValueError: cannot judge [13]", m) for m in errors["messages"]
    )
    # The result model's warning, worded once in the core: the same line in -o and on the terminal.
    said = f"{PICKY} raised on 6 runs across 2 rows: those runs are errored and in none of its statistics"
    assert errors["excluded"] == said
    assert (summary["total_runs"], summary["failed_runs"]) == (12, 0)
    assert (
        "Errors" in result.stdout and f"Warning: {said}" in result.stdout and "cannot judge" in result.stdout
    )
    row1 = next(r for r in out["rows"] if r["row_index"] == 1)
    assert all(PICKY in run["eval_errors"] for run in row1["runs"])

    # The same numbers from the log and from the -o file, through summarize_results.
    for path in (log, out_path):
        s = summarize_results(path)[PICKY]
        assert (s.mean, s.count, s.errors, s.failed) == (1.0, 6, 6, 0)
        assert s.pass_at_k == {1: 1.0, 3: 1.0} and s.pass_at_k_rows == {1: 2, 3: 2}
        assert s.error_messages == tuple(errors["messages"])
    assert summarize_results_by_model(out_path).n_runs == 3  # taken from the -o file's config
    by_model = summarize_results_by_model(log)
    assert by_model.layout == "log" and by_model.config["eval_fns"] == [PICKY]
    assert by_model.models["primary"].eval_error_runs == 6


def test_load_results_gives_one_row_per_run(half_raising_eval) -> None:
    log, out_path, _ = half_raising_eval
    frame, header = osmosis_ai.load_results(log)
    assert frame.height == 12 and header["layout"] == "log"
    assert header["config"]["eval_fns"] == [PICKY]
    assert sorted(frame["row_index"].unique().to_list()) == [0, 1, 2, 3]
    scored = frame["scores"].struct.field(PICKY).drop_nulls()
    assert scored.len() == 6 and scored.min() == 1.0
    frame, header = load_results(out_path)
    assert frame.height == 12 and (header["layout"], header["kind"]) == ("eval-json", None)
    assert header["config"]["n_runs"] == 3 and frame["model_tag"].unique().to_list() == [""]


def test_total_runs_counts_every_model(scripted, tmp_path: Path) -> None:
    dataset = write_rows(tmp_path / "data.jsonl", [("q-a: 1+1?", "2"), ("q-b: 2+2?", "4")])
    server = scripted(
        {"by_model": {"org/scripted-model": {"content": "2 4"}, "other-model": {"content": "0"}}}
    )
    result = osmosis(
        *eval_args(
            server, dataset, tmp_path, "--n", "2", "--baseline-model", "other-model",
            "--baseline-base-url", server.base_url, "--no-preflight",
        )
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["summary"]["total_runs"] == 2 * 2 * 2  # rows x n x models, as the established output
    assert out["summary"]["total_rows"] == 2
    tags = {s["model_tag"]: s for s in out["model_summaries"]}
    assert tags["primary"]["total_runs"] == tags["baseline"]["total_runs"] == 4
    baseline = summarize_results(tmp_path / "log.jsonl", model_tag="baseline")
    assert baseline[next(iter(baseline))].mean == tags["baseline"]["eval_fns"][next(iter(baseline))]["mean"]
    with pytest.raises(StatsError, match="no runs of model_tag 'nobody'"):
        summarize_results(tmp_path / "out.json", model_tag="nobody")


def test_eval_rubric_output_json_summarises_like_its_own_statistics(scripted, tmp_path, monkeypatch) -> None:
    from osmosis_ai.cli.main import main
    from tests.cli.test_cli_eval_rubric import CONFIG, write_records

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_EVAL_RESULT_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "rubric_configs.yaml").write_text(CONFIG, encoding="utf-8")
    write_records(
        tmp_path / "data.jsonl",
        [{"rubric_id": "polite", "solution_str": f"answer {i}"} for i in range(3)],
    )
    server = scripted({"default": {"score": 0.5}})
    server.set_plan(
        {"by_model": {}, "responses": [{"score": 0.25}, {"content": "not json"}] * 2, "default": {"score": 1}}
    )
    main(["eval-rubric", "-r", "polite", "-d", "data.jsonl", "-o", "o.json", "--base-url", server.base_url,
          "--concurrency", "1", "--number", "2"])  # fmt: skip
    data = json.loads((tmp_path / "o.json").read_text())
    stats = data["overall_statistics"]
    s = summarize_results(tmp_path / "o.json")["polite"]
    # Unscored judgements are not zeros, as eval-rubric's own summary.
    assert s.count == stats["success_count"] and s.failed == stats["failure_count"]
    assert s.mean == pytest.approx(stats["average"]) and s.std == pytest.approx(stats["stdev"])
    assert (s.min, s.max) == (stats["min"], stats["max"])
    assert s.rows == 3 and min(s.pass_at_k) == 1
    frame, header = load_results(tmp_path / "o.json")
    assert header["kind"] == "rubric" and frame.height == stats["total_runs"]


def test_a_rubric_style_log_is_read(tmp_path: Path) -> None:
    log = _lines(
        tmp_path / "rubric.jsonl",
        [
            {"format": "osmosis-results/1", "kind": "rubric", "config": {"rubric_id": "helpful"}},
            {"row_key": "a", "row_index": 0, "run_index": 0, "success": True, "scores": {"helpful": 0.5}},
            {
                "row_key": "a",
                "row_index": 0,
                "run_index": 1,
                "success": False,
                "scores": {},
                "error": "no score",
            },
            {"row_key": "b", "row_index": 1, "run_index": 0, "success": True, "scores": {"helpful": 1.0}},
            {"row_key": "b", "row_index": 1, "run_index": 1, "success": True, "scores": {"helpful": 0.0}},
        ],
    )
    s = summarize_results(log)["helpful"]
    assert (s.count, s.failed, s.failed_policy) == (3, 1, "exclude")
    assert s.mean == pytest.approx(0.5) and s.variance == pytest.approx(statistics.pvariance([0.5, 1.0, 0.0]))
    assert summarize_results(log, failed="zero")["helpful"].mean == pytest.approx(1.5 / 4)
    result = summarize_results_by_model(log)
    assert (result.kind, result.layout, result.models["primary"].failed_runs) == ("rubric", "log", 1)
    frame, header = load_results(log)
    assert (header["kind"], frame.height) == ("rubric", 4) and "format" not in frame.columns
    assert frame["scores"].struct.field("helpful").to_list() == [0.5, None, 1.0, 0.0]
    assert RESULTS_LOG_FORMATS == ("osmosis-eval-log/1", "osmosis-results/1")
    with pytest.raises(StatsError, match=r"bad\.jsonl:1: unknown results log format"):
        summarize_results(_lines(tmp_path / "bad.jsonl", [{"format": "someone-else/2"}]))


def test_an_old_style_zero_is_not_what_errors_give() -> None:
    # The aggregator's errors argument: the raised attempt is in no statistic, where a failed one is a 0.
    agg = Aggregator(n_runs=5)
    agg.push([1.0, 1.0, 1.0, 1.0], errors=1)
    s = agg.finish()
    assert (s.mean, s.errors, s.failed, s.padded) == (1.0, 1, 0, 0)
    # The row has 4 attempts that count: pass@5 has no row to estimate, so it is not reported.
    assert (s.pass_at_k, s.pass_at_k_rows) == ({1: 1.0, 3: 1.0}, {1: 1, 3: 1})
    assert summarize([[1.0, 1.0, 1.0, 1.0, None]]).mean == pytest.approx(0.8)


def test_score_statistics_matches_the_population_formulas() -> None:
    scores = [0.1, 0.9, 0.5, 0.5, 1.0, 0.0]
    s = score_statistics(scores)
    assert s.mean == pytest.approx(statistics.fmean(scores), abs=1e-15)
    assert s.variance == pytest.approx(statistics.pvariance(scores), abs=1e-15)
    assert s.std == pytest.approx(statistics.pstdev(scores), abs=1e-15)
    assert (s.min, s.max, s.count) == (0.0, 1.0, 6)
    assert score_statistics([]).mean is None
    with pytest.raises(StatsError, match="row 1: attempt 0: score is NaN"):
        score_statistics([0.5, math.nan])


def test_score_moments_are_the_score_statistics_figures() -> None:
    for scores in ([0.1, 0.9, 0.5, 0.5, 1.0, 0.0], [0.25], []):
        s = score_statistics(scores)
        assert score_moments(scores) == (s.mean, s.variance, s.std, s.min, s.max)
    with pytest.raises(StatsError, match="row 1: attempt 0: score is NaN"):
        score_moments([0.5, math.nan])


def test_one_score_has_the_moments_the_aggregator_gives_it() -> None:
    # score_moments answers a single score without the aggregator: the same figures, zeros' signs and all.
    for score in (0.0, -0.0, 1.0, 0.1, 1 / 3, -2.5, 5e-324, 1e308, -1e308, True, 7):
        s = score_statistics([score])
        got, expected = score_moments([score]), (s.mean, s.variance, s.std, s.min, s.max)
        assert got == expected
        assert [math.copysign(1.0, v) for v in got] == [math.copysign(1.0, v) for v in expected]
        assert all(type(v) is float for v in got)
    for bad, word in ((math.nan, "NaN"), (math.inf, "inf")):
        with pytest.raises(StatsError, match=f"row 0: attempt 0: score is {word}"):
            score_moments([bad])


def test_top_level_names_load_lazily() -> None:
    code = (
        "import sys, osmosis_ai; f = osmosis_ai.summarize_results; "
        "print(sorted(m for m in ('polars', 'numpy') if m in sys.modules), f.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "osmosis_ai.stats._results"]
    assert "load_results" in osmosis_ai.__all__ and "summarize_results" in osmosis_ai.__all__


def test_missing_files_raise_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        summarize_results(tmp_path / "nope.json")
