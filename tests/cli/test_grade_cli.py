"""`osmosis grade` and `--eval-fn grader.json`: OpenAI grader configs from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osmosis_ai.cli.main import main
from osmosis_ai.runs.log import ResultsLog, dataset_fingerprint, row_key

EXACT = {
    "type": "string_check",
    "name": "exact",
    "input": "{{sample.output_text}}",
    "reference": "{{item.ground_truth}}",
    "operation": "eq",
    "pass_threshold": 1,
}
CONTAINS = {**EXACT, "name": "contains", "operation": "ilike"}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_grade_samples_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grader = tmp_path / "g.json"
    grader.write_text(json.dumps(EXACT))
    data = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"ground_truth": "4", "output_text": "4"},
            {"ground_truth": "9", "output_text": "9"},
            {"ground_truth": "5", "messages": [{"role": "assistant", "content": "6"}]},
        ],
    )
    code = main(
        ["--json", "grade", "--grader", str(grader), "-d", str(data), "--log", str(tmp_path / "l.jsonl")]
    )
    summary = json.loads(capsys.readouterr().out)["data"]
    assert code == 0
    assert (summary["graded"], summary["passed"], summary["errors"]) == (3, 2, 0)
    assert summary["mean"] == pytest.approx(2 / 3)
    records = [json.loads(line) for line in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert records[0]["kind"] == "grade" and [r["scores"]["exact"] for r in records[1:]] == [1.0, 1.0, 0.0]
    # Resuming the finished log grades nothing again.
    code = main(
        ["--json", "grade", "--grader", str(grader), "-d", str(data), "--resume", str(tmp_path / "l.jsonl")]
    )
    assert code == 0 and len((tmp_path / "l.jsonl").read_text().splitlines()) == 4


def test_grade_saved_runs_of_a_results_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"user_prompt": "2+2?", "ground_truth": "4"}, {"user_prompt": "3+3?", "ground_truth": "6"}]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    source = tmp_path / "eval.jsonl"
    with ResultsLog.create(source, {}, kind="eval", dataset=dataset_fingerprint(data)) as log:
        for index, (row, answers) in enumerate(zip(rows, (["4", "5"], ["6", "6"]), strict=True)):
            for run_index, answer in enumerate(answers):
                log.append(
                    {
                        "row_key": row_key(row),
                        "row_index": index,
                        "run_index": run_index,
                        "model_tag": "",
                        "success": True,
                        "scores": {},
                        "final_messages": [
                            {"role": "user", "content": row["user_prompt"]},
                            {"role": "assistant", "content": answer},
                        ],
                    }
                )
    grader = tmp_path / "g.json"
    grader.write_text(json.dumps(EXACT))
    out_log = tmp_path / "graded.jsonl"
    code = main(
        ["--json", "grade", "--grader", str(grader), "--from-log", str(source), "--log", str(out_log)]
    )
    summary = json.loads(capsys.readouterr().out)["data"]
    assert code == 0 and (summary["graded"], summary["passed"]) == (4, 3)
    graded = [json.loads(line) for line in out_log.read_text().splitlines()[1:]]
    keyed = {(r["row_index"], r["run_index"]): r["scores"]["exact"] for r in graded}
    assert keyed == {(0, 0): 1.0, (0, 1): 0.0, (1, 0): 1.0, (1, 1): 1.0}


def test_grading_a_log_keeps_its_rows_runs_and_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from osmosis_ai.results import read_results

    rows = [{"user_prompt": "2+2?", "ground_truth": "4"}, {"user_prompt": "3+3?", "ground_truth": "6"}]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    source = tmp_path / "eval.jsonl"
    answers = [("4", "5"), (None, "6")]  # row 1's first run errored: no output
    with ResultsLog.create(source, {"n_runs": 2}, kind="eval", dataset=dataset_fingerprint(data)) as log:
        for index, row in enumerate(rows):
            for run_index, answer in enumerate(answers[index]):
                done = {"final_messages": [{"role": "assistant", "content": answer}]} if answer else {}
                log.append(
                    {"row_key": row_key(row), "row_index": index, "run_index": run_index, "model_tag": "",
                     "success": answer is not None, "scores": {}, **done}
                )  # fmt: skip
    grader = tmp_path / "g.json"
    grader.write_text(json.dumps(EXACT))
    out_log = tmp_path / "graded.jsonl"
    main(["--json", "grade", "--grader", str(grader), "--from-log", str(source), "--log", str(out_log)])
    summary = json.loads(capsys.readouterr().out)["data"]
    model = read_results(out_log)
    # 2 rows x n = 2 of the source's dataset (not the source log's lines as rows of a dataset).
    assert (model.n_runs, model.model().total_rows, model.model().total_runs) == (2, 2, 4)
    assert json.loads(out_log.read_text().splitlines()[0])["dataset"]["path"] == str(data)
    # The errored run counts as the eval counted it (0.0): the CLI's mean is the report's.
    assert (summary["graded"], summary["mean"]) == (3, model.model().function("exact").mean) == (3, 0.5)


def test_grade_reports_errors_with_a_non_zero_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grader = tmp_path / "g.json"
    grader.write_text(
        json.dumps({"type": "python", "name": "p", "source": "def grade(s, i):\n    return i['x']\n"})
    )
    data = write_jsonl(tmp_path / "s.jsonl", [{"x": 0.5, "output_text": "a"}, {"output_text": "b"}])
    code = main(["grade", "--grader", str(grader), "-d", str(data), "--log", str(tmp_path / "l.jsonl")])
    captured = capsys.readouterr()
    assert code == 1
    assert "mean 0.5000" in captured.out and "KeyError" in captured.err


def test_grade_json_exits_as_text_mode_and_passed_is_null_without_a_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grader = tmp_path / "g.json"
    grader.write_text(json.dumps({k: v for k, v in EXACT.items() if k != "pass_threshold"}))
    data = write_jsonl(
        tmp_path / "s.jsonl", [{"ground_truth": "4", "output_text": "4"}, {"ground_truth": "5"}]
    )
    for mode in ([], ["--json"]):
        log = tmp_path / f"l{len(mode)}.jsonl"
        code = main([*mode, "grade", "--grader", str(grader), "-d", str(data), "--log", str(log)])
        captured = capsys.readouterr()
        assert code == 1, (mode, captured.err)
        assert "1 record(s) without output" in captured.err
    summary = json.loads(captured.out)["data"]
    # No pass_threshold: the grader decides no pass (null, never 0).
    assert (summary["graded"], summary["passed"], summary["without_output"]) == (1, None, 1)


def test_eval_fn_accepts_a_grader_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contains.json").write_text(json.dumps(CONTAINS))
    (tmp_path / "exact.json").write_text(json.dumps(EXACT))
    write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"user_prompt": "Capital of France?", "ground_truth": "Paris"},
            {"user_prompt": "Capital of Peru?", "ground_truth": "Lima"},
        ],
    )
    code = main(
        [
            "--json",
            "reward",
            "probe",
            "-d",
            "d.jsonl",
            "--eval-fn",
            "contains.json",
            "--eval-fn",
            "exact.json",
            "--fail-above",
            "0.5",
        ]
    )
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == 1
    contains = {f["probe"]: f["fraction"] for f in data["functions"]["contains.json"]["gameable"]}
    assert contains["buried"] == 1.0 and contains["repeated"] == 1.0 and contains["empty"] == 0.0
    exact = {f["probe"]: f["fraction"] for f in data["functions"]["exact.json"]["gameable"]}
    # Text answers: the numeric controls do not apply (null, never 0); no other control passes.
    assert exact.pop("all_numbers") is None and exact.pop("wrong_unit") is None
    assert all(fraction == 0.0 for fraction in exact.values())
    assert {f["function"] for f in data["failed"]} == {"contains.json"}


def test_grading_a_log_reads_it_in_one_pass(tmp_path: Path) -> None:
    # The source log comes through a named pipe, which gives its bytes once: before, the header was read
    # twice and the log scanned again for n, so the second open of the pipe waited for a writer forever.
    import os
    import subprocess
    import sys
    import threading

    rows = [{"user_prompt": "2+2?", "ground_truth": "4"}, {"user_prompt": "3+3?", "ground_truth": "6"}]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    source = tmp_path / "eval.jsonl"
    with ResultsLog.create(source, {"n_runs": 2}, kind="eval", dataset=dataset_fingerprint(data)) as log:
        for index, row in enumerate(rows):
            for run_index, answer in enumerate(("4", "6")):
                log.append(
                    {"row_key": row_key(row), "row_index": index, "run_index": run_index, "model_tag": "",
                     "success": True, "scores": {}, "final_messages": [{"role": "assistant", "content": answer}]}
                )  # fmt: skip
    grader = tmp_path / "g.json"
    grader.write_text(json.dumps(EXACT))
    pipe = tmp_path / "eval.pipe"
    os.mkfifo(pipe)
    content = source.read_bytes()

    def feed() -> None:  # one writer: the pipe's bytes can be read once
        with pipe.open("wb") as out:
            out.write(content)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    osmosis = str(Path(sys.executable).with_name("osmosis"))

    def grade(path: Path, name: str) -> tuple[dict, list[dict]]:
        out_log = tmp_path / f"{name}.jsonl"
        args = [
            osmosis,
            "--json",
            "grade",
            "--grader",
            str(grader),
            "--from-log",
            str(path),
            "--log",
            str(out_log),
        ]
        done = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=tmp_path)  # a hang guard
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in out_log.read_text().splitlines()]
        summary = json.loads(done.stdout)["data"]
        return {**summary, "log": None}, [lines[0]["config"], *({**r, "invocation": None} for r in lines[1:])]

    piped = grade(pipe, "piped")
    writer.join(timeout=120)
    by_file = grade(source, "by_file")
    assert piped[1][0]["n_runs"] == 2 and piped[0]["graded"] == 4
    piped[1][0]["source_log"] = by_file[1][0]["source_log"]
    strip = [{k: v for k, v in r.items() if "ms" not in k and "time" not in k} for r in piped[1]]
    assert strip == [{k: v for k, v in r.items() if "ms" not in k and "time" not in k} for r in by_file[1]]
    assert piped[0] == by_file[0]
