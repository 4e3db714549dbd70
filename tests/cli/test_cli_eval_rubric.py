"""`osmosis eval-rubric` and `osmosis eval rubric` end to end, against real servers on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from osmosis_ai.cli.main import main

pytestmark = pytest.mark.usefixtures("judge_env")

CONFIG = """\
version: 1
default_score_min: 0.0
default_score_max: 1.0
default_model_info:
  provider: openai
  model: judge-1
  api_key: sk-test
groups:
  quality:
    rubrics:
      - id: polite
        title: Politeness
        rubric: Give 1.0 if the answer is polite.
        system_prompt: Entry prompt.
      - id: strict
        rubric: Be strict.
        score_max: 10
        model_info: {provider: openai, model: strict-judge, api_key_env: STRICT_KEY}
---
version: 1
other:
  id: elsewhere
  rubric: A rubric in a second document (document defaults do not carry over).
  model_info: {provider: openai, model: judge-1, api_key: sk-test}
"""


def write_records(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OSMOSIS_EVAL_RESULT_DIR", str(tmp_path / "cache"))
    (tmp_path / "rubric_configs.yaml").write_text(CONFIG, encoding="utf-8")
    write_records(
        tmp_path / "data.jsonl",
        [
            {
                "rubric_id": "polite",
                "solution_str": "Thank you!",
                "conversation_id": "c1",
                "metadata": {"k": 1},
            },
            {"rubric_id": "POLITE ", "solution_str": "Go away.", "id": 7, "ground_truth": "be nice"},
            {"rubric_id": "strict", "solution_str": ""},  # invalid, but for another rubric: not our business
            {"solution_str": "no rubric id"},
        ],
    )
    return tmp_path


def run_cli(*args: str) -> int:
    return main(list(args))


def test_eval_rubric_writes_results_in_the_established_schema(workspace, scripted, capsys):
    server = scripted({"default": {"score": 0.75, "explanation": "fine"}})
    code = run_cli(
        "eval-rubric",
        "-r",
        "polite",
        "-d",
        "data.jsonl",
        "-n",
        "2",
        "-o",
        "out/res.json",
        "--base-url",
        server.base_url,
        "--concurrency",
        "3",
        "--seed",
        "5",
    )
    out = capsys.readouterr().out
    assert code == 0
    assert (
        "Rubric 'polite' (" in out
        and "rubric_configs.yaml:groups.quality.rubrics[0]) -> provider 'openai'" in out
    )
    assert "Loaded 2 matching record(s) from data.jsonl" in out
    assert "Skipped 1 record(s) of other rubrics and 1 without a rubric_id" in out
    assert "Judge health: 0 parse failure(s), 0 clamped, 0 retried, 0 unscored, 0 error(s)" in out
    data = json.loads((workspace / "out" / "res.json").read_text())
    assert list(data)[:10] == [
        "generated_at",
        "rubric_id",
        "rubric_source",
        "provider",
        "model",
        "number",
        "config_path",
        "data_path",
        "overall_statistics",
        "records",
    ]
    assert "output_identifier" not in data
    assert data["overall_statistics"]["total_runs"] == 4 and data["overall_statistics"]["average"] == 0.75
    first, second = data["records"]
    assert (first["id"], first["conversation_id"], second["id"], second["conversation_id"]) == (
        "c1",
        "c1",
        "7",
        "record[2]",
    )
    assert second["input_record"]["ground_truth"] == "be nice"
    assert [r["run_index"] for r in first["runs"]] == [1, 2]
    assert first["runs"][0]["status"] == "success" and first["runs"][0]["raw"]["choices"]
    assert data["judge_health"]["total_tokens"] == 240
    assert not list((workspace / "out").glob("*.partial.jsonl"))
    sent = server.requests()
    assert len(sent) == 4 and all(r["seed"] == 5 for r in sent)
    system = sent[0]["messages"][0]["content"]
    assert system.startswith("Entry prompt.\n\nYou are an impartial reward judge.")
    users = [r["messages"][1]["content"] for r in sent]
    assert any('"dataset_metadata": {\n    "k": 1\n  }' in u for u in users)
    assert any("<<<BEGIN_GROUND_TRUTH>>>\nbe nice" in u for u in users)


def _rubric_log_run(server, *extra):
    return run_cli(
        "eval-rubric", "-r", "polite", "-d", "data.jsonl", "-n", "2", "--base-url", server.base_url, *extra
    )


def test_rubric_logs_number_rows_and_runs_from_0_like_eval_logs(workspace, scripted, capsys):
    # Finding 10: rubric logs numbered rows (and runs) from 1, eval logs from 0.
    from osmosis_ai.stats import load_results

    server = scripted({"default": {"score": 0.75, "explanation": "fine"}})
    assert _rubric_log_run(server, "--log", "run.jsonl", "-o", "res.json") == 0
    header, *records = (json.loads(line) for line in (workspace / "run.jsonl").read_text().splitlines())
    assert header["kind"] == "rubric" and header["index_base"] == 0
    keys = [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert sorted((r["row_index"], r["run_index"]) for r in records) == keys
    # The established -o document keeps its own numbering from 1 ...
    data = json.loads((workspace / "res.json").read_text())
    assert [(r["record_index"], [run["run_index"] for run in r["runs"]]) for r in data["records"]] == [
        (1, [1, 2]),
        (2, [1, 2]),
    ]
    # ... and reads back numbered like the log.
    for path in ("run.jsonl", "res.json"):
        frame, _ = load_results(workspace / path)
        assert sorted(zip(frame["row_index"].to_list(), frame["run_index"].to_list(), strict=True)) == keys


def test_a_rubric_log_of_earlier_versions_reads_from_0_and_resumes_in_its_own_numbering(
    workspace, scripted, capsys
):
    from osmosis_ai.runs.log import read_log
    from osmosis_ai.stats import load_results, summarize_results

    server = scripted({"default": {"score": 0.75, "explanation": "fine"}})
    assert _rubric_log_run(server, "--log", "new.jsonl", "-o", "full.json") == 0
    # The same log as earlier versions wrote it: no index_base, rows and runs from 1; the last run lost.
    header, *records = (json.loads(line) for line in (workspace / "new.jsonl").read_text().splitlines())
    del header["index_base"]
    records.sort(key=lambda r: (r["row_index"], r["run_index"]))
    old = [
        header,
        *({**r, "row_index": r["row_index"] + 1, "run_index": r["run_index"] + 1} for r in records),
    ]
    (workspace / "old.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old[:-1]))
    contents = read_log(workspace / "old.jsonl")
    assert [(r["row_index"], r["run_index"]) for r in contents.runs] == [(0, 0), (0, 1), (1, 0)]
    frame, _ = load_results(workspace / "old.jsonl")
    assert frame["row_index"].to_list() == [0, 0, 1] and frame["run_index"].to_list() == [0, 1, 0]
    assert summarize_results(workspace / "old.jsonl")["polite"].rows == 2
    capsys.readouterr()
    assert _rubric_log_run(server, "--resume", "old.jsonl", "-o", "resumed.json") == 0
    assert "(3 runs already done)" in capsys.readouterr().out
    lines = [json.loads(line) for line in (workspace / "old.jsonl").read_text().splitlines()]
    # One run was left to do, appended in the file's own numbering (one file never mixes two).
    assert len(lines) == 5 and "index_base" not in lines[0]
    assert sorted((r["row_index"], r["run_index"]) for r in lines[1:]) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    resumed, full = (json.loads((workspace / p).read_text()) for p in ("resumed.json", "full.json"))
    assert resumed["overall_statistics"] == full["overall_statistics"]
    assert [r["record_index"] for r in resumed["records"]] == [1, 2]


def test_failed_run_still_writes_the_default_cache_file_and_exits_nonzero(workspace, scripted, capsys):
    server = scripted({"default": {"status": 500, "message": "upstream exploded"}})
    code = run_cli(
        "eval-rubric", "-r", "polite", "-d", "data.jsonl", "--base-url", server.base_url, "--max-retries", "1"
    )
    captured = capsys.readouterr()
    assert code == 1
    assert "Error: 2 of 2 evaluation(s) produced no score (2 error(s), 0 unscored)" in captured.err
    (written,) = (workspace / "cache" / "polite").glob("rubric_eval_result_*.json")
    data = json.loads(written.read_text())
    assert written.name == f"rubric_eval_result_{data['output_identifier']}.json"
    runs = [run for record in data["records"] for run in record["runs"]]
    assert [r["status"] for r in runs] == ["error", "error"]
    assert all("upstream exploded" in r["error"] and r["attempts"] == 2 for r in runs)
    assert data["overall_statistics"]["failure_count"] == 2 and data["judge_health"]["retries"] == 2
    assert len(server.requests()) == 4


def test_unscored_and_clamped_runs_are_counted_not_zeroed(workspace, scripted, capsys):
    server = scripted({"default": {"score": 0.5}})
    server.set_plan({"by_model": {}, "responses": [{"content": "not json"}] * 3, "default": {"score": 3}})
    code = run_cli(
        "eval-rubric",
        "-r",
        "polite",
        "-d",
        "data.jsonl",
        "-o",
        "o.json",
        "--base-url",
        server.base_url,
        "--concurrency",
        "1",
    )
    captured = capsys.readouterr()
    assert code == 1 and "1 unscored" in captured.err
    assert "Judge health: 3 parse failure(s), 1 clamped, 0 retried, 1 unscored, 0 error(s)" in captured.out
    data = json.loads((workspace / "o.json").read_text())
    first, second = (record["runs"][0] for record in data["records"])
    assert (
        first["status"] == "unscored"
        and first["unscored_reason"] == "invalid_json"
        and first["score"] is None
    )
    assert second["status"] == "success" and (second["raw_score"], second["score"], second["clamped"]) == (
        3,
        1,
        True,
    )
    stats = data["overall_statistics"]
    assert (stats["average"], stats["success_count"], stats["unscored_count"]) == (1.0, 1, 1)


def test_output_directory_and_baseline(workspace, scripted, capsys):
    server = scripted({"default": {"score": 0.5}})
    assert (
        run_cli(
            "eval-rubric", "-r", "polite", "-d", "data.jsonl", "-o", "runs", "--base-url", server.base_url
        )
        == 0
    )
    (first,) = (workspace / "runs").glob("rubric_eval_result_*.json")
    server.set_plan({"default": {"score": 0.9}})
    capsys.readouterr()
    assert (
        run_cli(
            "eval-rubric",
            "-r",
            "polite",
            "-d",
            "data.jsonl",
            "-o",
            "second.json",
            "-b",
            str(first),
            "--base-url",
            server.base_url,
        )
        == 0
    )
    out = capsys.readouterr().out
    assert f"Baseline comparison (source: {first}):" in out
    assert "  average      baseline=0.5000 current=0.9000 delta=+0.4000" in out
    assert "  total_runs   baseline=2 current=2 delta=+0" in out
    comparison = json.loads((workspace / "second.json").read_text())["baseline_comparison"]
    assert comparison["delta_statistics"]["average"] == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-r", "polite", "-d", "missing.jsonl"], "Data path 'missing.jsonl' does not exist."),
        (["-r", "polite", "-d", "."], "Expected a JSONL file but received directory"),
        (["-r", "nope", "-d", "data.jsonl"], "Available: elsewhere, polite, strict"),
        (["-r", "strict", "-d", "data.jsonl"], "'STRICT_KEY' is not set"),
        (["-r", "elsewhere", "-d", "data.jsonl"], "No records in 'data.jsonl' reference rubric 'elsewhere'."),
        (
            ["-r", "polite", "-d", "data.jsonl", "-b", "nothing.json"],
            "Baseline path 'nothing.json' does not exist.",
        ),
        (
            ["-r", "polite", "-d", "data.jsonl", "-c", "none.yaml"],
            "Rubric config 'none.yaml' does not exist.",
        ),
    ],
)
def test_input_errors(workspace, capsys, args, message):
    assert run_cli("eval-rubric", *args) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and message in err and "Traceback" not in err
    assert not (workspace / "cache").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-r", " ", "-d", "data.jsonl"], "Rubric identifier cannot be empty."),
        (["-r", "polite", "-d", "data.jsonl", "-n", "0"], "Number of runs must be a positive integer."),
    ],
)
def test_usage_errors_exit_2(workspace, capsys, args, message):
    assert run_cli("eval-rubric", *args) == 2
    err = capsys.readouterr().err
    assert f"Error: {message}" in err and "Traceback" not in err
    assert not (workspace / "cache").exists()


def test_bad_matching_record_names_file_line_and_field(workspace, capsys):
    write_records(
        workspace / "bad.jsonl",
        [
            {"rubric_id": "polite", "solution_str": "ok"},
            {"rubric_id": "polite", "solution_str": "ok", "score_min": "0"},
        ],
    )
    assert run_cli("eval-rubric", "-r", "polite", "-d", "bad.jsonl") == 1
    assert "bad.jsonl:2: field 'score_min' must be a number, got str" in capsys.readouterr().err
    (workspace / "broken.jsonl").write_text('{"rubric_id": "polite", "solution_str": "ok"}\n\n{oops\n')
    assert run_cli("eval-rubric", "-r", "polite", "-d", "broken.jsonl") == 1
    assert "Invalid JSON on line 3 of 'broken.jsonl'" in capsys.readouterr().err  # 0.2.17's words


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        (
            "rubrics:\n  - id: a\n    rubric: x\n    model_info: {provider: openai, model: m}\n"
            "  - id: a\n    rubric: y\n    model_info: {provider: openai, model: m}\n",
            "entry 'rubrics[1]': duplicate rubric id 'a' (first at",
        ),
        ("rubrics:\n  - id: a\n    rubric: x\n    extra_info: {}\n", "must not include 'extra_info'"),
        (
            "version: 2\nrubrics:\n  - id: a\n    rubric: x\n    model_info: {provider: openai, model: m}\n",
            "Unsupported rubric config version 2",
        ),
        (
            "rubrics:\n  - id: a\n    rubric: x\n",
            "(document 1), entry 'rubrics[0]': 'model_info' is required",
        ),
        ("rubrics: [\n", "invalid YAML"),
        ("title: nothing here\n", "No rubric entries found"),
    ],
)
def test_config_errors_name_document_and_entry(workspace, capsys, yaml_text, message):
    (workspace / "bad.yaml").write_text(yaml_text)
    assert run_cli("eval-rubric", "-r", "a", "-d", "data.jsonl", "-c", "bad.yaml") == 1
    assert message in capsys.readouterr().err


def test_rubric_function_receives_enriched_extra_info(workspace, capsys, monkeypatch):
    dump = workspace / "seen.jsonl"
    monkeypatch.setenv("SEEN_FILE", str(dump))
    (workspace / "my_rubrics.py").write_text(
        textwrap.dedent("""\
        import json, os
        from osmosis_ai import osmosis_rubric

        @osmosis_rubric
        def judge(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
            with open(os.environ["SEEN_FILE"], "a") as fh:
                fh.write(json.dumps(extra_info) + "\\n")
            return 1.0 if "Thank" in solution_str else 0.25
    """)
    )
    code = run_cli(
        "eval-rubric", "-r", "polite", "-d", "data.jsonl", "-o", "fn.json", "-f", "my_rubrics:judge"
    )
    assert code == 0, capsys.readouterr().err
    data = json.loads((workspace / "fn.json").read_text())
    assert [r["runs"][0]["score"] for r in data["records"]] == [1.0, 0.25]
    seen = [json.loads(line) for line in dump.read_text().splitlines()]
    first = next(s for s in seen if s.get("dataset_metadata") == {"k": 1})
    assert first["provider"] == "openai" and first["model"] == "judge-1" and first["api_key"] == "sk-test"
    assert "api_key_env" not in first and first["rubric"] == "Give 1.0 if the answer is polite."
    assert (first["score_min"], first["score_max"], first["system_prompt"]) == (0.0, 1.0, "Entry prompt.")
    assert first["metadata"] == {"dataset_metadata": {"k": 1}}
    assert first["model_info"]["system_prompt"] == "Entry prompt."


def test_a_rubric_function_with_kwargs_needs_no_config(workspace, capsys):
    # The git-sync example's form: the three rubric-function arguments then **kwargs (which only tolerates
    # more); it brings its own judge, so no rubric YAML is needed for -f.
    (workspace / "rubric_configs.yaml").unlink()
    (workspace / "kw_rubrics.py").write_text(
        textwrap.dedent("""\
        from osmosis_ai import osmosis_rubric

        @osmosis_rubric
        def compute(solution_str: str, ground_truth: str, extra_info: dict, **kwargs) -> float:
            assert not kwargs and isinstance(extra_info, dict)
            return 1.0 if "Thank" in solution_str else 0.0
    """)
    )
    code = run_cli(
        "eval-rubric", "-r", "polite", "-d", "data.jsonl", "-o", "kw.json", "-f", "kw_rubrics:compute"
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads((workspace / "kw.json").read_text())
    assert [r["runs"][0]["score"] for r in data["records"]] == [1.0, 0.0]
    assert data["config_path"] is None
    assert "-> function 'kw_rubrics:compute'" in captured.out
    # Without -f the YAML is still required, and an explicit --config must exist.
    assert run_cli("eval-rubric", "-r", "polite", "-d", "data.jsonl") == 1
    assert "No rubric config found" in capsys.readouterr().err
    assert (
        run_cli(
            "eval-rubric", "-r", "polite", "-d", "data.jsonl", "-f", "kw_rubrics:compute", "-c", "no.yaml"
        )
        == 1
    )
    assert "Rubric config 'no.yaml' does not exist" in capsys.readouterr().err


def test_eval_rubric_inline_spelling(workspace, scripted, capsys, monkeypatch):
    server = scripted({"default": {"score": 0.6, "explanation": "ok"}})
    (workspace / "rubric.txt").write_text("Judge helpfulness.")
    write_records(
        workspace / "chat.jsonl",
        [
            {
                "id": "a",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": [{"type": "text", "text": "Hello!"}]},
                ],
            },
            {"solution_str": "legacy"},
        ],
    )
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    code = run_cli(
        "eval",
        "rubric",
        "-d",
        "chat.jsonl",
        "-r",
        "@rubric.txt",
        "--model",
        "openai/judge-9",
        "--api-key",
        "sk-inline",
        "-o",
        "res/",
        "-n",
        "2",
        "--score-max",
        "2",
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "DEPRECATION" in captured.err
    assert "Model: openai/judge-9" in captured.out and "Run 02 [SUCCESS]" in captured.out
    # `eval rubric -o` writes 0.3's layout (anchor-0.3 §5.4), 0.3's keys first, in the place eval-rubric uses.
    written = workspace / "res" / "rubric_eval_result.json"  # 0.3: a trailing / names a directory
    data = json.loads(written.read_text())
    assert list(data)[:7] == [
        "generated_at", "model", "rubric", "data_path", "number", "overall_statistics", "records",
    ]  # fmt: skip
    assert (data["model"], data["rubric"], data["number"]) == ("openai/judge-9", "Judge helpfulness.", 2)
    first = data["records"][0]
    assert list(first)[:6] == ["index", "label", "scores", "explanations", "errors", "statistics"]
    assert [r["label"] for r in data["records"]] == ["a", "record[2]"]
    assert (first["index"], first["scores"], first["explanations"], first["errors"]) == (
        1,
        [0.6, 0.6],
        ["ok", "ok"],
        [],
    )
    assert first["statistics"]["average"] == pytest.approx(0.6) and first["statistics"]["total_runs"] == 2
    assert data["overall_statistics"]["total_runs"] == 4 and data["overall_statistics"]["min"] == 0.6
    # Ours after 0.3's keys: the runs, so report / compare / summarize_results read the file as before.
    assert [run["score"] for run in first["runs"]] == [0.6, 0.6]
    from osmosis_ai import summarize_results

    summary = summarize_results(written)["rubric"]
    assert (summary.count, summary.rows, summary.mean) == (4, 2, pytest.approx(0.6))
    sent = server.requests()
    assert all(r["model"] == "judge-9" for r in sent)
    assert any("<<<BEGIN_CANDIDATE_OUTPUT>>>\nHello!" in r["messages"][1]["content"] for r in sent)
    assert "between 0.0 and 2.0" in sent[0]["messages"][0]["content"]


def test_eval_rubric_inline_errors(workspace, capsys):
    write_records(workspace / "chat.jsonl", [{"messages": [{"role": "user", "content": "hi"}]}])
    assert (
        run_cli("eval", "rubric", "-d", "chat.jsonl", "-r", "x", "--model", "openai/m", "--api-key", "k") == 1
    )
    assert "chat.jsonl:1: no candidate text" in capsys.readouterr().err
    assert run_cli("eval", "rubric", "-d", "chat.jsonl", "-r", "@nope.txt", "--model", "openai/m") == 1
    assert "Rubric file 'nope.txt' does not exist." in capsys.readouterr().err
    assert run_cli("eval", "rubric", "-d", "chat.jsonl", "-r", "x", "--model", "mystery") == 1
    assert "Cannot infer the provider of model 'mystery'" in capsys.readouterr().err


@pytest.mark.parametrize("spelling", ["eval-rubric", "eval rubric"])
def test_the_output_rule_holds_for_both_rubric_commands(workspace, scripted, capsys, monkeypatch, spelling):
    # A FIFO given as -o is refused before any judge call and stays a FIFO (issue #32 item 3).
    server = scripted({"default": {"score": 0.6, "explanation": "ok"}})
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    write_records(workspace / "chat.jsonl", [{"messages": [{"role": "assistant", "content": "Hello!"}]}])
    fifo = workspace / "out.fifo"
    os.mkfifo(fifo)
    if spelling == "eval-rubric":
        args = ["eval-rubric", "-r", "polite", "-d", "data.jsonl", "--base-url", server.base_url]
    else:
        args = ["eval", "rubric", "-d", "chat.jsonl", "-r", "Judge.", "--model", "openai/judge-9"]
    assert run_cli(*args, "-o", str(fifo)) == 2
    assert "FIFO (named pipe), not a regular file" in capsys.readouterr().err
    assert server.requests() == [] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_eval_rubric_dash_writes_the_document_to_stdout(workspace, scripted, monkeypatch):
    server = scripted({"default": {"score": 0.6, "explanation": "ok"}})
    write_records(workspace / "chat.jsonl", [{"messages": [{"role": "assistant", "content": "Hello!"}]}])
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
    proc = subprocess.run(
        [sys.executable, "-m", "osmosis_ai.cli.main", "eval", "rubric", "-d", "chat.jsonl", "-r", "Judge.",
         "--model", "openai/judge-9", "-o", "-"],
        cwd=workspace, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["overall_statistics"]["total_runs"] == 1
    assert "Model: openai/judge-9" in proc.stderr and not (workspace / "-").exists()


def _rubric_cmd(server, *extra):
    return [
        sys.executable,
        "-m",
        "osmosis_ai.cli.main",
        "eval-rubric",
        "-r",
        "polite",
        "-d",
        "many.jsonl",
        "--base-url",
        server.base_url,
        "--concurrency",
        "2",
        *extra,
    ]


def _many_records(workspace, count=30):
    write_records(
        workspace / "many.jsonl", [{"rubric_id": "polite", "solution_str": f"a{i}"} for i in range(count)]
    )
    # Different scores per record, so a lost or doubled run would change the statistics.
    return {"by_prompt": {f"a{i}\n": [{"score": (i % 5) / 4}] for i in range(count)}}


def _held_from(plan, first_held):
    """``plan`` with the judge calls of records ``first_held`` and on never answered (held by the server)."""
    prompts = plan["by_prompt"]
    return {
        "by_prompt": {
            k: [{"hold": True}] if i >= first_held else v for i, (k, v) in enumerate(prompts.items())
        }
    }


def _logged_keys(log):
    lines = log.read_text().splitlines()[1:]
    return [(json.loads(line)["row_index"], json.loads(line)["run_index"]) for line in lines]


def _interrupt_then_resume(workspace, server, sig):
    env = {**os.environ, "OSMOSIS_EVAL_RESULT_DIR": str(workspace / "cache")}
    log = workspace / "run.jsonl"
    args = _rubric_cmd(server, "-n", "2", "-o", "partial.json")
    answers = _many_records(workspace)
    server.set_plan(_held_from(answers, 15))
    proc = subprocess.Popen(
        [*args, "--log", str(log)],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Both judge slots (--concurrency 2) wait on held calls: every earlier run has finished and is logged,
    # and none of the held ones can finish, however slow the machine.
    server.wait_held(2)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=120)
    done_before = len(_logged_keys(log))
    assert 15 <= done_before < 60
    server.set_plan(answers)
    resumed = subprocess.run(
        [*args, "-o", "resumed.json", "--resume", str(log)],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    keys = _logged_keys(log)
    assert len(keys) == 60 and len(set(keys)) == 60  # nothing lost, nothing done twice
    return proc.returncode, err, json.loads((workspace / "resumed.json").read_text())


def test_ctrl_c_keeps_the_log_and_resume_finishes_the_same(workspace, scripted):
    server = scripted(_many_records(workspace))
    straight = subprocess.run(
        _rubric_cmd(server, "-n", "2", "-o", "straight.json"), cwd=workspace, capture_output=True, text=True
    )
    assert straight.returncode == 0, straight.stderr
    expected = json.loads((workspace / "straight.json").read_text())["overall_statistics"]
    code, err, resumed = _interrupt_then_resume(workspace, server, signal.SIGINT)
    assert code == 130, err
    assert "Evaluation cancelled by user after" in err and "Continue with: osmosis" in err
    assert f"--resume {workspace / 'run.jsonl'}" in err
    partial = json.loads((workspace / "partial.json").read_text())
    assert partial["interrupted"] is True and 5 <= partial["completed_runs"] < 60
    # The records from 15 on never finished a run: the warning counts them with the planned runs of -o.
    missing = partial["planned_runs"] - partial["completed_runs"]
    assert partial["planned_runs"] == 60
    said = [w["message"] for w in partial["warnings"] if w["code"] == "incomplete"]
    assert said and f"{missing} of 60 planned runs are missing" in said[0], partial["warnings"]
    assert "rows with no finished run" in said[0]
    assert resumed["overall_statistics"] == expected and resumed["completed_runs"] == 60


def test_sigterm_says_terminated_and_keeps_the_marked_partial_file(workspace, scripted):
    server = scripted(_many_records(workspace))
    code, err, resumed = _interrupt_then_resume(workspace, server, signal.SIGTERM)
    assert code == 143, err
    assert "Evaluation terminated (SIGTERM) after" in err and "cancelled by user" not in err
    assert json.loads((workspace / "partial.json").read_text())["interrupted"] is True
    assert resumed["completed_runs"] == 60


def test_kill_9_then_resume_gives_the_same_summary(workspace, scripted):
    server = scripted(_many_records(workspace))
    straight = subprocess.run(
        _rubric_cmd(server, "-n", "2", "-o", "straight.json"), cwd=workspace, capture_output=True, text=True
    )
    assert straight.returncode == 0, straight.stderr
    expected = json.loads((workspace / "straight.json").read_text())["overall_statistics"]
    code, _err, resumed = _interrupt_then_resume(workspace, server, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert resumed["overall_statistics"] == expected


def test_resume_refuses_a_changed_dataset(workspace, scripted):
    server = scripted({"default": {"score": 0.5}})
    _many_records(workspace, 3)
    log = workspace / "run.jsonl"
    first = subprocess.run(
        [*_rubric_cmd(server), "--log", str(log)], cwd=workspace, capture_output=True, text=True
    )
    assert first.returncode == 0, first.stderr
    _many_records(workspace, 4)
    again = subprocess.run(
        [*_rubric_cmd(server), "--resume", str(log)], cwd=workspace, capture_output=True, text=True
    )
    assert again.returncode == 1 and "the dataset changed since the log was started" in again.stderr


def test_real_local_model_through_the_cli(workspace, local_model, capsys):
    (workspace / "local.yaml").write_text(
        textwrap.dedent(f"""\
        rubrics:
          - id: paris
            rubric: Give 1.0 if the answer names Paris as the capital of France, else 0.0.
            model_info:
              provider: openai
              model: {local_model.model}
              api_key: sk-local
              base_url: {local_model.base_url}
              max_tokens: 128
    """)
    )
    write_records(
        workspace / "local.jsonl",
        [
            {"rubric_id": "paris", "solution_str": "Paris.", "original_input": "Capital of France?"},
            {"rubric_id": "paris", "solution_str": "Lyon.", "original_input": "Capital of France?"},
        ],
    )
    code = run_cli(
        "eval-rubric",
        "-r",
        "paris",
        "-d",
        "local.jsonl",
        "-c",
        "local.yaml",
        "-o",
        "local.json",
        "--concurrency",
        "2",
        "--seed",
        "1",
    )
    captured = capsys.readouterr()
    data = json.loads((workspace / "local.json").read_text())
    runs = [record["runs"][0] for record in data["records"]]
    assert {r["status"] for r in runs} <= {"success", "unscored"}
    assert code == (0 if all(r["status"] == "success" for r in runs) else 1), captured.err
    for run in runs:
        if run["status"] == "success":
            assert 0.0 <= run["score"] <= 1.0 and run["explanation"]
    assert data["judge_health"]["prompt_tokens"] > 0 and data["judge_health"]["completion_tokens"] > 0


def test_a_crash_inside_the_session_still_writes_finished_runs(workspace, scripted, capsys, monkeypatch):
    from osmosis_ai.rubric.engine import JudgeExecutor

    server = scripted({"default": {"score": 0.5}})
    original, calls = JudgeExecutor.finish, []

    def flaky(self, item, record):
        calls.append(item)
        if len(calls) == 3:
            raise RuntimeError("boom")  # a bug of ours, outside the per-run error handling
        return original(self, item, record)

    monkeypatch.setattr(JudgeExecutor, "finish", flaky)
    code = run_cli(
        "eval-rubric",
        "-r",
        "polite",
        "-d",
        "data.jsonl",
        "-n",
        "3",
        "-o",
        "crash.json",
        "--base-url",
        server.base_url,
        "--concurrency",
        "1",
    )
    assert code == 1
    assert (
        "The session stopped early after 2 of 6 run(s) (RuntimeError: boom); finished runs were written."
        in capsys.readouterr().err
    )
    data = json.loads((workspace / "crash.json").read_text())
    assert data["completed_runs"] == 2 and data["session_error"] == "RuntimeError: boom"


def test_async_rubric_function_runs_concurrently(workspace, capsys):
    (workspace / "async_rubrics.py").write_text(
        textwrap.dedent("""\
        import asyncio
        from osmosis_ai import osmosis_rubric

        @osmosis_rubric
        async def judge(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
            await asyncio.sleep(0.01)
            return float(len(solution_str))
    """)
    )
    code = run_cli(
        "eval-rubric",
        "-r",
        "polite",
        "-d",
        "data.jsonl",
        "-o",
        "async.json",
        "-n",
        "2",
        "-f",
        "async_rubrics:judge",
    )
    assert code == 0, capsys.readouterr().err
    data = json.loads((workspace / "async.json").read_text())
    assert [[run["score"] for run in r["runs"]] for r in data["records"]] == [[10.0, 10.0], [8.0, 8.0]]


def test_systemic_failure_stops_spending_calls(workspace, scripted, capsys):
    server = scripted({"default": {"status": 404, "message": "model judge-1 does not exist"}})
    code = run_cli(
        "eval-rubric",
        "-r",
        "polite",
        "-d",
        "data.jsonl",
        "-n",
        "3",
        "-o",
        "sys.json",
        "--base-url",
        server.base_url,
        "--concurrency",
        "1",
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "stopped early after 1 of 6 run(s) (systemic provider failure, remaining runs skipped:" in err
    assert "does not exist" in err
    assert len(server.requests()) == 1
    data = json.loads((workspace / "sys.json").read_text())
    assert data["records"][0]["runs"][0]["error_kind"] == "not_found" and data["completed_runs"] == 1


def test_per_record_statistics_are_the_result_models(workspace, scripted, capsys):
    # Each record's statistics (the -o document and the console report, streamed record by record
    # through the core's aggregator) equal the log's result model read per row.
    from osmosis_ai.results import read_results

    server = scripted({"default": {"score": 0.5}})
    replies = [{"score": 0.2}, {"score": 0.9}, *[{"content": "not json"}] * 3, {"score": 0.4}]
    server.set_plan({"by_model": {}, "responses": replies, "default": {"score": 0.7}})
    args = ["-r", "polite", "-d", "data.jsonl", "-n", "3", "--base-url", server.base_url]
    code = run_cli("eval-rubric", *args, "-o", "o.json", "--log", "r.jsonl", "--concurrency", "1")
    assert code == 1  # one run unscored
    report = capsys.readouterr().out
    payload = json.loads((workspace / "o.json").read_text())
    model = read_results(workspace / "r.jsonl", failed="exclude", per_row=True).model().function("polite")
    assert model.per_row is not None and [r.row for r in model.per_row] == [0, 1]
    for record, row in zip(payload["records"], model.per_row, strict=True):
        expected = {
            "average": row.mean,
            "variance": row.variance,
            "stdev": row.std,
            "min": row.min,
            "max": row.max,
            "total_runs": row.finished,
            "success_count": row.scored,
            "failure_count": row.finished - row.scored,
            "unscored_count": row.unscored,
        }
        assert record["statistics"] == expected
        assert f"average: {'n/a' if row.mean is None else f'{row.mean:.4f}'}" in report
    assert [r.unscored for r in model.per_row] == [1, 0] and model.per_row[1].min == 0.4


def test_the_report_page_of_rubric_files_names_the_judge_and_the_dataset(workspace, scripted, monkeypatch):
    # Finding 12: the page's model(s) was blank for a rubric log and -o JSON (no judge shown), and the -o
    # JSON "did not name its dataset file" although it has data_path. Read here from another directory.
    import osmosis_ai

    server = scripted(_many_records(workspace, count=3))
    done = subprocess.run(
        [*_rubric_cmd(server, "-n", "2", "-o", "er.json"), "--log", "er.jsonl"],
        cwd=workspace,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for name in ("er.json", "er.jsonl"):
        meta = osmosis_ai.report(workspace / name, output=elsewhere / f"{name}.html").runs[0].meta
        assert meta["models"] == ["openai/judge-1 (judge)"], name
        # -o keeps data_path as given (the established field); found beside the file from elsewhere.
        assert meta["dataset"]["path"] in ("many.jsonl", str(workspace / "many.jsonl")), name
        assert meta["notes"] == [] and meta["dataset_read"] == str(workspace / "many.jsonl"), meta["notes"]


def _rubric_args(spelling: str, base_url: str) -> list[str]:
    if spelling == "eval-rubric":
        return ["eval-rubric", "-r", "polite", "-d", "many.jsonl", "--base-url", base_url]
    return ["eval", "rubric", "-d", "many.jsonl", "-r", "Judge.", "--model", "openai/judge-9"]


@pytest.mark.parametrize("spelling", ["eval-rubric", "eval rubric"])
def test_a_local_server_with_fewer_slots_gets_no_more_calls_at_once(
    workspace, scripted, capsys, monkeypatch, spelling
):
    # llama.cpp's server (the embedded model: 1 slot) queues calls beyond its slots, and the queue's wait
    # counts against each call's timeout: the run sends no more at once than the server's /props says.
    server = scripted({"default": {"score": 0.6, "explanation": "ok"}, "props": {"total_slots": 1}})
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    rows = [{"rubric_id": "polite", "solution_str": f"answer {i}", "messages": []} for i in range(6)]
    write_records(workspace / "many.jsonl", rows)
    assert run_cli(*_rubric_args(spelling, server.base_url), "--concurrency", "8", "--json") == 0
    captured = capsys.readouterr()
    notice = (
        f"The server at {server.base_url} has 1 request slot(s): running 1 judge calls at a time instead of 8"
    )
    assert captured.err.count(notice) == 1, captured.err
    assert json.loads(captured.out)["data"]["concurrency"] == 1
    assert len(server.requests()) == 6 and server.most_in_flight() == 1


def test_a_server_without_props_keeps_the_asked_concurrency(workspace, scripted, capsys, monkeypatch):
    server = scripted({"default": {"score": 0.6, "explanation": "ok"}})  # /props answers 404
    write_records(workspace / "many.jsonl", [{"rubric_id": "polite", "solution_str": "hi"}] * 3)
    assert run_cli(*_rubric_args("eval-rubric", server.base_url), "--concurrency", "4", "--json") == 0
    captured = capsys.readouterr()
    assert "request slot(s)" not in captured.err
    assert json.loads(captured.out)["data"]["concurrency"] == 4


@pytest.mark.parametrize("repeat", [False, True])
def test_the_report_printed_in_the_document_pass_is_the_report_read_back(workspace, scripted, capsys, repeat):
    # The console report's records are printed as the -o document is written (one read of the dataset
    # and the log): the text is what the report read back from the log on its own says, with unscored,
    # clamped and multi-run records, an explanation of several lines and one with a terminal escape.
    from osmosis_ai.rubric.report import print_report
    from osmosis_ai.rubric.run import RubricEvalOptions, run_rubric_eval

    server = scripted({"default": {"score": 0.5}})
    replies = [
        {"score": 0.2, "explanation": "first line\nsecond line"},
        {"score": 3, "explanation": "too high"},
        *[{"content": "not json"}] * 3,
        {"score": 0.4, "explanation": "red \x1b[31m alert"},
    ]
    server.set_plan({"by_model": {}, "responses": replies, "default": {"score": 0.7, "explanation": "ok"}})
    runs = ["--repeat", "3"] if repeat else ["-n", "3"]
    args = ["-r", "polite", "-d", "data.jsonl", *runs, "--base-url", server.base_url, "--concurrency", "1"]
    assert run_cli("eval-rubric", *args, "-o", "o.json", "--log", "r.jsonl") == 1  # one run unscored
    printed = capsys.readouterr().out
    options = RubricEvalOptions(
        rubric_id="polite", data_path="data.jsonl", output="again.json", resume_path="r.jsonl", number=3,
        base_url=server.base_url, repeat=3 if repeat else None,
    )  # fmt: skip
    result = run_rubric_eval(options)
    lines: list[str] = []
    print_report(result.report(), lines.append)
    assert "\n".join(lines) in printed and "\\x1b[31m" in printed and "      second line" in printed
    assert printed.count("Summary:") == 2 and "clamped" in printed
    written, again = (json.loads((workspace / name).read_text()) for name in ("o.json", "again.json"))
    for key in ("overall_statistics", "judge_health", "completed_runs", "judge_noise"):
        assert written.get(key) == again.get(key)
    assert written["records"] == again["records"]


@pytest.mark.parametrize("odd_at", [None, 120])
def test_eval_rubric_prints_and_writes_what_the_python_writer_does_when_the_core_hands_back(
    workspace, scripted, capsys, odd_at
):
    # The core lays out `eval rubric -o`'s records and their console report a batch at a time; a record it
    # cannot write byte for byte (a score of 1e-05: orjson writes it its own way) hands the document back
    # to the Python writer, whose report goes on after the records already shown.
    from osmosis_ai._files import write_json_streamed
    from osmosis_ai.rubric.report import print_report
    from osmosis_ai.rubric.run import InlineRubricOptions, run_rubric_eval

    server = scripted({"default": {"score": 0.5}})
    replies = [{"score": 0.25, "explanation": f"reply {i}\nline two é"} for i in range(150)]
    if odd_at is not None:
        replies[odd_at] = {"score": 1e-05, "explanation": "tiny"}
    server.set_plan({"by_model": {}, "responses": replies, "default": {"score": 0.7, "explanation": "ok"}})
    rows = [
        {"id": f"chat {i}", "messages": [{"role": "assistant", "content": f"answer {i}"}]} for i in range(150)
    ]
    write_records(workspace / "chat.jsonl", rows)
    args = ["-d", "chat.jsonl", "-r", "Be kind.", "--model", "openai/judge-1", "--base-url", server.base_url]
    assert run_cli("eval", "rubric", *args, "--concurrency", "1", "-o", "o.json", "--log", "r.jsonl") == 0
    printed = capsys.readouterr().out
    options = InlineRubricOptions(
        data_path="chat.jsonl", rubric="Be kind.", model="openai/judge-1", output="again.json",
        resume_path="r.jsonl", base_url=server.base_url,
    )  # fmt: skip
    result = run_rubric_eval(options)
    lines: list[str] = []
    print_report(result.report(), lines.append)
    assert printed.startswith("\n".join(lines[:-5])) and printed.count("[chat ") == 150
    written = (workspace / "o.json").read_bytes()
    head, records, tail = result.document_parts()
    write_json_streamed(workspace / "python.json", head, "records", records, lambda: tail, ensure_ascii=False)
    python = (workspace / "python.json").read_bytes()
    records_of = lambda text: text.split(b'"records": ')[1].split(b"\n  ],\n")[0]  # noqa: E731
    assert records_of(written) == records_of(python)
    assert (b'"score": 0.00001' in written) == (odd_at is not None)
    assert json.loads(written)["judge_health"] == json.loads(python)["judge_health"]
