"""The rubric results document streamed from the dataset and the results log (issue #33 item 1): the file
written one record at a time reads as the whole document, the library result builds that document only when
asked, and writing it holds one record, not the records."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osmosis_ai.rubric.calibration import NoiseTally
from osmosis_ai.rubric.document import DocumentTally, payload_head, record_runs, write_document
from osmosis_ai.rubric.records import RecordSource
from osmosis_ai.rubric.run import InlineRubricOptions, RubricEvalOptions, run_rubric_eval
from osmosis_ai.runs.log import ResultsLog

pytestmark = pytest.mark.usefixtures("judge_env")

CONFIG = """\
rubrics:
  - id: helpful
    rubric: Give 1.0 if the answer helps.
    model_info: {provider: openai, model: judge-1, api_key: sk-test}
"""

PLAN = {
    "by_prompt": {
        "alpha answer": [{"score": 0.2, "explanation": "x"}, {"score": 0.6, "explanation": "y"}],
        "beta answer": [{"score": 1.0, "explanation": "z"}],
        "gamma answer": [{"status": 500, "message": "scripted failure"}],
    }
}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rubric_configs.yaml").write_text(CONFIG)
    rows = [
        {"rubric_id": "helpful", "id": key, "solution_str": f"{name} answer", "note": "é ✓"}
        for key, name in (("a", "alpha"), ("b", "beta"), ("g", "gamma"))
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "chats.jsonl").write_text(
        "".join(
            json.dumps({"id": key, "messages": [{"role": "assistant", "content": f"{name} answer"}]}) + "\n"
            for key, name in (("a", "alpha"), ("b", "beta"))
        )
    )
    (tmp_path / "gold.jsonl").write_text('{"id": "a", "score": 0.5}\n{"id": "b", "score": 1.0}\n')
    (tmp_path / "base.json").write_text(json.dumps({"average": 0.5, "variance": 0.1, "stdev": 0.3}))
    return tmp_path


def _as_written(document: dict) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def test_the_streamed_0_2_document_is_the_whole_payload_in_its_key_order(workspace: Path, scripted) -> None:
    server = scripted(PLAN)
    options = RubricEvalOptions(
        rubric_id="helpful", data_path="data.jsonl", output="out.json", repeat=2, gold_path="gold.jsonl",
        baseline_path="base.json", base_url=server.base_url, concurrency=1, max_retries=0,
        log_path="run.jsonl",
    )  # fmt: skip
    result = run_rubric_eval(options)
    text = (workspace / "out.json").read_text(encoding="utf-8")
    assert text == _as_written(result.payload)  # built on request, from the same log and dataset
    assert result.document is result.payload
    assert list(result.summary) == [key for key in result.payload if key != "records"]
    tail = list(result.summary)[list(result.summary).index("overall_statistics") + 1 :]
    assert tail[-3:] == ["baseline_comparison", "judge_noise", "gold_agreement"]
    assert result.summary["completed_runs"] == 6 and result.session.health.errors == 2
    assert result.summary["judge_health"] == result.session.health.as_json()
    assert result.summary["judge_noise"]["examples"][0]["record"] == "a"
    assert result.summary["gold_agreement"]["count"] == 2
    assert list(result.rows()) == result.payload["records"]
    # The session's runs by record, as before, read from the log when asked for.
    assert [run["status"] for run in result.session.runs_of(2)] == ["error", "error"]


def test_the_streamed_0_3_document_is_the_whole_layout(workspace: Path, scripted, monkeypatch) -> None:
    server = scripted(PLAN)
    options = InlineRubricOptions(
        data_path="chats.jsonl", rubric="Is it helpful?", model="openai/judge-1", output="res/",
        base_url=server.base_url, number=2, concurrency=2, log_path="run.jsonl",
    )  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = run_rubric_eval(options)
    text = (workspace / "res" / "rubric_eval_result.json").read_text(encoding="utf-8")
    assert text == _as_written(result.document)
    assert list(result.document)[:7] == [
        "generated_at", "model", "rubric", "data_path", "number", "overall_statistics", "records",
    ]  # fmt: skip
    assert [r["label"] for r in result.document["records"]] == ["a", "b"]
    assert result.to_json()["completed_runs"] == 4


def _dataset_and_log(folder: Path, records: int) -> tuple[RecordSource, Path]:
    """``records`` chat records of ~2 KB and a log of one ~1.5 KB judged run each, written out of order."""
    folder.mkdir()
    data, log_path = folder / "chats.jsonl", folder / "log.jsonl"
    prompt = "why " * 500
    with data.open("w") as out:
        for i in range(records):
            messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": f"answer {i}"}]
            out.write(json.dumps({"messages": messages}) + "\n")
    with ResultsLog.create(log_path, {"rubric_id": "rubric"}, kind="rubric") as log:
        for i in reversed(range(records)):
            log.append(
                {
                    "row_key": str(i), "row_index": i, "run_index": 0, "model_tag": "", "success": True,
                    "scores": {"rubric": 0.5}, "status": "success", "score": 0.5, "duration_seconds": 0.1,
                    "explanation": "because " * 150, "usage": {"prompt_tokens": 10, "completion_tokens": 5},
                }
            )  # fmt: skip
    return RecordSource(data), log_path


def _peak_writing(source: RecordSource, log_path: Path, out: Path) -> tuple[int, DocumentTally]:
    head = payload_head(
        rubric_id="rubric", source_label="--rubric", model_info={}, number=1, config_path=None,
        data_path=source.path, overall={},
    )  # fmt: skip
    tally = DocumentTally()
    tracemalloc.start()
    try:
        rows = tally.rows(record_runs(source, log_path, 1))
        write_document(
            out, head, rows, lambda: {"completed_runs": tally.completed_runs}, layout_0_3=("m", "r")
        )
        return tracemalloc.get_traced_memory()[1], tally
    finally:
        tracemalloc.stop()


def test_writing_the_document_holds_one_record_not_the_records(tmp_path: Path) -> None:
    # Peak memory at two sizes (no timing): 1,800 more records of ~3.5 KB (dataset and log) add offsets only.
    small = _dataset_and_log(tmp_path / "small", 200)
    large = _dataset_and_log(tmp_path / "large", 2000)
    small_peak, _ = _peak_writing(*small, tmp_path / "small.json")
    large_peak, tally = _peak_writing(*large, tmp_path / "large.json")
    added = sum(p.stat().st_size for p in (large[0].path, large[1])) - sum(
        p.stat().st_size for p in (small[0].path, small[1])
    )
    assert large_peak - small_peak < added / 50, f"peak grew {large_peak - small_peak} for {added} bytes"
    written = json.loads((tmp_path / "large.json").read_text())
    assert tally.completed_runs == 2000 and written["completed_runs"] == 2000
    assert [r["index"] for r in written["records"]] == list(range(1, 2001))
    assert tally.health.successes == 2000 and tally.health.usage.prompt_tokens == 20000


def _noise_reference(runs: list[list[float]]) -> list[tuple[int, list[float]]]:
    """The noisiest records as judge_noise picked them before it streamed: a stable sort of every record."""
    from osmosis_ai.stats import score_statistics

    spreads = []
    for index, scores in enumerate(runs):
        if len(scores) >= 2:
            s = score_statistics(scores)
            spreads.append((float(s.sample_variance or 0.0), float(s.sample_std or 0.0), index, scores))
    return [(r, s) for _, d, r, s in sorted(spreads, key=lambda t: -t[0])[:3] if d > 0]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), max_size=4), max_size=12))
def test_the_streamed_noise_tally_picks_the_examples_a_sort_of_every_record_picks(runs) -> None:
    tally = NoiseTally()
    for index, scores in enumerate(runs):
        tally.add(index, [{"status": "success", "score": x} for x in scores])
    examples = [(e["record"], e["scores"]) for e in tally.result()["examples"]]
    assert examples == _noise_reference(runs)


@pytest.mark.parametrize("spelling", ["eval-rubric", "eval rubric"])
def test_the_json_envelope_streams_the_document_written(
    workspace: Path, scripted, capsys, monkeypatch, spelling
) -> None:
    from osmosis_ai.cli.main import main

    server = scripted(PLAN)
    if spelling == "eval-rubric":
        args = ["eval-rubric", "-r", "helpful", "-d", "data.jsonl", "-o", "out.json"]
    else:
        args = ["eval", "rubric", "-d", "chats.jsonl", "-r", "Is it helpful?", "--model", "openai/judge-1"]
        args += ["-o", "out.json"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code = main([*args, "--base-url", server.base_url, "-n", "2", "--max-retries", "0", "--json"])
    out = capsys.readouterr().out
    written = json.loads((workspace / "out.json").read_text(encoding="utf-8"))
    envelope = {"schema_version": 1, "data": written}
    # The same text emit_result writes for the whole document, one record at a time.
    assert out == json.dumps(envelope, ensure_ascii=False, allow_nan=False) + "\n"
    assert code == (1 if spelling == "eval-rubric" else 0)  # gamma's runs failed: exit 1
