"""The module paths of the established 0.3 `osmosis_ai.rollout` package that its `rollout init` scaffold,
docs and examples import: each resolves to the one implementation, without optional extras where 0.3
needs none."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import osmosis_ai.rollout as rollout

# A rollout written the way the established 0.3 `osmosis rollout init` scaffolds one (main.py).
SCAFFOLDED = """
from osmosis_ai.rollout.agent_workflow import AgentWorkflow
from osmosis_ai.rollout.backend.local import LocalBackend
from osmosis_ai.rollout.context import AgentWorkflowContext, GraderContext, get_rollout_context
from osmosis_ai.rollout.grader import Grader
from osmosis_ai.rollout.server import create_rollout_server
from osmosis_ai.rollout.types import AgentWorkflowOutput, Messages


class Workflow(AgentWorkflow):
    async def run(self, ctx: AgentWorkflowContext) -> Messages:
        return [*ctx.prompt, {"role": "assistant", "content": "4"}]


class Exact(Grader):
    async def grade(self, ctx: GraderContext) -> None:
        ctx.set_reward(float(ctx.sample.messages[-1]["content"] == ctx.label))


backend = LocalBackend(workflow=Workflow, grader=Exact, artifact_root=False)
app = create_rollout_server(backend=backend)
"""


def test_a_rollout_scaffolded_by_0_3_imports_and_builds_its_server(tmp_path: Path) -> None:
    import importlib.util

    (tmp_path / "main.py").write_text(SCAFFOLDED)
    # Loaded under a name of its own: other tests import modules called `main` too.
    spec = importlib.util.spec_from_file_location("scaffold_0_3_main", tmp_path / "main.py")
    assert spec is not None and spec.loader is not None
    main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(main)
    assert isinstance(main.backend, rollout.LocalBackend)
    # Served for real in tests/rollout/test_rollout_server_v03.py; here: the app has the 0.3 routes.
    assert {"/health", "/rollout", "/rollout/cancel"} <= {route.path for route in main.app.routes}


def test_leaf_paths_are_the_package_objects() -> None:
    from osmosis_ai.rollout import agent_workflow, grader, sample, types
    from osmosis_ai.rollout.types import config, output, protocol
    from osmosis_ai.rollout.types import sample as types_sample

    assert agent_workflow.AgentWorkflow is rollout.AgentWorkflow
    assert grader.Grader is rollout.Grader
    assert config.AgentWorkflowConfig is rollout.AgentWorkflowConfig is types.AgentWorkflowConfig
    assert output.AgentWorkflowOutput is rollout.AgentWorkflowOutput
    # In `types`, as in 0.3, RolloutStatus is the 0.3 enum (the package root keeps 0.2's, see the README).
    assert types.RolloutStatus is types_sample.RolloutStatus is sample.RolloutStatus
    assert {s.value for s in types.RolloutStatus} >= {"queued", "running", "success", "failure"}
    assert protocol.GraderStatus is rollout.GraderStatus
    assert set(types.__all__) >= {
        "RolloutInitRequest", "RolloutInitResponse", "RolloutCompleteRequest", "GraderInitRequest",
        "GraderInitResponse", "GraderCompleteRequest", "CancelRolloutsRequest", "RolloutStatusResponse",
    }  # fmt: skip


def _run_blocking(blocked: str, source: str) -> subprocess.CompletedProcess[str]:
    guard = f"""
        import builtins
        real = builtins.__import__
        def guarded(name, globals=None, locals=None, fromlist=(), level=0):
            if level == 0 and name.partition(".")[0] in {blocked}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return real(name, globals, locals, fromlist, level)
        builtins.__import__ = guarded
    """
    code = textwrap.dedent(guard) + textwrap.dedent(source)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_types_and_protocol_need_no_server_extra() -> None:
    result = _run_blocking(
        "{'fastapi', 'uvicorn', 'starlette'}",
        """
        from osmosis_ai.rollout.types import RolloutInitRequest, GraderCompleteRequest
        from osmosis_ai.rollout.agent_workflow import AgentWorkflow
        import osmosis_ai.rollout.server as server
        try:
            server.create_rollout_server
        except ImportError as exc:
            print("hint:", exc)
        """,
    )
    assert result.returncode == 0, result.stderr
    assert 'pip install "osmosis-ai[server]"' in result.stdout


def test_the_harbor_backend_says_why_it_is_absent() -> None:
    with pytest.raises(ImportError, match=r"not part of this osmosis-ai.*LocalBackend"):
        from osmosis_ai.rollout.backend.harbor import HarborBackend  # noqa: F401


def test_save_trajectory_writes_the_rollout_archive(tmp_path: Path) -> None:
    import asyncio

    from osmosis_ai.atif import check_trajectory
    from osmosis_ai.rollout.trajectory import save_trajectory
    from osmosis_ai.rollout.types import ExecutionResult, RolloutSample, RolloutStatus

    sample = RolloutSample(messages=[{"role": "assistant", "content": "4"}], label="4", reward=1.0)
    result = ExecutionResult(status=RolloutStatus.SUCCESS, sample=sample, extra_fields={"exit": 0})
    asyncio.run(save_trajectory(rollout_id="r9", result=result, request_label="4", artifact_root=tmp_path))
    document = json.loads((tmp_path / "r9" / "trajectory.json").read_text())
    assert document["session_id"] == "r9" and document["extra"]["osmosis"]["reward"] == 1.0
    assert check_trajectory(document).valid and document["schema_version"] == "ATIF-v1.7"
    assert json.loads((tmp_path / "r9" / "diagnostics.json").read_text()) == {"exit": 0}
    # Best effort: an unwritable root is logged, not raised (the controller already has the result).
    (tmp_path / "file").write_text("")
    asyncio.run(save_trajectory(rollout_id="r9", result=result, artifact_root=tmp_path / "file"))


def test_save_trajectory_as_0_3_code_calls_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 0.3 code imports it from the module path too, passes the controller's report as 0.3's pydantic
    # TrajectoryReport (a model of the same shape here) and leaves the root to the default, ~/.osmosis.
    import asyncio

    from pydantic import BaseModel

    from osmosis_ai.atif import check_trajectory
    from osmosis_ai.rollout import trajectory
    from osmosis_ai.rollout.trajectory.save import save_trajectory
    from osmosis_ai.rollout.types import ExecutionResult, RolloutSample, RolloutStatus

    class SampleReport(BaseModel):
        model_name: str | None = None
        llm_call_metrics: list[dict[str, Any]] = []

    class TrajectoryReport(BaseModel):
        model_name: str | None = None
        samples: dict[str, SampleReport] = {}

    assert save_trajectory is trajectory.save_trajectory
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("_OSMOSIS_ROLLOUT_ARTIFACT_ROOT", raising=False)
    messages = [{"role": "user", "content": "2+2"}, {"role": "assistant", "content": "4"}]
    result = ExecutionResult(status=RolloutStatus.SUCCESS, sample=RolloutSample(messages=messages))
    calls = [{"prompt_tokens": 7, "completion_tokens": 1, "logprobs": [-0.5]}]
    for rollout_id, report in [
        ("pydantic", TrajectoryReport(model_name="m", samples={"s": SampleReport(llm_call_metrics=calls)})),
        ("as-sent", {"model_name": "m", "samples": {"s": {"llm_call_metrics": calls}}}),
    ]:
        asyncio.run(save_trajectory(rollout_id=rollout_id, result=result, report=report))
        document = json.loads((tmp_path / ".osmosis" / rollout_id / "trajectory.json").read_text())
        assert check_trajectory(document).valid, check_trajectory(document)
        assert document["agent"]["model_name"] == "m"
        assert document["steps"][-1]["metrics"] == {
            "prompt_tokens": 7,
            "completion_tokens": 1,
            "logprobs": [-0.5],
        }
