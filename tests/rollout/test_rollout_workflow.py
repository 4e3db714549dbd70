"""The 0.3 classes and LocalBackend semantics, in-process."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from pydantic import ValidationError

from osmosis_ai.rollout import (
    AgentWorkflow,
    AgentWorkflowConfig,
    AgentWorkflowOutput,
    ConcurrencyConfig,
    ExecutionRequest,
    Grader,
    GraderContext,
    LocalBackend,
    RolloutSample,
    SampleSource,
    get_rollout_context,
)
from osmosis_ai.rollout.context import RolloutContext
from osmosis_ai.rollout.sample import RolloutStatus


class Echo(AgentWorkflow):
    async def run(self, ctx: Any) -> Any:
        return [*ctx.prompt, {"role": "assistant", "content": "4"}]


class Exact(Grader):
    async def grade(self, ctx: Any) -> None:
        ctx.set_reward(1.0 if ctx.sample.messages[-1]["content"] == ctx.label else 0.0)


def execute(backend: LocalBackend, label: str | None = "4", **kw: Any) -> tuple[Any, Any]:
    results: list[Any] = []
    request = ExecutionRequest(id="r1", prompt=[{"role": "user", "content": "2+2"}], label=label, **kw)
    asyncio.run(backend.execute(request, results.append, results.append))
    return results[0], results[1]


def test_set_reward_accepts_finite_numbers_only() -> None:
    ctx = GraderContext(label="4", sample=RolloutSample(messages=[]))
    ctx.set_reward(1)
    assert ctx.sample is not None and ctx.sample.reward == 1.0
    for bad in (math.nan, math.inf, "1", True):
        with pytest.raises(ValueError, match="finite"):
            ctx.set_reward(bad)
    with pytest.raises(ValueError, match="no sample"):
        GraderContext().set_reward(1.0)


def test_sample_trajectory_defaults_to_a_copy_and_none_disables_it() -> None:
    messages = [{"role": "user", "content": "x"}]
    assert RolloutSample(messages=messages).trajectory_messages == messages
    assert RolloutSample(messages=messages, trajectory_messages=None).trajectory_messages is None
    safe = RolloutSample(metrics={"a": 1.0, "b": math.nan, "c": object()}).json_safe_copy()
    assert safe.metrics == {"a": 1.0}


def test_output_and_configs_validate() -> None:
    with pytest.raises(ValidationError):
        AgentWorkflowOutput(messages=[], extra_field=1)
    with pytest.raises(ValidationError):
        AgentWorkflowOutput(metrics={"x": math.inf})
    with pytest.raises(ValidationError):
        ConcurrencyConfig(max_concurrent=0)
    assert AgentWorkflowConfig(name="w", temperature=0.1).temperature == 0.1


def test_rollout_context_is_ambient_and_takes_one_sample_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSMOSIS_CHAT_COMPLETIONS_URL", "http://127.0.0.1:9/v1")

    class Source(SampleSource):
        async def get_sample(self) -> RolloutSample:
            return RolloutSample(messages=[{"role": "assistant", "content": "4"}])

    assert get_rollout_context() is None
    with RolloutContext() as ctx:
        assert get_rollout_context() is ctx and ctx.chat_completions_url == "http://127.0.0.1:9/v1"
        ctx.set_sample_source(Source())
        with pytest.raises(ValueError, match="already registered"):
            ctx.set_sample_source(Source())
    assert get_rollout_context() is None


def test_local_backend_runs_workflow_then_grader() -> None:
    workflow, graded = execute(LocalBackend(workflow=Echo, grader=Exact, artifact_root=False))
    assert workflow.status is RolloutStatus.SUCCESS and graded.status is RolloutStatus.SUCCESS
    assert graded.sample.reward == 1.0 and graded.sample.label == "4"


def test_workflow_returning_none_takes_the_registered_sample() -> None:
    class ViaSource(AgentWorkflow):
        async def run(self, ctx: Any) -> None:
            class Source(SampleSource):
                async def get_sample(self) -> RolloutSample:
                    return RolloutSample(messages=[{"role": "assistant", "content": "4"}])

            context = get_rollout_context()
            assert context is not None
            context.set_sample_source(Source())

    _, graded = execute(LocalBackend(workflow=ViaSource, grader=Exact, artifact_root=False))
    assert graded.status is RolloutStatus.SUCCESS and graded.sample.reward == 1.0


def test_no_label_and_no_metadata_means_no_grading() -> None:
    workflow, graded = execute(LocalBackend(workflow=Echo, grader=Exact, artifact_root=False), label=None)
    assert workflow.status is RolloutStatus.SUCCESS
    assert graded.status is RolloutStatus.FAILURE and graded.err_category is None


def test_concurrency_limit_and_health() -> None:
    config = AgentWorkflowConfig(name="w", concurrency=ConcurrencyConfig(max_concurrent=2))
    backend = LocalBackend(workflow=Echo, workflow_config=config, artifact_root=False)
    assert backend.health()["concurrency"] == {"max_concurrent": 2, "queued": 0, "running": 0}
    assert LocalBackend(workflow=Echo, artifact_root=False).max_concurrent == 4


def test_module_attr_strings_resolve(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_rollout.py").write_text(
        "from osmosis_ai.rollout import AgentWorkflow\n"
        "class W(AgentWorkflow):\n"
        "    async def run(self, ctx):\n"
        "        return [{'role': 'assistant', 'content': 'hi'}]\n"
    )
    monkeypatch.chdir(tmp_path)
    backend = LocalBackend(workflow="my_rollout:W", artifact_root=tmp_path / "art")
    workflow, graded = execute(backend)
    assert workflow.status is RolloutStatus.SUCCESS and graded.status is RolloutStatus.FAILURE
    assert not (tmp_path / "art").exists()  # created only when a workflow asks for it


def test_artifacts_dir_is_created_on_first_use(tmp_path: Any) -> None:
    from osmosis_ai.rollout import AgentWorkflowContext

    target = tmp_path / "r1" / "artifacts"
    ctx = AgentWorkflowContext(prompt=[], artifacts_dir=target)
    assert not target.exists()
    assert ctx.artifacts_dir == target and target.is_dir()


def test_no_sample_is_a_validation_failure_and_the_grader_never_runs() -> None:
    class Nothing(AgentWorkflow):
        async def run(self, ctx: Any) -> None:
            return None

    class Boom(Grader):
        async def grade(self, ctx: Any) -> None:
            raise AssertionError("must not run")

    workflow, graded = execute(LocalBackend(workflow=Nothing, grader=Boom, artifact_root=False))
    assert workflow.status is RolloutStatus.SUCCESS and graded.status is RolloutStatus.FAILURE
    assert graded.err_category.value == "validation_error" and "no sample" in graded.err_message


def test_bad_output_metrics_are_one_line_validation_failures() -> None:
    class BadMetrics(AgentWorkflow):
        async def run(self, ctx: Any) -> Any:
            return AgentWorkflowOutput(messages=[], metrics={"x": math.nan})

    workflow, _ = execute(LocalBackend(workflow=BadMetrics, grader=Exact, artifact_root=False))
    assert workflow.err_category.value == "validation_error"
    assert "\n" not in workflow.err_message and "metrics.x" in workflow.err_message


def test_max_concurrent_overrides_the_default() -> None:
    assert LocalBackend(workflow=Echo, artifact_root=False, max_concurrent=None).max_concurrent is None


def test_the_workflow_sees_the_callers_context_and_leaving_it_restores_the_outer_one() -> None:
    seen: list[Any] = []

    class Look(AgentWorkflow):
        async def run(self, ctx: Any) -> Any:
            seen.append(get_rollout_context())
            return [*ctx.prompt, {"role": "assistant", "content": "4"}]

    async def main() -> Any:
        results: list[Any] = []
        request = ExecutionRequest(id="r1", prompt=[{"role": "user", "content": "2+2"}], label="4")
        with RolloutContext(rollout_id="r1") as caller:
            await LocalBackend(workflow=Look, grader=Exact).execute(request, results.append, results.append)
        return caller, results, get_rollout_context()

    caller, results, after = asyncio.run(main())
    assert seen == [caller] and results[1].status is RolloutStatus.SUCCESS
    assert after is None  # entered once, so the caller's exit resets it


@pytest.mark.parametrize("budget", [float("nan"), float("inf")])
def test_time_budgets_must_be_finite_in_the_backend_request_and_the_server_init(budget: float) -> None:
    from pydantic import ValidationError

    from osmosis_ai.rollout.sample import ExecutionRequest
    from osmosis_ai.rollout.server.protocol import RolloutInitRequest

    with pytest.raises(ValidationError, match="finite numbers of seconds"):
        ExecutionRequest(id="r1", prompt=[], agent_timeout_sec=budget)
    with pytest.raises(ValidationError, match="finite numbers of seconds"):
        RolloutInitRequest(
            initial_messages=[],
            chat_completions_url="http://127.0.0.1:1/v1",
            completion_callback_url="http://127.0.0.1:1/done",
            grader_timeout_sec=budget,
        )
    assert ExecutionRequest(id="r1", prompt=[], agent_timeout_sec=-1.0).agent_timeout_sec == -1.0
