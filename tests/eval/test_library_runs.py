"""The run kinds as library calls: typed options in, the result object out, no click imported on the way.

``eval``, ``eval run`` and an inline rubric evaluation run in a fresh interpreter against scripted model
servers on 127.0.0.1; the script asserts that ``click`` was never imported. The options objects refuse
what makes no sense when they are made, naming their own fields (the CLI shows its flags instead).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.errors import CLIError, OptionsError, RunError
from tests.eval.test_eval_run_inprocess import CONTEXT_MAIN
from tests.eval_run_workspace import calc_rows, make_workspace

AGENT = """
from osmosis_ai.rollout import RolloutAgentLoop


class Echo(RolloutAgentLoop):
    name = "echo"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        reply = await ctx.chat(ctx.request.messages)
        return ctx.complete([*ctx.request.messages, reply.message])


loop = Echo()
"""

SCORING = """
def exact(solution_str, ground_truth, extra_info=None):
    return float(solution_str.strip() == ground_truth)
"""

SCRIPT = r"""
import json, sys
from pathlib import Path

from osmosis_ai.eval.run_session import EvalRunOptions, run_eval_run
from osmosis_ai.eval.session import EvalOptions, run_eval
from osmosis_ai.rubric.run import InlineRubricOptions, run_rubric_eval
from osmosis_ai.runs.observer import RunObserver

model_url, judge_url, work, ws = sys.argv[1:5]
work = Path(work)


class Steps(RunObserver):
    def __init__(self):
        self.seen, self.records = [], 0

    def message(self, text):
        self.seen.append(text)

    def progress(self, total, *, title=None):
        observer = self

        class Count:
            def __call__(self, record, outcome):
                observer.records += 1

            def close(self):
                pass

        return Count()


steps = Steps()
evaluated = run_eval(
    EvalOptions(
        dataset=work / "data.jsonl", model="org/m", base_url=model_url, eval_fns=("scoring:exact",),
        module="agent:loop", n_runs=2, log_path=work / "eval.jsonl", output=work / "eval.json",
    ),
    steps,
)
ran = run_eval_run(
    EvalRunOptions(
        config_path=Path(ws) / "configs/eval/calc.toml", dataset_file=Path(ws) / "data/calc.jsonl",
        name="lib-1", base_url=model_url,
    )
)
judged = run_rubric_eval(
    InlineRubricOptions(
        data_path=work / "chat.jsonl", rubric="Is the reply polite?", model="openai/judge", base_url=judge_url,
        api_key="sk-local", output=work / "rubric.json", log_path=work / "rubric.jsonl",
    )
)
print(json.dumps({
    "eval": {
        "mean": evaluated.summary.summaries["scoring:exact"]["mean"],
        "runs": evaluated.summary.total_runs,
        "log": str(evaluated.log_path),
        "output": str(evaluated.output),
        "records_seen": steps.records,
        "loading": [line for line in steps.seen if line.startswith("Loading")],
    },
    "eval_run": {
        "status": ran.status, "pass_rate": ran.summary["pass_rate"], "succeeded": ran.counts.succeeded,
        "run_path": str(ran.run_path),
    },
    "rubric": {
        "average": judged.payload["overall_statistics"]["average"], "unscored": judged.unscored,
        "output": str(judged.output),
    },
    "click_loaded": sorted(name for name in sys.modules if name == "click" or name.startswith("click.")),
}))
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))}


def _rows(path: Path, answers: list[str]) -> Path:
    rows = [
        {"system_prompt": "Answer.", "user_prompt": f"q{i}", "ground_truth": a} for i, a in enumerate(answers)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_eval_eval_run_and_a_rubric_run_from_python_without_click(tmp_path: Path, scripted: Any) -> None:
    model = scripted({"default": {"content": "4", "usage": {"prompt_tokens": 3, "completion_tokens": 1}}})
    judge = scripted({"default": {"score": 0.75, "explanation": "polite enough"}})
    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.py").write_text(AGENT, encoding="utf-8")
    (work / "scoring.py").write_text(SCORING, encoding="utf-8")
    _rows(work / "data.jsonl", ["4", "5", "4"])
    chat = [{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}]}]
    (work / "chat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in chat), encoding="utf-8")
    ws = make_workspace(tmp_path / "ws", calc_rows(4))
    # A workflow asking the run's LLM layer in-process: one that imports httpx would load click itself
    # (httpx's command line imports it when installed).
    (ws / "rollouts/calc/main.py").write_text(CONTEXT_MAIN, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, model.base_url, judge.base_url, str(work), str(ws)],
        cwd=work, capture_output=True, text=True, timeout=300, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["click_loaded"] == []
    assert found["eval"]["mean"] == pytest.approx(2 / 3) and found["eval"]["runs"] == 6
    assert found["eval"]["records_seen"] == 6  # the observer's progress hook saw every run
    assert found["eval"]["loading"][:2] == [
        f"Loading dataset: {work / 'data.jsonl'}",
        "Loading agent: agent:loop",
    ]
    assert json.loads(Path(found["eval"]["output"]).read_text())["summary"]["total_runs"] == 6
    assert Path(found["eval"]["log"]).is_file()
    assert found["eval_run"]["status"] == "finished" and found["eval_run"]["succeeded"] == 4
    assert found["eval_run"]["pass_rate"] == 0.5  # ground truths alternate "4" and "5"
    assert (Path(found["eval_run"]["run_path"]) / "metrics.json").is_file()
    assert found["rubric"]["average"] == pytest.approx(0.75) and found["rubric"]["unscored"] == 0
    assert json.loads(Path(found["rubric"]["output"]).read_text())["rubric_id"] == "rubric"
    assert proc.stderr == ""  # library calls print nothing


@pytest.mark.parametrize(
    "make,fields,text",
    [
        (lambda: _eval(n_runs=0), ("n_runs",), "n_runs must be >= 1."),
        (lambda: _eval(module=None), ("module", "mcp_dir"), "Either module or mcp_dir is required."),
        (lambda: _eval(model=""), ("model",), "Missing required option(s): model"),
        (lambda: _eval(log_path="a", resume_path="b"), ("log_path", "resume_path"), "Use either log_path"),
        (lambda: _eval(baseline_base_url="http://x"), ("baseline_base_url", "baseline_api_key", "baseline_model"), "require baseline_model"),
    ],
)  # fmt: skip
def test_options_are_checked_when_made_and_name_their_fields(
    make: Any, fields: tuple[str, ...], text: str
) -> None:
    with pytest.raises(OptionsError) as refused:
        make()
    assert refused.value.fields == fields and text in str(refused.value)
    assert isinstance(refused.value, (CLIError, ValueError))  # established catches keep working


def test_an_error_renders_the_fields_with_a_front_ends_names() -> None:
    with pytest.raises(OptionsError) as refused:
        _eval(n_runs=0)
    assert refused.value.render({"n_runs": "--n"}) == "--n must be >= 1."


def test_eval_run_options_refuse_a_rollout_port_for_ray() -> None:
    from osmosis_ai.eval.run_session import EvalRunOptions
    from osmosis_ai.runs.backends import BackendOptions

    pytest.importorskip("ray")
    with pytest.raises(OptionsError, match="rollout_port applies to the local backend"):
        EvalRunOptions(config_path="c.toml", rollout_port=9000, backend=BackendOptions("ray"))


def test_a_dataset_breaking_the_contract_is_a_run_error_before_anything_runs(tmp_path: Path) -> None:
    from osmosis_ai.eval.session import run_eval

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"user_prompt": "q", "ground_truth": 4}) + "\n", encoding="utf-8")
    with pytest.raises(RunError, match="does not meet the eval dataset contract") as refused:
        run_eval(_eval(dataset=bad))
    assert str(bad) in str(refused.value) and "nothing was run" in str(refused.value)


def _eval(**changes: Any) -> Any:
    from osmosis_ai.eval.session import EvalOptions

    fields: dict[str, Any] = {"dataset": "d.jsonl", "model": "m", "eval_fns": ("a:b",), "module": "a:b"}
    return EvalOptions(**{**fields, **changes})
